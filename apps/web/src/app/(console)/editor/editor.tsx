'use client';

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import {
  Background,
  Controls,
  MarkerType,
  MiniMap,
  ReactFlow,
  useReactFlow,
  type Connection,
  type Edge,
  type EdgeChange,
  type NodeChange,
} from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import Link from 'next/link';
import { useRouter, useSearchParams } from 'next/navigation';
import { useCallback, useEffect, useMemo, useReducer, useRef, useState } from 'react';
import { parse as parseYaml } from 'yaml';
import { validateDag, type DagIssue } from '@fenceline/core';
import { useTRPC } from '@/client/trpc';
import { diffLines, DiffView, prettySpec } from '@/components/diff';
import { describeError, ErrorBox } from '@/components/errors';
import { useRole } from '@/components/shell';
import { useColorMode } from '@/components/color-mode';
import { useMeasured } from '@/components/measured';
import { nodeTypes, type TaskNode } from '@/components/task-node';
import { PageHeader } from '@/components/ui';
import {
  autoLayout,
  completePositions,
  emptySpec,
  freshTaskId,
  historyReducer,
  PALETTE,
  removeEdges,
  removeTasks,
  renameTask,
  toDraft,
  type DraftSpec,
  type DraftTask,
  type Snapshot,
} from './draft';
import { TaskPanel } from './task-panel';
import { DagPanel } from './dag-panel';
import { isTyping, useLeaveGuard } from './leave-guard';
import { PaletteAvailability } from './palette-availability';

export function Editor() {
  const trpc = useTRPC();
  const role = useRole();
  const queryClient = useQueryClient();
  const params = useSearchParams();
  const nav = useRouter();
  const editing = params.get('dag');
  const flow = useReactFlow();

  const [history, dispatch] = useReducer(historyReducer, { past: [], present: { spec: emptySpec(), positions: {} }, future: [] });
  const { spec, positions } = history.present;
  const [selectedTask, setSelectedTask] = useState<string | null>(null);
  const [selectedNodes, setSelectedNodes] = useState<Set<string>>(new Set());
  const [selectedEdges, setSelectedEdges] = useState<Set<string>>(new Set());
  const [jsonText, setJsonText] = useState(() => prettySpec(emptySpec()));
  const [jsonError, setJsonError] = useState<string | null>(null);
  const [importError, setImportError] = useState<string | null>(null);
  const jsonFocused = useRef(false);
  const [dims, onDimensions] = useMeasured();
  const fileInput = useRef<HTMLInputElement>(null);

  const apply = useCallback((next: Snapshot, record = true) => dispatch({ kind: 'apply', next, record }), []);
  const setSpec = useCallback((next: DraftSpec, record = true) => apply({ spec: next, positions: completePositions(next, history.present.positions) }, record), [apply, history.present.positions]);

  // Editing an existing DAG starts from its current version.
  const existing = useQuery(trpc.dags.get.queryOptions({ id: editing ?? '' }, { enabled: editing !== null }));
  // The stored DAG the draft was loaded from or last saved as; null for a DAG never saved.
  const [base, setBase] = useState<{ dagId: string; version: number } | null>(null);
  // The draft as last loaded or saved, to tell unsaved changes from none.
  const [savedText, setSavedText] = useState(() => prettySpec(emptySpec()));
  const loadedFor = useRef<string | null>(null);
  useEffect(() => {
    if (!existing.data || loadedFor.current === existing.data.dag.id) return;
    loadedFor.current = existing.data.dag.id;
    // A version's spec keeps the paused flag the DAG was created with; the DAG's own flag is its state now.
    const draft = toDraft({ ...existing.data.dag.spec, paused: existing.data.dag.paused });
    if (draft.ok) {
      dispatch({ kind: 'reset', present: { spec: draft.spec, positions: autoLayout(draft.spec) } });
      setBase({ dagId: existing.data.dag.id, version: existing.data.dag.version });
      setSavedText(prettySpec(draft.spec));
    }
  }, [existing.data]);
  const dirty = prettySpec(spec) !== savedText;
  useLeaveGuard(dirty);

  // The task panel is keyed by a number that follows a task through renames: keyed by the
  // task id, a rename remounted the panel and dropped the focus the author had just clicked.
  const panelKeys = useRef(new Map<string, number>());
  const nextPanelKey = useRef(1);
  const panelKeyFor = (taskId: string): number => {
    let key = panelKeys.current.get(taskId);
    if (key === undefined) {
      key = nextPanelKey.current++;
      panelKeys.current.set(taskId, key);
    }
    return key;
  };

  // The JSON view follows the graph, except while the author is typing in it.
  useEffect(() => {
    if (!jsonFocused.current) {
      setJsonText(prettySpec(spec));
      setJsonError(null);
    }
  }, [spec]);

  const validation = useMemo(() => validateDag(spec), [spec]);
  const issues: DagIssue[] = validation.ok ? [] : validation.issues;
  const problemTasks = useMemo(() => new Set(issues.flatMap((i) => i.taskIds ?? [])), [issues]);
  const cycleEdges = useMemo(() => {
    const out = new Set<string>();
    for (const issue of issues) {
      if (!issue.message.startsWith('cycle:') || !issue.taskIds) continue;
      const ids = issue.taskIds;
      ids.forEach((id, i) => out.add(`${id}->${ids[(i + 1) % ids.length]}`));
    }
    return out;
  }, [issues]);

  const nodes: TaskNode[] = spec.tasks.map((t) => ({
    id: t.id,
    type: 'task',
    position: positions[t.id] ?? { x: 0, y: 0 },
    selected: selectedNodes.has(t.id),
    measured: dims[t.id],
    data: { taskId: t.id, type: t.type, problem: problemTasks.has(t.id), editable: true },
  }));
  const known = new Set(spec.tasks.map((t) => t.id));
  const edges: Edge[] = spec.tasks.flatMap((t) =>
    t.dependsOn
      .filter((d) => known.has(d))
      .map((dep) => {
        const id = `${dep}->${t.id}`;
        return {
          id,
          source: dep,
          target: t.id,
          selected: selectedEdges.has(id),
          markerEnd: { type: MarkerType.ArrowClosed },
          className: cycleEdges.has(id) ? 'edge-problem' : '',
          data: { problem: cycleEdges.has(id) },
        };
      }),
  );

  const onNodesChange = useCallback(
    (changes: NodeChange<TaskNode>[]) => {
      onDimensions(changes as NodeChange[]);
      let nextPositions = positions;
      let moved = false;
      let dragEnded = false;
      const removed = new Set<string>();
      const selection = new Set(selectedNodes);
      for (const change of changes) {
        if (change.type === 'position' && change.position) {
          nextPositions = { ...nextPositions, [change.id]: change.position };
          moved = true;
          if (change.dragging === false) dragEnded = true;
        } else if (change.type === 'position' && change.dragging === false) {
          dragEnded = true;
        } else if (change.type === 'remove') {
          removed.add(change.id);
        } else if (change.type === 'select') {
          if (change.selected) selection.add(change.id);
          else selection.delete(change.id);
        }
      }
      if (removed.size > 0) {
        const next = removeTasks(spec, removed);
        apply({ spec: next, positions: Object.fromEntries(Object.entries(nextPositions).filter(([id]) => !removed.has(id))) });
        for (const id of removed) selection.delete(id);
        if (selectedTask && removed.has(selectedTask)) setSelectedTask(null);
      } else if (moved || dragEnded) {
        // A drag is one undo step: positions move live, and the step is recorded when it ends.
        apply({ spec, positions: nextPositions }, dragEnded);
      }
      setSelectedNodes(selection);
      const only = [...selection];
      if (only.length === 1) setSelectedTask(only[0]!);
    },
    [positions, selectedNodes, spec, apply, selectedTask, onDimensions],
  );

  const onEdgesChange = useCallback(
    (changes: EdgeChange[]) => {
      const selection = new Set(selectedEdges);
      const removed: { source: string; target: string }[] = [];
      for (const change of changes) {
        if (change.type === 'select') {
          if (change.selected) selection.add(change.id);
          else selection.delete(change.id);
        } else if (change.type === 'remove') {
          const [source, target] = change.id.split('->');
          if (source && target) removed.push({ source, target });
          selection.delete(change.id);
        }
      }
      if (removed.length > 0) setSpec(removeEdges(spec, removed));
      setSelectedEdges(selection);
    },
    [selectedEdges, spec, setSpec],
  );

  const onConnect = useCallback(
    (c: Connection) => {
      if (!c.source || !c.target) return;
      // An edge from A to B means B depends on A: work flows along the arrow.
      setSpec({
        ...spec,
        tasks: spec.tasks.map((t) => (t.id === c.target && !t.dependsOn.includes(c.source) ? { ...t, dependsOn: [...t.dependsOn, c.source] } : t)),
      });
    },
    [spec, setSpec],
  );

  const addTask = useCallback(
    (type: string, config: Record<string, unknown>, at?: { x: number; y: number }) => {
      const id = freshTaskId(spec, type === 'custom' ? 'task' : type);
      const task: DraftTask = { id, type: type === 'custom' ? 'my-handler' : type, config: structuredClone(config), dependsOn: [] };
      const count = spec.tasks.length;
      const position = at ?? { x: 40 + (count % 4) * 240, y: 60 + Math.floor(count / 4) * 120 };
      apply({ spec: { ...spec, tasks: [...spec.tasks, task] }, positions: { ...positions, [id]: position } });
      setSelectedTask(id);
      setSelectedNodes(new Set([id]));
    },
    [spec, positions, apply],
  );

  // A new task may land outside the view: refit once it has been measured, so it is in reach.
  const taskCount = spec.tasks.length;
  const lastCount = useRef(taskCount);
  useEffect(() => {
    if (taskCount > lastCount.current) {
      const timer = setTimeout(() => void flow.fitView({ padding: 0.25, maxZoom: 1, duration: 0 }), 60);
      lastCount.current = taskCount;
      return () => clearTimeout(timer);
    }
    lastCount.current = taskCount;
  }, [taskCount, flow]);

  const layout = useCallback(() => {
    apply({ spec, positions: autoLayout(spec) });
    requestAnimationFrame(() => void flow.fitView({ padding: 0.2 }));
  }, [spec, apply, flow]);

  const save = useMutation(
    trpc.dags.save.mutationOptions({
      onSuccess: (result, variables) => {
        // The editor now edits what it saved: the header, the unsaved-changes check and the
        // address all follow, so a reload opens this DAG rather than a blank one.
        setBase({ dagId: result.dagId, version: result.version });
        setSavedText(prettySpec(variables.spec as DraftSpec));
        if (editing !== result.dagId) {
          loadedFor.current = result.dagId;
          nav.replace(`/editor?dag=${encodeURIComponent(result.dagId)}`);
        }
        void queryClient.invalidateQueries({ queryKey: trpc.dags.versions.queryKey({ id: result.dagId }) });
        void queryClient.invalidateQueries({ queryKey: trpc.dags.get.queryKey({ id: result.dagId }) });
      },
    }),
  );
  const savedVersions = useQuery(trpc.dags.versions.queryOptions({ id: save.data?.dagId ?? '' }, { enabled: !!save.data }));
  const canSave = role === 'operator' && validation.ok && !save.isPending;
  const doSave = useCallback(() => {
    if (canSave) save.mutate({ spec });
  }, [canSave, save, spec]);

  // Ctrl+S in a field first leaves the field (a task's new id is committed on blur), then
  // saves on the next render, so the spec saved is the one the author sees.
  const [saveRequested, setSaveRequested] = useState(false);
  useEffect(() => {
    if (!saveRequested) return;
    setSaveRequested(false);
    doSave();
  }, [saveRequested, doSave]);

  // Editor shortcuts; Delete and Backspace are React Flow's own (deleteKeyCode below), which
  // React Flow ignores in fields too. None of them acts while the author types in a field.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const mod = e.ctrlKey || e.metaKey;
      if (mod && e.key.toLowerCase() === 's') {
        e.preventDefault();
        if (isTyping(e.target)) (e.target as HTMLElement).blur();
        setSaveRequested(true);
        return;
      }
      if (isTyping(e.target) || isTyping(document.activeElement)) return;
      if (mod && e.key.toLowerCase() === 'z') {
        e.preventDefault();
        dispatch({ kind: e.shiftKey ? 'redo' : 'undo' });
      } else if (mod && e.key.toLowerCase() === 'y') {
        e.preventDefault();
        dispatch({ kind: 'redo' });
      } else if (!mod && e.key.toLowerCase() === 'l') {
        layout();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [layout]);

  const onJsonChange = (text: string) => {
    setJsonText(text);
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      setJsonError(`JSON: ${(err as Error).message}`);
      return;
    }
    const draft = toDraft(parsed);
    if (!draft.ok) {
      setJsonError(draft.message);
      return;
    }
    setJsonError(null);
    setSpec(draft.spec);
  };

  const onImport = async (file: File) => {
    setImportError(null);
    try {
      const text = await file.text();
      const value: unknown = /\.ya?ml$/i.test(file.name) ? parseYaml(text) : JSON.parse(text);
      const draft = toDraft(value);
      if (!draft.ok) throw new Error(draft.message);
      apply({ spec: draft.spec, positions: autoLayout(draft.spec) });
      requestAnimationFrame(() => void flow.fitView({ padding: 0.2 }));
    } catch (err) {
      setImportError(`${file.name}: ${(err as Error).message}`);
    }
  };

  const onExport = () => {
    const blob = new Blob([`${JSON.stringify(spec, null, 2)}\n`], { type: 'application/json' });
    const url = URL.createObjectURL(blob);
    const a = document.createElement('a');
    a.href = url;
    a.download = `${spec.id || 'dag'}.json`;
    a.click();
    URL.revokeObjectURL(url);
  };

  const jobTypes = useQuery(trpc.dags.jobTypes.queryOptions(undefined, { refetchInterval: 10_000 }));
  const colorMode = useColorMode();
  const task = spec.tasks.find((t) => t.id === selectedTask) ?? null;
  const taskIndex = task ? spec.tasks.indexOf(task) : -1;
  const versions = savedVersions.data ?? [];
  const newVersion = versions.find((v) => v.version === save.data?.version);
  const previousVersion = versions.find((v) => v.version === (save.data?.version ?? 0) - 1);
  const saveError = save.error ? describeError(save.error) : null;
  const serverIssues = (saveError?.details?.issues as DagIssue[] | undefined) ?? [];

  return (
    <div className="editor-page">
      <PageHeader
        title={
          <>
            <span data-testid="editor-title">{base ? `Edit ${base.dagId}` : editing ? `Edit ${editing}` : 'New DAG'}</span>{' '}
            {dirty ? <span className="badge state-queued" data-testid="unsaved">unsaved changes</span> : null}
          </>
        }
        subtitle={
          <span data-testid="editor-subtitle">
            {!base
              ? 'Draw tasks and their dependencies; saving creates version 1.'
              : spec.id !== base.dagId
                ? `The id is no longer ${base.dagId}: saving stores this spec as the DAG ${spec.id || '(no id)'}.`
                : `Version ${base.version} is saved; saving a change creates version ${base.version + 1}, and runs in flight keep the version they started with.`}
          </span>
        }
        actions={
          <>
            <button onClick={() => dispatch({ kind: 'undo' })} disabled={history.past.length === 0} data-testid="undo" title="Undo (Ctrl+Z)">
              ↶ Undo
            </button>
            <button onClick={() => dispatch({ kind: 'redo' })} disabled={history.future.length === 0} data-testid="redo" title="Redo (Ctrl+Shift+Z)">
              ↷ Redo
            </button>
            <button onClick={layout} data-testid="auto-layout" title="Auto-layout (L)">
              ⇶ Layout
            </button>
            <button onClick={() => fileInput.current?.click()} data-testid="import">
              Import
            </button>
            <input
              ref={fileInput}
              type="file"
              accept=".json,.yaml,.yml,application/json"
              hidden
              data-testid="import-file"
              onChange={(e) => {
                const file = e.target.files?.[0];
                if (file) void onImport(file);
                e.target.value = '';
              }}
            />
            <button onClick={onExport} data-testid="export">
              Export
            </button>
            <button
              className="primary"
              onClick={doSave}
              disabled={!canSave}
              data-testid="save-dag"
              title={role !== 'operator' ? 'Viewers cannot save' : validation.ok ? 'Save (Ctrl+S)' : 'Fix the issues listed under Validation to save'}
            >
              {save.isPending ? 'Saving…' : 'Save'}
            </button>
          </>
        }
      />
      {importError ? <div className="error-box" role="alert"><span className="error-code">IMPORT</span><span className="error-message">{importError}</span></div> : null}
      <ErrorBox error={existing.error} what={`Loading ${editing}`} />
      {saveError ? (
        <div className="save-error">
          <ErrorBox error={save.error} what="Save refused" />
          {serverIssues.length > 0 ? (
            <ul className="issues">
              {serverIssues.map((i, k) => (
                <li key={k}>
                  <code>{i.path || '(spec)'}</code> {i.message}
                </li>
              ))}
            </ul>
          ) : null}
        </div>
      ) : null}
      {save.data ? (
        <div className="saved" data-testid="save-result">
          {save.data.created ? `Saved ${save.data.dagId} as version ${save.data.version}.` : `No change to the spec: ${save.data.dagId} is already this spec (version ${save.data.version}).`}
          {save.data.paused === null ? null : save.data.paused ? ' The DAG is now paused.' : ' The DAG is now resumed.'}{' '}
          <Link href={`/dags/${encodeURIComponent(save.data.dagId)}`} data-testid="open-saved-dag">
            Open the DAG →
          </Link>
          {save.data.created && newVersion ? (
            <details open={!!previousVersion}>
              <summary>{previousVersion ? `Diff against version ${previousVersion.version}` : 'First version'}</summary>
              <DiffView lines={diffLines(previousVersion ? prettySpec(previousVersion.spec) : '', prettySpec(newVersion.spec))} />
            </details>
          ) : null}
        </div>
      ) : null}
      <div className="editor">
        <aside className="palette" aria-label="Job types">
          <h3>Add a task</h3>
          {PALETTE.map((p) => (
            <button
              key={p.type}
              className="palette-item"
              data-testid={`palette-${p.type}`}
              draggable
              onDragStart={(e) => e.dataTransfer.setData('application/x-fenceline-task', p.type)}
              onClick={() => addTask(p.type, p.config)}
              title={p.hint}
            >
              <span className="palette-type">{p.label}</span>
              <span className="muted small">{p.hint}</span>
              <PaletteAvailability type={p.type} types={jobTypes.data} />
            </button>
          ))}
          <div className="shortcuts small muted">
            <div><kbd>Del</kbd> delete selection</div>
            <div><kbd>Ctrl Z</kbd> undo · <kbd>Ctrl ⇧ Z</kbd> redo</div>
            <div><kbd>L</kbd> auto-layout · <kbd>Ctrl S</kbd> save</div>
            <div>Drag from a task&apos;s right handle to another task&apos;s left handle: the second then depends on the first.</div>
          </div>
        </aside>
        <div
          className="canvas"
          data-testid="editor-canvas"
          onDragOver={(e) => {
            if (e.dataTransfer.types.includes('application/x-fenceline-task')) e.preventDefault();
          }}
          onDrop={(e) => {
            const type = e.dataTransfer.getData('application/x-fenceline-task');
            const item = PALETTE.find((p) => p.type === type);
            if (!item) return;
            e.preventDefault();
            addTask(item.type, item.config, flow.screenToFlowPosition({ x: e.clientX, y: e.clientY }));
          }}
        >
          <ReactFlow
            nodes={nodes}
            edges={edges}
            nodeTypes={nodeTypes}
            onNodesChange={onNodesChange}
            onEdgesChange={onEdgesChange}
            onConnect={onConnect}
            onNodeClick={(_, node) => setSelectedTask(node.id)}
            onPaneClick={() => setSelectedTask(null)}
            deleteKeyCode={['Delete', 'Backspace']}
            colorMode={colorMode}
            fitView
            fitViewOptions={{ maxZoom: 1 }}
            proOptions={{ hideAttribution: true }}
          >
            <Background gap={20} size={1} />
            <Controls />
            <MiniMap pannable zoomable />
          </ReactFlow>
          {spec.tasks.length === 0 ? <div className="canvas-hint">Pick a job type on the left to add the first task.</div> : null}
        </div>
        <aside className="side-panel">
          {task ? (
            <TaskPanel
              key={panelKeyFor(task.id)}
              task={task}
              index={taskIndex}
              allIds={spec.tasks.map((t) => t.id)}
              issues={issues.filter((i) => i.path === `tasks.${taskIndex}` || i.path.startsWith(`tasks.${taskIndex}.`) || (i.taskIds?.includes(task.id) ?? false))}
              onChange={(next) => setSpec({ ...spec, tasks: spec.tasks.map((t) => (t.id === task.id ? next : t)) })}
              onRename={(to) => {
                const key = panelKeyFor(task.id);
                panelKeys.current.delete(task.id);
                panelKeys.current.set(to, key);
                setSpec(renameTask(spec, task.id, to));
                setSelectedTask(to);
                setSelectedNodes(new Set([to]));
              }}
              onDelete={() => {
                setSpec(removeTasks(spec, new Set([task.id])));
                setSelectedTask(null);
              }}
            />
          ) : (
            <DagPanel spec={spec} issues={issues.filter((i) => !i.path.startsWith('tasks.'))} onChange={(next) => setSpec(next)} />
          )}
        </aside>
      </div>
      <div className="editor-bottom">
        <section className="card">
          <div className="card-head">
            <h2>Validation</h2>
            {validation.ok ? <span className="badge state-succeeded" data-testid="validation-ok">valid</span> : <span className="badge state-failed" data-testid="issue-count">{issues.length} {issues.length === 1 ? 'issue' : 'issues'}</span>}
          </div>
          {issues.length > 0 ? (
            <ul className="issues" data-testid="validation-issues">
              {issues.map((i, k) => (
                <li key={k} data-testid={i.message.startsWith('cycle:') ? 'issue-cycle' : 'issue'}>
                  <code>{i.path || '(spec)'}</code> {i.message}
                </li>
              ))}
            </ul>
          ) : (
            <div className="muted">The spec passes every check the store makes on save.</div>
          )}
        </section>
        <section className="card json-card">
          <div className="card-head">
            <h2>Spec (JSON, editable)</h2>
            {jsonError ? <span className="badge state-failed">not applied</span> : <span className="muted small">edits apply to the graph as you type</span>}
          </div>
          <textarea
            className="json"
            data-testid="spec-json"
            spellCheck={false}
            value={jsonText}
            onFocus={() => (jsonFocused.current = true)}
            onBlur={() => {
              jsonFocused.current = false;
              if (!jsonError) setJsonText(prettySpec(spec));
            }}
            onChange={(e) => onJsonChange(e.target.value)}
          />
          {jsonError ? <div className="inline-error" data-testid="json-error">{jsonError}</div> : null}
        </section>
      </div>
    </div>
  );
}
