'use client';

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import Link from 'next/link';
import { useState } from 'react';
import { LIVE_MS, useTRPC } from '@/client/trpc';
import { Meter } from '@/components/charts';
import { ErrorBox } from '@/components/errors';
import { canOperate, useRole } from '@/components/shell';
import { ConfirmDelete } from '@/components/confirm-delete';
import { DataTable } from '@/components/data-table';
import { FormRow } from '@/components/form-row';
import { Card } from '@/components/ui';
import { plural } from '@/lib/plural';

/**
 * Named resource limits with their use and who waits for them: each limit's capacity, the
 * units live leases hold, and the ready jobs that consume it (the oldest few, by DAG, run and
 * task). Operators and admins set a limit (create it or change its capacity) and delete one;
 * a viewer sees the same figures without the form. The store checks the name and capacity,
 * so a refusal is shown as it came, naming the field.
 */
export function LimitsCard() {
  const trpc = useTRPC();
  const role = useRole();
  const queryClient = useQueryClient();
  const list = useQuery(trpc.limits.list.queryOptions(undefined, { refetchInterval: LIVE_MS }));
  const invalidate = () => queryClient.invalidateQueries({ queryKey: trpc.limits.list.queryKey() });
  const [name, setName] = useState('');
  const [capacity, setCapacity] = useState('1');
  const set = useMutation(trpc.limits.set.mutationOptions({ onSuccess: () => void invalidate() }));
  const remove = useMutation(trpc.limits.delete.mutationOptions({ onSuccess: () => void invalidate() }));
  const operator = canOperate(role);

  const submit = () => {
    remove.reset();
    // The capacity is sent as typed: the store refuses a fraction, zero or less, and text that is no number, naming the field.
    set.mutate({ name: name.trim(), capacity: capacity.trim() === '' ? Number.NaN : Number(capacity) });
  };
  const deleteConfirmed = (limit: string) => {
    set.reset();
    remove.mutate({ name: limit });
  };

  const limits = list.data?.limits ?? [];
  return (
    <Card title="Resource limits">
      <p className="small muted">
        A limit caps how many units of one external system jobs of every DAG hold at once; a task consumes units with <code>resources</code> in its spec, and waits, ready, while
        they are taken.
      </p>
      {operator ? (
        <FormRow onSubmit={submit} testId="limit-form">
          <label>
            Name <input data-testid="limit-name" value={name} onChange={(e) => setName(e.target.value)} placeholder="warehouse" />
          </label>
          <label>
            capacity <input data-testid="limit-capacity" value={capacity} onChange={(e) => setCapacity(e.target.value)} inputMode="numeric" />
          </label>
          <button className="primary" type="submit" data-testid="limit-set" disabled={set.isPending}>
            Set limit
          </button>
        </FormRow>
      ) : (
        <p className="small muted" data-testid="limit-read-only">
          Operators and admins set and delete limits; you are signed in as {role}.
        </p>
      )}
      <ErrorBox error={set.error} what="Set limit" />
      <ErrorBox error={remove.error} what="Delete limit" />
      <ErrorBox error={list.error} what="Reading limits" />
      <DataTable
        rows={list.data ? limits : undefined}
        empty="No resource limit yet."
        testId="limits-table"
        columns={[
          { head: 'Limit' },
          { head: 'Used / capacity', className: 'num' },
          { head: 'Use', style: { width: '20%' } },
          { head: 'Waiting', className: 'num' },
          { head: 'Who waits' },
          operator && {},
        ]}
        rowKey={(l) => l.name}
        rowAttributes={(l) => ({ 'data-testid': `limit-${l.name}`, 'data-capacity': l.capacity, 'data-used': l.used, 'data-waiting': l.waiting })}
      >
        {(l) => (
          <>
            <td>
              <code>{l.name}</code>
            </td>
            <td className="num" data-testid={`limit-${l.name}-use`}>
              {l.used} / {l.capacity}
            </td>
            <td>
              <Meter value={l.used} max={l.capacity} />
            </td>
            <td className="num">{l.waiting > 0 ? <strong className="warn-text">{l.waiting}</strong> : 0}</td>
            <td className="small">
              {l.waiters.length === 0 ? (
                <span className="muted">nobody</span>
              ) : (
                <ul className="plain" data-testid={`limit-${l.name}-waiters`}>
                  {l.waiters.map((j) => (
                    <li key={j.jobId}>
                      <Link href={`/runs/${j.runId}`}>
                        {j.dagId} · run {j.runId} · {j.taskId}
                      </Link>{' '}
                      <span className="muted">({plural(j.units, 'unit')})</span>
                    </li>
                  ))}
                  {l.waiting > l.waiters.length ? <li className="muted">and {l.waiting - l.waiters.length} more</li> : null}
                </ul>
              )}
            </td>
            {operator ? (
              <td>
                <ConfirmDelete
                  testId={`limit-delete-${l.name}`}
                  question={`Delete limit ${l.name}? Jobs that consume it wait until it exists again, and DAGs that consume it cannot be saved.`}
                  onConfirm={() => deleteConfirmed(l.name)}
                  disabled={remove.isPending}
                />
              </td>
            ) : null}
          </>
        )}
      </DataTable>
    </Card>
  );
}
