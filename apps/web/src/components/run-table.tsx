import Link from 'next/link';
import type { ReactNode } from 'react';
import { formatDuration } from './format';
import { Time } from './time';
import { Empty, StateBadge } from './ui';

/** A run as the console reads it (dates may arrive as text). */
export interface ShownRun {
  id: string;
  dagId: string;
  dagVersion: number;
  state: string;
  trigger: string;
  scheduledAt: Date | string;
  startedAt: Date | string | null;
  endedAt: Date | string | null;
}

/** How long a run ran: to its end, or to store time now while it runs. */
function duration(run: ShownRun, now: Date | string): string {
  if (!run.startedAt) return '–';
  const end = run.endedAt ? new Date(run.endedAt) : new Date(now);
  return formatDuration(end.getTime() - new Date(run.startedAt).getTime());
}

/**
 * A page of runs: state, DAG, trigger, scheduled and started time, duration. The runs
 * page and a DAG's page show their pages with it; `sortHeader` is the scheduled column's
 * header where the page can change the order.
 */
export function RunTable(props: {
  runs: ShownRun[];
  now: Date | string;
  showDag: boolean;
  selectedId?: string | null;
  onSelect?: (runId: string) => void;
  sortHeader?: ReactNode;
  testId: string;
}) {
  if (props.runs.length === 0) return <Empty>No runs match.</Empty>;
  return (
    <div className="table-scroll">
      <table className="table compact" data-testid={props.testId}>
        <thead>
          <tr>
            <th>Run</th>
            <th>State</th>
            {props.showDag ? <th>DAG</th> : null}
            <th>Trigger</th>
            <th>{props.sortHeader ?? 'Scheduled'}</th>
            <th>Started</th>
            <th className="num">Duration</th>
          </tr>
        </thead>
        <tbody>
          {props.runs.map((r) => (
            <tr
              key={r.id}
              className={r.id === props.selectedId ? 'selected' : ''}
              onClick={props.onSelect ? () => props.onSelect!(r.id) : undefined}
              data-testid={`run-row-${r.id}`}
              data-state={r.state}
              data-trigger={r.trigger}
            >
              <td>
                <Link href={`/runs/${r.id}`}>#{r.id}</Link> <span className="muted small">v{r.dagVersion}</span>
              </td>
              <td>
                <StateBadge state={r.state} />
              </td>
              {props.showDag ? (
                <td>
                  <Link href={`/dags/${encodeURIComponent(r.dagId)}`}>{r.dagId}</Link>
                </td>
              ) : null}
              <td className="muted">{r.trigger}</td>
              <td className="muted small" data-testid="run-scheduled-at" data-at={new Date(r.scheduledAt).toISOString()}>
                <Time at={r.scheduledAt} />
              </td>
              <td className="muted small">{r.startedAt ? <Time at={r.startedAt} /> : '–'}</td>
              <td className="num">{duration(r, props.now)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Links to the previous and next page; a side with no page is shown disabled. */
export function RunPager({ previous, next, testId }: { previous: string | null; next: string | null; testId: string }) {
  return (
    <div className="pager" data-testid={testId}>
      {previous ? (
        <Link className="button" href={previous} data-testid={`${testId}-prev`}>
          ← Previous page
        </Link>
      ) : (
        <span className="button disabled" aria-disabled="true" data-testid={`${testId}-prev`} data-disabled="true">
          ← Previous page
        </span>
      )}
      {next ? (
        <Link className="button" href={next} data-testid={`${testId}-next`}>
          Next page →
        </Link>
      ) : (
        <span className="button disabled" aria-disabled="true" data-testid={`${testId}-next`} data-disabled="true">
          Next page →
        </span>
      )}
    </div>
  );
}
