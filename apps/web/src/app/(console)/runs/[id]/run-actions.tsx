'use client';

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { LIVE_MS, useTRPC } from '@/client/trpc';
import { ErrorBox } from '@/components/errors';
import { canOperate, useRole } from '@/components/shell';
import { Time } from '@/components/time';
import { fingerprintOf, RequestKeys } from '@/lib/request-keys';

type Kind = 'cancel' | 'clear' | 'retry_failed' | 'mark_success' | 'mark_failed';
type Ask = { kind: Kind; taskIds?: string[]; downstream?: boolean; reason?: string | null };

const OPEN_RUN = new Set(['queued', 'running']);
const ENDED_JOB = new Set(['succeeded', 'failed', 'upstream_failed', 'cancelled']);

/**
 * Sends an operator action and follows it until the shard's leader applied it. Repeats of one
 * action (a double click, a second click soon after the answer, a retry) carry one request
 * key, so they are one action.
 */
function useRunAction(runId: string) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [actionId, setActionId] = useState<string | null>(null);
  const [keys] = useState(() => new RequestKeys());
  const request = useMutation(
    trpc.runActions.request.mutationOptions({
      onSuccess: (a) => {
        setActionId(a.id);
        void queryClient.invalidateQueries({ queryKey: trpc.runActions.list.queryKey({ runId }) });
      },
    }),
  );
  const followed = useQuery(
    trpc.runActions.get.queryOptions({ actionId: actionId ?? '0' }, { enabled: actionId !== null, refetchInterval: (q) => (q.state.data?.state === 'applied' ? false : LIVE_MS) }),
  );
  const send = (ask: Ask) => {
    const requestKey = keys.keyFor(fingerprintOf({ runId, ...ask }));
    request.mutate({ runId, ...ask, requestKey }, { onSettled: () => keys.answered(requestKey) });
  };
  return { send, request, followed: actionId ? followed.data : undefined };
}

function ActionStatus({ action }: { action: { state: string; kind: string; result: { changed: { taskId: string }[]; note?: string; runState: string } | null } | undefined }) {
  if (!action) return null;
  if (action.state !== 'applied' || !action.result)
    return (
      <div className="muted small" data-testid="action-status">
        {action.kind.replace('_', ' ')}: waiting for the shard&apos;s leader…
      </div>
    );
  const n = action.result.changed.length;
  return (
    <div className="muted small" data-testid="action-status">
      {action.kind.replace('_', ' ')} applied: {n > 0 ? `${n} task${n === 1 ? '' : 's'} changed` : (action.result.note ?? 'nothing changed')}; run is {action.result.runState}
    </div>
  );
}

/** The run's own actions: cancel it, retry it from its failures, and the history of actions. */
export function RunActionBar({ runId, runState, failed }: { runId: string; runState: string; failed: number }) {
  const role = useRole();
  const trpc = useTRPC();
  const { send, request, followed } = useRunAction(runId);
  const history = useQuery(trpc.runActions.list.queryOptions({ runId }, { refetchInterval: LIVE_MS }));
  const operator = canOperate(role);
  return (
    <div className="run-actions" data-testid="run-actions">
      {operator ? (
        <div className="row">
          <button
            data-testid="cancel-run"
            disabled={!OPEN_RUN.has(runState) || request.isPending}
            onClick={() => window.confirm(`Cancel run #${runId}? Running jobs are stopped and their results refused.`) && send({ kind: 'cancel' })}
          >
            ■ Cancel run
          </button>
          <button data-testid="retry-failed" disabled={failed === 0 || request.isPending} onClick={() => send({ kind: 'retry_failed' })}>
            ↻ Retry from failure
          </button>
        </div>
      ) : null}
      <ErrorBox error={request.error} what="Run action" />
      <ActionStatus action={followed} />
      {history.data && history.data.length > 0 ? (
        <details className="small">
          <summary>
            {history.data.length} operator action{history.data.length === 1 ? '' : 's'}
          </summary>
          <ul data-testid="action-history">
            {history.data.map((a) => (
              <li key={a.id}>
                <Time at={a.createdAt} /> {a.kind.replace('_', ' ')}
                {a.taskIds.length > 0 ? ` ${a.taskIds.join(', ')}` : ''}
                {a.downstream ? ' and downstream' : ''} by {a.requestedBy}
                {a.reason ? `: ${a.reason}` : ''} · {a.state === 'applied' ? `${a.result?.changed.length ?? 0} changed` : 'pending'}
              </li>
            ))}
          </ul>
        </details>
      ) : null}
    </div>
  );
}

/** One task's actions, on the job panel: cancel, clear, mark success or failed. */
export function JobActions({ runId, taskId, state }: { runId: string; taskId: string; state: string }) {
  const role = useRole();
  const { send, request, followed } = useRunAction(runId);
  const [downstream, setDownstream] = useState(false);
  const [reason, setReason] = useState('');
  if (!canOperate(role)) return null;
  const ended = ENDED_JOB.has(state);
  const mark = (kind: 'mark_success' | 'mark_failed') => {
    if (reason.trim() === '') {
      window.alert('Say why in the reason field: marking a task by hand needs a reason.');
      return;
    }
    send({ kind, taskIds: [taskId], reason });
  };
  return (
    <div className="job-actions" data-testid="job-actions">
      <div className="row">
        <button data-testid="cancel-task" disabled={ended || request.isPending} onClick={() => send({ kind: 'cancel', taskIds: [taskId], downstream })}>
          Cancel task
        </button>
        <button data-testid="clear-task" disabled={!ended || request.isPending} onClick={() => send({ kind: 'clear', taskIds: [taskId], downstream })}>
          Clear (run again)
        </button>
        <label className="small">
          <input type="checkbox" data-testid="with-downstream" checked={downstream} onChange={(e) => setDownstream(e.target.checked)} /> and downstream
        </label>
      </div>
      <div className="row">
        <input data-testid="mark-reason" placeholder="Reason (needed to mark)" value={reason} maxLength={1000} onChange={(e) => setReason(e.target.value)} />
        <button data-testid="mark-success" disabled={state === 'succeeded' || request.isPending} onClick={() => mark('mark_success')}>
          Mark succeeded
        </button>
        <button data-testid="mark-failed" disabled={state === 'failed' || request.isPending} onClick={() => mark('mark_failed')}>
          Mark failed
        </button>
      </div>
      <ErrorBox error={request.error} what="Task action" />
      <ActionStatus action={followed} />
    </div>
  );
}
