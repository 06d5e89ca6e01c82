'use client';

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { NOTIFICATION_STATES, type NotificationState } from '@fenceline/core';
import { LIVE_MS, useTRPC } from '@/client/trpc';
import { ErrorBox } from '@/components/errors';
import { canOperate, useRole } from '@/components/shell';
import { Time } from '@/components/time';
import { DataTable } from '@/components/data-table';
import { Card, StateBadge } from '@/components/ui';

const SHOWN = 100;

/** The notifications sent, newest first, filtered by state, with why the last attempt failed; refreshed live so a delivery shows as it is recorded. */
export function NotificationsCard() {
  const trpc = useTRPC();
  const [state, setState] = useState<NotificationState | ''>('');
  const list = useQuery(trpc.notifications.list.queryOptions({ state: state === '' ? undefined : state, limit: SHOWN }, { refetchInterval: LIVE_MS }));
  const channels = useQuery(trpc.notifications.channels.queryOptions());
  const channelName = (id: string) => channels.data?.find((c) => c.id === id)?.name ?? `channel ${id} (deleted)`;
  return (
    <Card
      title="Notifications"
      actions={
        <label className="muted small">
          state{' '}
          <select data-testid="notifications-state" value={state} onChange={(e) => setState(e.target.value as NotificationState | '')}>
            <option value="">every state</option>
            {NOTIFICATION_STATES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
      }
    >
      <ErrorBox error={list.error} what="Reading notifications" />
      <DataTable
        rows={list.data}
        empty={`No notification${state === '' ? '' : ` ${state}`}.`}
        testId="notifications-table"
        className="table compact"
        columns={[
          { head: 'Event' },
          { head: 'DAG' },
          { head: 'Channel' },
          { head: 'State' },
          { head: 'Attempts', className: 'num' },
          { head: 'Last error' },
          { head: 'Queued' },
          { head: 'Delivered' },
        ]}
        rowKey={(n) => n.id}
        rowAttributes={(n) => ({ 'data-testid': `notification-${n.id}`, 'data-state': n.state, 'data-event': n.event, 'data-dag': n.dagId ?? '' })}
      >
        {(n) => (
          <>
            <td>
              <code>{n.event}</code>
            </td>
            <td>{n.dagId ?? <span className="muted">the cluster</span>}</td>
            <td>{channelName(n.channelId)}</td>
            <td>
              <StateBadge state={n.state} testId={`notification-${n.id}-state`} />
            </td>
            <td className="num">{n.attempts}</td>
            <td className="prose small">{n.lastError ?? <span className="muted">—</span>}</td>
            <td className="small">
              <Time at={n.createdAt} />
            </td>
            <td className="small">{n.deliveredAt ? <Time at={n.deliveredAt} /> : <span className="muted">—</span>}</td>
          </>
        )}
      </DataTable>
    </Card>
  );
}

/**
 * Dead letters: notifications whose every attempt failed, with the attempts and the last
 * error (any URL in it masked). An operator sends one again with Retry once the receiver is
 * fixed: it is pending, due now, with its attempts reset.
 */
export function DeadLettersCard() {
  const trpc = useTRPC();
  const role = useRole();
  const operator = canOperate(role);
  const queryClient = useQueryClient();
  const dead = useQuery(trpc.notifications.list.queryOptions({ state: 'dead', limit: SHOWN }, { refetchInterval: LIVE_MS }));
  const retry = useMutation(trpc.notifications.retry.mutationOptions({ onSuccess: () => void queryClient.invalidateQueries({ queryKey: trpc.notifications.list.pathKey() }) }));
  return (
    <Card title="Dead letters">
      <p className="small muted">A notification is dead after 8 failed attempts; it is not tried again unless retried.</p>
      <ErrorBox error={retry.error} what="Retry" />
      <ErrorBox error={dead.error} what="Reading dead letters" />
      <DataTable
        rows={dead.data}
        empty="No dead letter."
        testId="dead-letters-table"
        className="table compact"
        columns={[{ head: 'Event' }, { head: 'DAG' }, { head: 'Attempts', className: 'num' }, { head: 'Last error' }, { head: 'Queued' }, operator && {}]}
        rowKey={(n) => n.id}
        rowAttributes={(n) => ({ 'data-testid': `dead-${n.id}` })}
      >
        {(n) => (
          <>
            <td>
              <code>{n.event}</code>
            </td>
            <td>{n.dagId ?? <span className="muted">the cluster</span>}</td>
            <td className="num" data-testid={`dead-${n.id}-attempts`}>
              {n.attempts}
            </td>
            <td className="prose small" data-testid={`dead-${n.id}-error`}>
              {n.lastError ?? <span className="muted">none recorded</span>}
            </td>
            <td className="small">
              <Time at={n.createdAt} />
            </td>
            {operator ? (
              <td>
                <button type="button" data-testid={`dead-retry-${n.id}`} onClick={() => retry.mutate({ id: n.id })} disabled={retry.isPending}>
                  Retry
                </button>
              </td>
            ) : null}
          </>
        )}
      </DataTable>
    </Card>
  );
}
