'use client';

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { ROLES, type Role } from '@fenceline/core';
import { useTRPC } from '@/client/trpc';
import { ErrorBox } from '@/components/errors';
import { Time } from '@/components/time';
import { DataTable } from '@/components/data-table';
import { FormRow } from '@/components/form-row';
import { Card, PageHeader } from '@/components/ui';

/** An admin's page: create users, change their roles, disable them, sign them out everywhere. */
export default function UsersPage() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const users = useQuery(trpc.users.list.queryOptions());
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.users.list.queryKey() });
  const [name, setName] = useState('');
  const [role, setRole] = useState<Role>('viewer');
  const [password, setPassword] = useState('');
  const create = useMutation(
    trpc.users.create.mutationOptions({
      onSuccess: () => {
        setName('');
        setPassword('');
        void refresh();
      },
    }),
  );
  const setUserRole = useMutation(trpc.users.setRole.mutationOptions({ onSuccess: () => void refresh() }));
  const setDisabled = useMutation(trpc.users.setDisabled.mutationOptions({ onSuccess: () => void refresh() }));
  const revoke = useMutation(trpc.users.revokeSessions.mutationOptions());

  return (
    <>
      <PageHeader title="Users" subtitle="Who may sign in, and as what: an admin manages users, an operator edits, triggers and pauses, a viewer reads." />
      <Card title="New user">
        <FormRow onSubmit={() => create.mutate({ name, role, password: password === '' ? undefined : password })}>
          <input
            data-testid="new-user-name"
            aria-label="Name of the new user"
            placeholder="user name"
            autoCapitalize="none"
            spellCheck={false}
            value={name}
            onChange={(e) => setName(e.target.value)}
          />
          <select data-testid="new-user-role" aria-label="Role of the new user" value={role} onChange={(e) => setRole(e.target.value as Role)}>
            {ROLES.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
          <input
            data-testid="new-user-password"
            type="password"
            autoComplete="new-password"
            placeholder="password (empty: generate one)"
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
          <button className="primary" data-testid="new-user-submit" disabled={create.isPending || name === ''}>
            Create
          </button>
        </FormRow>
        <ErrorBox error={create.error} what="Creating the user" />
        {create.data ? (
          <p data-testid="user-created">
            {create.data.user.name} created ({create.data.user.role}).
            {create.data.password ? (
              <>
                {' '}
                Password, shown this once: <code data-testid="created-password">{create.data.password}</code>
              </>
            ) : null}
          </p>
        ) : null}
      </Card>
      <Card title="Everyone">
        <ErrorBox error={users.error ?? setUserRole.error ?? setDisabled.error ?? revoke.error} what="Users" />
        {revoke.data ? <p data-testid="sessions-revoked">{revoke.data.revoked} session(s) ended.</p> : null}
        <DataTable
          rows={users.data}
          empty="No users."
          testId="user-table"
          className="table compact"
          columns={[{ head: 'Name' }, { head: 'Role' }, { head: 'State' }, { head: 'Created' }, {}]}
          rowKey={(u) => u.id}
          rowAttributes={(u) => ({ 'data-testid': `user-row-${u.name}` })}
        >
          {(u) => (
            <>
              <td>{u.name}</td>
              <td>
                <select
                  data-testid={`user-role-${u.name}`}
                  aria-label={`Role of ${u.name}`}
                  value={u.role}
                  disabled={setUserRole.isPending}
                  onChange={(e) => setUserRole.mutate({ userId: u.id, role: e.target.value as Role })}
                >
                  {ROLES.map((r) => (
                    <option key={r} value={r}>
                      {r}
                    </option>
                  ))}
                </select>
              </td>
              <td data-testid={`user-state-${u.name}`}>{u.disabled ? 'disabled' : 'enabled'}</td>
              <td className="muted small">
                <Time at={u.createdAt} />
              </td>
              <td>
                <button data-testid={`user-disable-${u.name}`} onClick={() => setDisabled.mutate({ userId: u.id, disabled: !u.disabled })}>
                  {u.disabled ? 'Enable' : 'Disable'}
                </button>{' '}
                <button data-testid={`user-revoke-${u.name}`} onClick={() => revoke.mutate({ userId: u.id })}>
                  Sign out everywhere
                </button>
              </td>
            </>
          )}
        </DataTable>
      </Card>
    </>
  );
}
