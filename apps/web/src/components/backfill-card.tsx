'use client';

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { livePoll, useTRPC } from '@/client/trpc';
import { describeError, ErrorBox } from '@/components/errors';
import { canOperate, useRole } from '@/components/shell';
import { Time } from '@/components/time';
import { Card, Empty, StateBadge } from '@/components/ui';
import { fingerprintOf, RequestKeys } from '@/lib/request-keys';

const HOUR_MS = 3_600_000;

/** An instant as the form shows it: ISO 8601 in UTC, to the second. */
function isoText(ms: number): string {
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

interface Progress {
  id: string;
  state: string;
  totalSlots: number;
  createdRuns: number;
  skippedSlots: number;
  activeRuns: number;
  finishedRuns: number;
}

/** Slots dealt with (skipped, or their run ended) out of all: what the bar fills with. */
function done(b: Progress): number {
  return b.skippedSlots + b.finishedRuns;
}

function ProgressBar({ b }: { b: Progress }) {
  const percent = Math.floor((done(b) / b.totalSlots) * 100);
  return (
    <div
      className="meter big"
      role="progressbar"
      aria-valuemin={0}
      aria-valuemax={b.totalSlots}
      aria-valuenow={done(b)}
      aria-label={`backfill ${b.id}: ${done(b)} of ${b.totalSlots} slots`}
      data-testid={`backfill-progress-${b.id}`}
    >
      <div className="meter-fill" style={{ width: `${percent}%` }} />
    </div>
  );
}

/**
 * A DAG's backfills: a form that asks for one (operators only; a range of more slots than
 * the store takes unconfirmed is confirmed in a dialog first), and each backfill's
 * progress with a button to cancel it while it runs.
 */
export function BackfillCard({ dagId, scheduled }: { dagId: string; scheduled: boolean }) {
  const trpc = useTRPC();
  const role = useRole();
  const queryClient = useQueryClient();
  const list = useQuery(trpc.backfills.list.queryOptions({ dagId }, { refetchInterval: livePoll }));
  const invalidate = () => queryClient.invalidateQueries({ queryKey: trpc.backfills.list.queryKey({ dagId }) });
  const [from, setFrom] = useState(() => isoText(Math.floor(Date.now() / HOUR_MS) * HOUR_MS - 24 * HOUR_MS));
  const [to, setTo] = useState(() => isoText(Math.floor(Date.now() / HOUR_MS) * HOUR_MS));
  const [maxActive, setMaxActive] = useState('4');
  const [mode, setMode] = useState<'skip' | 'rerun'>('skip');
  const create = useMutation(trpc.backfills.create.mutationOptions({ onSuccess: () => void invalidate() }));
  const cancel = useMutation(trpc.backfills.cancel.mutationOptions({ onSuccess: () => void invalidate() }));
  // One backfill per click: as Trigger run does, every click of the same request (the same
  // range and settings) within the keys' window after its answer sends the same request key,
  // so a double click or a retried request starts one backfill.
  const [keys] = useState(() => new RequestKeys());
  const send = (input: { dagId: string; from: string; to: string; maxActiveRuns: number; mode: 'skip' | 'rerun'; confirm?: boolean }, onError?: (err: unknown) => void) => {
    const requestKey = keys.keyFor(fingerprintOf(input));
    create.mutate({ ...input, requestKey }, { onError, onSettled: () => keys.answered(requestKey) });
  };

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const input = { dagId, from, to, maxActiveRuns: Number(maxActive), mode };
    send(input, (err) => {
      // The store counts the slots; a large range is sent again only once the operator agrees.
      const shown = describeError(err);
      if (shown.code === 'INVALID_INPUT' && shown.details?.field === 'confirm' && window.confirm(`${shown.message}. Start it anyway?`)) {
        send({ ...input, confirm: true });
      }
    });
  };
  const cancelClicked = (id: string) => {
    if (window.confirm(`Cancel backfill ${id}? It creates no more runs, and its queued runs end cancelled.`)) cancel.mutate({ id });
  };

  const backfills = list.data?.backfills ?? [];
  const operator = canOperate(role);
  return (
    <Card title="Backfills">
      {operator && scheduled ? (
        <form className="field-row" onSubmit={submit} data-testid="backfill-form">
          <label>
            From <input data-testid="backfill-from" value={from} onChange={(e) => setFrom(e.target.value)} aria-label="from (UTC, ISO 8601)" />
          </label>
          <label>
            to <input data-testid="backfill-to" value={to} onChange={(e) => setTo(e.target.value)} aria-label="to (UTC, ISO 8601), not included" />
          </label>
          <label>
            at most <input type="number" min={1} data-testid="backfill-max-active" value={maxActive} onChange={(e) => setMaxActive(e.target.value)} /> runs at once
          </label>
          <label>
            slots that have a run:{' '}
            <select data-testid="backfill-mode" value={mode} onChange={(e) => setMode(e.target.value === 'rerun' ? 'rerun' : 'skip')}>
              <option value="skip">skip them</option>
              <option value="rerun">run them again once ended</option>
            </select>
          </label>
          <button className="primary" type="submit" data-testid="backfill-start" disabled={create.isPending}>
            Backfill
          </button>
        </form>
      ) : null}
      {/* A refusal that only asked for confirmation is answered by the dialog, not shown as an error. */}
      {create.error && describeError(create.error).details?.field !== 'confirm' ? <ErrorBox error={create.error} what="Backfill" /> : null}
      <ErrorBox error={cancel.error} what="Cancel backfill" />
      <ErrorBox error={list.error} what="Reading backfills" />
      {backfills.length === 0 ? (
        <Empty>{scheduled ? 'No backfills yet.' : 'A DAG without a schedule has no slots to backfill.'}</Empty>
      ) : (
        <table className="table compact" data-testid="backfill-list">
          <thead>
            <tr>
              <th>Backfill</th>
              <th>Range</th>
              <th>State</th>
              <th>Progress</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {backfills.map((b) => (
              <tr key={b.id} data-testid={`backfill-${b.id}`}>
                <td>
                  #{b.id} <span className="muted small">by {b.requestedBy}</span>
                </td>
                <td className="muted small">
                  <Time at={b.fromAt} /> – <Time at={b.toAt} />
                </td>
                <td>
                  <StateBadge state={b.state} testId={`backfill-state-${b.id}`} />
                </td>
                <td>
                  <ProgressBar b={b} />
                  <span className="muted small" data-testid={`backfill-counts-${b.id}`}>
                    {done(b)}/{b.totalSlots} slots · {b.createdRuns} runs created · {b.skippedSlots} skipped · {b.activeRuns} unfinished
                  </span>
                </td>
                <td>
                  {operator && b.state === 'running' ? (
                    <button data-testid={`backfill-cancel-${b.id}`} disabled={cancel.isPending} onClick={() => cancelClicked(b.id)}>
                      Cancel
                    </button>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Card>
  );
}
