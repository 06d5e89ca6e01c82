'use client';

import { useQuery } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { memo, useEffect, useMemo, useRef, useState, type KeyboardEvent, type MouseEvent } from 'react';
import { LIVE_MS, useTRPC } from '@/client/trpc';
import { gridRows, groupCell, STATE_MARK, stateWord, type GridRow } from '@/lib/grid-rows';
import { ErrorBox } from './errors';
import { formatDuration, formatTime } from './format';
import { DurationSparkline } from './sparkline';
import { useShownZone } from './time';
import { Card, Empty } from './ui';

/** The sizes the grid offers, in runs; the store reads at most the largest. */
export const GRID_SIZES = [10, 25, 50, 100] as const;
const DEFAULT_SIZE = 25;
/** A grid whose runs have all ended changes only when a run starts: it is read again this often. */
const SETTLED_MS = 10_000;

/**
 * Column widths in pixels, as the style sheet sets them: the table is laid out fixed from
 * its first row, so opening a group of two hundred tasks by a hundred runs does not make
 * the browser measure twenty thousand cells to size the columns.
 */
const TASK_WIDTH = 220;
const TREND_WIDTH = 120;
const CELL_WIDTH = 16;

/** A column: one run, as every cell of it names it. */
interface Column {
  id: string;
  state: string;
  when: string;
  durationMs: number | null;
  states: (string | null)[];
  attempts: number[];
  durationsMs: (number | null)[];
}

/**
 * The DAG page's grid of recent runs by task, as a plain table: the last runs as columns,
 * oldest on the left and newest on the right; tasks as rows, grouped as the graph groups
 * them; each cell the state of the task's job in that run, in colour and by a mark, and a
 * link to the run page with that job open. Above each column a bar as tall as the run took;
 * beside each task its durations over the shown runs. The cells are one tab stop: the
 * arrow keys move between them (Home and End to a row's ends).
 */
export function RunGridCard({ dagId }: { dagId: string }) {
  const trpc = useTRPC();
  const [size, setSize] = useState<number>(DEFAULT_SIZE);
  const [open, setOpen] = useState<ReadonlySet<string>>(new Set());
  const grid = useQuery(
    trpc.dags.grid.queryOptions(
      { id: dagId, runs: size },
      {
        // Read every second while a shown run is under way; a settled grid only waits for the next run.
        refetchInterval: (q) => (q.state.error ? false : q.state.data?.runs.some((r) => r.state === 'queued' || r.state === 'running') ? LIVE_MS : SETTLED_MS),
      },
    ),
  );
  const zone = useShownZone();
  const router = useRouter();
  // The cells are plain links (twenty thousand next/link components would each watch the
  // viewport to prefetch): one handler on the table moves within the console without a reload.
  const follow = (e: MouseEvent<HTMLTableElement>) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    const link = (e.target as HTMLElement).closest('a[href]');
    if (!link) return;
    e.preventDefault();
    router.push(link.getAttribute('href')!);
  };
  const data = grid.data;
  const rows = useMemo(() => (data ? gridRows(data.tasks, open) : []), [data, open]);
  const columns = useMemo<Column[]>(
    () =>
      (data?.runs ?? [])
        .slice()
        .reverse()
        .map((r) => ({
          id: r.id,
          state: r.state,
          when: formatTime(r.scheduledAt, zone),
          durationMs: r.durationMs,
          states: r.states,
          attempts: r.attempts,
          durationsMs: r.durationsMs,
        })),
    [data, zone],
  );
  const longest = Math.max(1, ...columns.map((c) => c.durationMs ?? 0));
  const table = useRef<HTMLTableElement>(null);
  // The grid keeps one tab stop: where the arrow keys left it, or, once that cell is gone (a
  // group closed, the run dropped off the end), the newest run's bar.
  useEffect(() => {
    const t = table.current;
    if (!t) return;
    const stops = [...t.querySelectorAll<HTMLElement>('[data-r][tabindex="0"]')];
    if (stops.length === 1) return;
    for (const s of stops.slice(1)) s.tabIndex = -1;
    if (stops.length === 0) {
      const bars = t.querySelectorAll<HTMLElement>('thead [data-c]');
      const newest = bars[bars.length - 1];
      if (newest) newest.tabIndex = 0;
    }
  });
  const toggle = (key: string) =>
    setOpen((was) => {
      const next = new Set(was);
      if (next.has(key)) next.delete(key);
      else next.add(key);
      return next;
    });

  return (
    <Card
      title="Runs by task"
      actions={
        <label className="small">
          Runs shown{' '}
          <select data-testid="grid-size" value={size} onChange={(e) => setSize(Number(e.target.value))}>
            {GRID_SIZES.map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </label>
      }
    >
      <ErrorBox error={grid.error} what="Reading the grid of runs" />
      {data && data.runs.length === 0 ? <Empty>No runs yet.</Empty> : null}
      {data && data.runs.length > 0 ? (
        <>
          <p className="small muted" id="run-grid-help">
            Oldest run on the left, newest on the right. Each cell is the task&apos;s job in that run: ✓ succeeded, ✕ failed, ↑ upstream failed, ▸ running, ○ ready, · waiting, –
            cancelled, » skipped. Arrow keys move between cells; Enter opens the job.
          </p>
          <div className="table-scroll run-grid-scroll">
            <table
              ref={table}
              className="run-grid"
              style={{ width: `${TASK_WIDTH + TREND_WIDTH + columns.length * (CELL_WIDTH + 2) + 6}px` }}
              data-testid="run-grid"
              aria-describedby="run-grid-help"
              onKeyDown={moveFocus}
              onClick={follow}
            >
              <caption className="sr-only">
                Last {columns.length} runs of {dagId} by task
              </caption>
              <thead>
                <tr>
                  <th scope="col" className="grid-task">
                    Task
                  </th>
                  <th scope="col" className="grid-trend">
                    Duration
                  </th>
                  {columns.map((c, k) => (
                    <th key={c.id} scope="col" className="grid-run">
                      <a
                        href={`/runs/${c.id}`}
                        className={`grid-bar state-${c.state}`}
                        style={{ height: `${6 + Math.round(((c.durationMs ?? 0) / longest) * 34)}px` }}
                        aria-label={`run ${c.when}, ${c.state}${c.durationMs !== null ? `, took ${formatDuration(c.durationMs)}` : ''}`}
                        title={`run #${c.id} · ${c.when} · ${c.state} · ${formatDuration(c.durationMs)}`}
                        data-r={-1}
                        data-c={k}
                        data-testid={`grid-run-${c.id}`}
                        data-duration-ms={c.durationMs ?? ''}
                        tabIndex={-1}
                      />
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {rows.map((row, r) => (
                  <GridRowView key={row.key} row={row} r={r} columns={columns} open={row.kind === 'group' && open.has(row.key)} onToggle={toggle} sig={signature(row, columns)} />
                ))}
              </tbody>
            </table>
          </div>
        </>
      ) : null}
    </Card>
  );
}

/** What a row draws, as text: a row redraws only when its own cells change, not on every poll. */
function signature(row: GridRow, columns: Column[]): string {
  const members = row.kind === 'task' ? [row.task] : row.members;
  let sig = '';
  for (const c of columns) {
    sig += `${c.id}:${c.when}|`;
    for (const i of members) sig += `${c.states[i] ?? ''}${c.attempts[i]}${row.kind === 'task' ? `/${c.durationsMs[i] ?? ''}` : ''},`;
  }
  return sig;
}

const GridRowView = memo(
  function GridRowView({ row, r, columns, open, onToggle }: { row: GridRow; r: number; columns: Column[]; open: boolean; onToggle: (key: string) => void; sig: string }) {
    if (row.kind === 'group') {
      const name = `${row.first} … ${row.last} (${row.members.length} tasks)`;
      return (
        <tr className="grid-group" data-testid={`grid-row-${row.key}`}>
          <th scope="row" className="grid-task">
            <button type="button" className="link" aria-expanded={open} onClick={() => onToggle(row.key)} data-testid={`grid-toggle-${row.key}`}>
              <span aria-hidden="true">{open ? '▾' : '▸'}</span> {name}
            </button>
          </th>
          <td className="grid-trend" />
          {columns.map((c, k) => {
            const cell = groupCell(c.states, row.members);
            return (
              <td key={c.id}>
                <a
                  href={`/runs/${c.id}`}
                  className={`grid-cell state-${cell.state}`}
                  aria-label={`${name}, run ${c.when}, ${cell.counts}`}
                  title={`${name} · ${c.when} · ${cell.counts}`}
                  data-r={r}
                  data-c={k}
                  data-state={cell.state}
                  tabIndex={-1}
                >
                  {STATE_MARK[cell.state]}
                </a>
              </td>
            );
          })}
        </tr>
      );
    }
    const durations = columns.map((c) => c.durationsMs[row.task] ?? null);
    return (
      <tr data-testid={`grid-row-${row.id}`} className={row.inGroup ? 'grid-member' : undefined}>
        <th scope="row" className="grid-task">
          <code>{row.id}</code>
          {row.current ? null : <span className="small muted"> (no longer in the DAG)</span>}
        </th>
        <td className="grid-trend">
          <DurationSparkline values={durations} what={row.id} testId={`grid-trend-${row.id}`} />
        </td>
        {columns.map((c, k) => {
          const state = c.states[row.task] ?? null;
          if (state === null) {
            return (
              <td key={c.id}>
                <span className="grid-cell state-none" title={`${row.id} · ${c.when} · no job`} data-state="none" />
              </td>
            );
          }
          const tries = c.attempts[row.task]! > 1 ? `, attempt ${c.attempts[row.task]}` : '';
          const took = c.durationsMs[row.task] !== null ? `, took ${formatDuration(c.durationsMs[row.task])}` : '';
          const label = `${row.id}, run ${c.when}, ${stateWord(state)}${tries}${took}`;
          return (
            <td key={c.id}>
              <a
                href={`/runs/${c.id}?task=${encodeURIComponent(row.id)}`}
                className={`grid-cell state-${state}`}
                aria-label={label}
                title={label}
                data-r={r}
                data-c={k}
                data-state={state}
                data-testid={`grid-cell-${row.id}-${c.id}`}
                tabIndex={-1}
              >
                {STATE_MARK[state]}
              </a>
            </td>
          );
        })}
      </tr>
    );
  },
  (a, b) => a.sig === b.sig && a.r === b.r && a.open === b.open && a.row.key === b.row.key && a.onToggle === b.onToggle,
);

const MOVES: Record<string, [number, number]> = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };

/**
 * Roving focus over the grid's links: an arrow key moves to the nearest link that way,
 * past cells with no job; Home and End go to the ends of the row. The link moved to becomes
 * the grid's one tab stop, so Tab leaves the grid and Shift+Tab comes back to it.
 */
function moveFocus(e: KeyboardEvent<HTMLTableElement>): void {
  const from = e.target as HTMLElement;
  if (from.dataset.r === undefined || from.dataset.c === undefined) return;
  const table = e.currentTarget;
  const r = Number(from.dataset.r);
  const c = Number(from.dataset.c);
  const at = (row: number, col: number) => table.querySelector<HTMLElement>(`[data-r="${row}"][data-c="${col}"]`);
  const last = table.querySelectorAll('thead [data-c]').length - 1;
  let to: HTMLElement | null = null;
  if (e.key === 'Home' || e.key === 'End') {
    const cells = [...table.querySelectorAll<HTMLElement>(`[data-r="${r}"]`)];
    to = (e.key === 'Home' ? cells[0] : cells[cells.length - 1]) ?? null;
  } else if (MOVES[e.key]) {
    const [dr, dc] = MOVES[e.key]!;
    const rowCount = table.querySelectorAll('tbody tr').length;
    for (let row = r + dr, col = c + dc; row >= -1 && row < rowCount && col >= 0 && col <= last; row += dr, col += dc) {
      to = at(row, col);
      if (to) break;
    }
  } else return;
  e.preventDefault();
  if (!to) return;
  from.tabIndex = -1;
  to.tabIndex = 0;
  to.focus();
}
