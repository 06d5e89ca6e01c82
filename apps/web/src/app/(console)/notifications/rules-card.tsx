'use client';

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { isClusterEvent, isTimedEvent, NOTIFICATION_EVENTS, type NotificationEvent } from '@fenceline/core';
import { useTRPC } from '@/client/trpc';
import { ErrorBox } from '@/components/errors';
import { FieldError, namesOneOf } from '@/components/field-error';
import { canOperate, useRole } from '@/components/shell';
import { DataTable } from '@/components/data-table';
import { FormRow } from '@/components/form-row';
import { Card } from '@/components/ui';

const FIELDS = ['channelId', 'event', 'dagId', 'afterSeconds', 'pool'] as const;

/** What a rule's DAG column says: a cluster event is about no DAG, and a rule without one is about every DAG. */
function dagText(event: NotificationEvent, dagId: string | null): string {
  if (isClusterEvent(event)) return 'the cluster';
  return dagId ?? 'every DAG';
}

/**
 * Notification rules: which event of which DAG goes to which channel. The form asks only
 * for what the chosen event takes: a DAG unless it is about the cluster, the seconds to wait
 * for a timed event, a pool for pool_no_worker. Operators and admins add and delete rules.
 */
export function RulesCard() {
  const trpc = useTRPC();
  const role = useRole();
  const operator = canOperate(role);
  const queryClient = useQueryClient();
  const rules = useQuery(trpc.notifications.rules.queryOptions());
  const channels = useQuery(trpc.notifications.channels.queryOptions());
  const refresh = () => void queryClient.invalidateQueries({ queryKey: trpc.notifications.rules.queryKey() });
  const [channelId, setChannelId] = useState('');
  const [event, setEvent] = useState<NotificationEvent>('run_failed');
  const [dagId, setDagId] = useState('');
  const [after, setAfter] = useState('');
  const [pool, setPool] = useState('');
  const create = useMutation(trpc.notifications.createRule.mutationOptions({ onSuccess: refresh }));
  const remove = useMutation(trpc.notifications.deleteRule.mutationOptions({ onSuccess: refresh }));
  const channelName = (id: string) => channels.data?.find((c) => c.id === id)?.name ?? `channel ${id}`;
  // Until one is chosen, the form sends to the first channel, as its select shows.
  const chosenChannel = channelId || channels.data?.[0]?.id || '';

  const submit = () => {
    remove.reset();
    create.mutate({
      channelId: chosenChannel,
      event,
      dagId: isClusterEvent(event) || dagId.trim() === '' ? null : dagId.trim(),
      // The seconds are sent as typed: the store refuses a fraction, a number out of range or none, naming the field.
      afterSeconds: isTimedEvent(event) ? (after.trim() === '' ? null : Number(after)) : null,
      pool: event === 'pool_no_worker' && pool.trim() !== '' ? pool.trim() : null,
    });
  };

  return (
    <Card title="Rules">
      {operator ? (
        <FormRow onSubmit={submit} testId="rule-form" className="notify-form">
          <label className="form-field">
            Channel
            <select data-testid="rule-channel" value={chosenChannel} onChange={(e) => setChannelId(e.target.value)}>
              {(channels.data ?? []).map((c) => (
                <option key={c.id} value={c.id}>
                  {c.name}
                </option>
              ))}
            </select>
            <FieldError error={create.error} field="channelId" />
          </label>
          <label className="form-field">
            Event
            <select data-testid="rule-event" value={event} onChange={(e) => setEvent(e.target.value as NotificationEvent)}>
              {NOTIFICATION_EVENTS.map((ev) => (
                <option key={ev} value={ev}>
                  {ev}
                </option>
              ))}
            </select>
            <FieldError error={create.error} field="event" />
          </label>
          {isClusterEvent(event) ? null : (
            <label className="form-field">
              DAG
              <input data-testid="rule-dag" value={dagId} onChange={(e) => setDagId(e.target.value)} placeholder="every DAG" />
              <FieldError error={create.error} field="dagId" />
            </label>
          )}
          {isTimedEvent(event) ? (
            <label className="form-field">
              After (seconds)
              <input data-testid="rule-after" value={after} onChange={(e) => setAfter(e.target.value)} inputMode="numeric" placeholder="300" />
              <FieldError error={create.error} field="afterSeconds" />
            </label>
          ) : null}
          {event === 'pool_no_worker' ? (
            <label className="form-field">
              Pool
              <input data-testid="rule-pool" value={pool} onChange={(e) => setPool(e.target.value)} placeholder="every pool" />
              <FieldError error={create.error} field="pool" />
            </label>
          ) : null}
          <button className="primary" type="submit" data-testid="rule-add" disabled={create.isPending || chosenChannel === ''}>
            Add rule
          </button>
        </FormRow>
      ) : (
        <p className="small muted" data-testid="rule-read-only">
          Operators and admins add and delete rules; you are signed in as {role}.
        </p>
      )}
      {operator && channels.data && channels.data.length === 0 ? <p className="small muted">A rule sends to a channel: an admin adds one first.</p> : null}
      {namesOneOf(create.error, FIELDS) ? null : <ErrorBox error={create.error} what="Add rule" />}
      <ErrorBox error={remove.error} what="Delete rule" />
      <ErrorBox error={rules.error} what="Reading rules" />
      <DataTable
        rows={rules.data}
        empty="No rule yet."
        testId="rules-table"
        columns={[{ head: 'Event' }, { head: 'About' }, { head: 'After', className: 'num' }, { head: 'Pool' }, { head: 'Channel' }, operator && {}]}
        rowKey={(r) => r.id}
        rowAttributes={(r) => ({ 'data-testid': `rule-${r.id}`, 'data-event': r.event })}
      >
        {(r) => (
          <>
            <td>
              <code>{r.event}</code>
            </td>
            <td data-testid={`rule-${r.id}-dag`}>{dagText(r.event, r.dagId)}</td>
            <td className="num">{r.afterSeconds === null ? '' : `${r.afterSeconds} s`}</td>
            <td>{r.event === 'pool_no_worker' ? (r.pool ?? 'every pool') : ''}</td>
            <td>{channelName(r.channelId)}</td>
            {operator ? (
              <td>
                <button type="button" data-testid={`rule-delete-${r.id}`} onClick={() => remove.mutate({ id: r.id })} disabled={remove.isPending}>
                  Delete
                </button>
              </td>
            ) : null}
          </>
        )}
      </DataTable>
    </Card>
  );
}
