import { layeredPositions } from '@/components/layout';

/** A task as the editor holds it: the spec's fields, unvalidated, in the author's order. */
export interface DraftTask {
  id: string;
  type: string;
  config: Record<string, unknown>;
  dependsOn: string[];
  [field: string]: unknown;
}

export interface DraftSpec {
  id: string;
  tasks: DraftTask[];
  [field: string]: unknown;
}

export type Positions = Record<string, { x: number; y: number }>;

/** One undoable state of the editor: the spec and where its tasks are drawn. */
export interface Snapshot {
  spec: DraftSpec;
  positions: Positions;
}

export interface History {
  past: Snapshot[];
  present: Snapshot;
  future: Snapshot[];
}

/** Enough undo for a long session without holding every keystroke of a big spec forever. */
const MAX_UNDO = 200;

export type HistoryAction = { kind: 'apply'; next: Snapshot; record: boolean } | { kind: 'undo' } | { kind: 'redo' } | { kind: 'reset'; present: Snapshot };

export function historyReducer(h: History, action: HistoryAction): History {
  switch (action.kind) {
    case 'apply':
      return action.record ? { past: [...h.past, h.present].slice(-MAX_UNDO), present: action.next, future: [] } : { ...h, present: action.next };
    case 'undo': {
      const previous = h.past[h.past.length - 1];
      return previous ? { past: h.past.slice(0, -1), present: previous, future: [h.present, ...h.future] } : h;
    }
    case 'redo': {
      const next = h.future[0];
      return next ? { past: [...h.past, h.present], present: next, future: h.future.slice(1) } : h;
    }
    case 'reset':
      return { past: [], present: action.present, future: [] };
  }
}

/** The job types the palette offers, with a config that passes their schema to start from. */
export const PALETTE: { type: string; label: string; config: Record<string, unknown>; hint: string }[] = [
  { type: 'noop', label: 'No-op', config: {}, hint: 'does nothing; a join or a marker' },
  { type: 'sleep', label: 'Sleep', config: { durationMs: 1000 }, hint: 'waits durationMs' },
  { type: 'shell', label: 'Shell', config: { command: 'echo', args: ['hello'] }, hint: 'runs a command' },
  { type: 'http', label: 'HTTP', config: { method: 'GET', url: 'https://example.com/' }, hint: 'calls a URL' },
  { type: 'custom', label: 'Named handler', config: {}, hint: 'a task type a worker defines' },
];

export function emptySpec(): DraftSpec {
  return { id: 'new-dag', name: 'New DAG', schedule: { kind: 'manual' }, tasks: [] };
}

export function freshTaskId(spec: DraftSpec, type: string): string {
  const taken = new Set(spec.tasks.map((t) => t.id));
  for (let n = 1; ; n++) {
    const id = `${type}-${n}`;
    if (!taken.has(id)) return id;
  }
}

/** Positions for every task: kept where known, laid out for the rest. */
export function completePositions(spec: DraftSpec, positions: Positions): Positions {
  const missing = spec.tasks.filter((t) => !positions[t.id]);
  if (missing.length === 0) return positions;
  const laid = layeredPositions(spec.tasks.map((t) => ({ id: t.id, dependsOn: Array.isArray(t.dependsOn) ? t.dependsOn : [] })));
  const out: Positions = { ...positions };
  for (const t of missing) out[t.id] = laid.get(t.id) ?? { x: 0, y: 0 };
  return out;
}

export function autoLayout(spec: DraftSpec): Positions {
  const laid = layeredPositions(spec.tasks.map((t) => ({ id: t.id, dependsOn: t.dependsOn })));
  return Object.fromEntries(spec.tasks.map((t) => [t.id, laid.get(t.id) ?? { x: 0, y: 0 }]));
}

/** Reads a spec typed or imported by hand into the editor's shape, or says what is wrong with it. */
export function toDraft(value: unknown): { ok: true; spec: DraftSpec } | { ok: false; message: string } {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { ok: false, message: 'The spec must be a JSON object.' };
  const record = value as Record<string, unknown>;
  if (!Array.isArray(record.tasks)) return { ok: false, message: 'The spec needs a "tasks" array.' };
  const tasks = record.tasks.map((t, i): DraftTask => {
    const task = (typeof t === 'object' && t !== null ? t : {}) as Record<string, unknown>;
    return {
      ...task,
      id: typeof task.id === 'string' ? task.id : `task-${i + 1}`,
      type: typeof task.type === 'string' ? task.type : 'noop',
      config: typeof task.config === 'object' && task.config !== null && !Array.isArray(task.config) ? (task.config as Record<string, unknown>) : {},
      dependsOn: Array.isArray(task.dependsOn) ? task.dependsOn.filter((d): d is string => typeof d === 'string') : [],
    };
  });
  return { ok: true, spec: { ...record, id: typeof record.id === 'string' ? record.id : '', tasks } };
}

/** Renames a task and every dependency on it, so a rename never leaves a dangling edge. */
export function renameTask(spec: DraftSpec, from: string, to: string): DraftSpec {
  return {
    ...spec,
    tasks: spec.tasks.map((t) => ({ ...t, id: t.id === from ? to : t.id, dependsOn: t.dependsOn.map((d) => (d === from ? to : d)) })),
  };
}

export function removeTasks(spec: DraftSpec, ids: Set<string>): DraftSpec {
  return { ...spec, tasks: spec.tasks.filter((t) => !ids.has(t.id)).map((t) => ({ ...t, dependsOn: t.dependsOn.filter((d) => !ids.has(d)) })) };
}

export function removeEdges(spec: DraftSpec, edges: { source: string; target: string }[]): DraftSpec {
  return {
    ...spec,
    tasks: spec.tasks.map((t) => {
      const drop = new Set(edges.filter((e) => e.target === t.id).map((e) => e.source));
      return drop.size === 0 ? t : { ...t, dependsOn: t.dependsOn.filter((d) => !drop.has(d)) };
    }),
  };
}
