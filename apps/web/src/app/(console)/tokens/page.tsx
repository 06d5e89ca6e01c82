'use client';

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { ROLES, roleAtLeast, type Role } from '@fenceline/core';
import { useTRPC } from '@/client/trpc';
import { ErrorBox } from '@/components/errors';
import { useRole } from '@/components/shell';
import { Time } from '@/components/time';
import { DataTable } from '@/components/data-table';
import { FormRow } from '@/components/form-row';
import { Card, PageHeader } from '@/components/ui';

/**
 * Personal API tokens for scripts and CI: each is scoped to a role no higher than its
 * owner's, expires, and can be revoked. Its secret is shown once, when it is made.
 */
export default function TokensPage() {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const myRole = useRole();
  const isAdmin = roleAtLeast(myRole, 'admin');
  const [all, setAll] = useState(false);
  const tokens = useQuery(trpc.tokens.list.queryOptions({ all: all && isAdmin }));
  const refresh = () => queryClient.invalidateQueries({ queryKey: trpc.tokens.list.queryKey() });
  const [name, setName] = useState('');
  const [role, setRole] = useState<Role>('viewer');
  const [days, setDays] = useState(30);
  const create = useMutation(trpc.tokens.create.mutationOptions({ onSuccess: () => void refresh() }));
  const revoke = useMutation(trpc.tokens.revoke.mutationOptions({ onSuccess: () => void refresh() }));

  return (
    <>
      <PageHeader title="API tokens" subtitle="Send a token as Authorization: Bearer <token> to /api/trpc. It can do what its role allows, never more than you." />
      <Card title="New token">
        <FormRow onSubmit={() => create.mutate({ name, role, expiresInDays: days })}>
          <input
            data-testid="new-token-name"
            aria-label="Name of the new token"
            placeholder="what it is for (ci, backup…)"
            value={name}
            onChange={(e) => setName(e.target.value)}
          />
          <select data-testid="new-token-role" aria-label="Role of the new token" value={role} onChange={(e) => setRole(e.target.value as Role)}>
            {ROLES.filter((r) => roleAtLeast(myRole, r)).map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
          <label className="muted">
            expires in <input data-testid="new-token-days" type="number" min={1} max={365} value={days} onChange={(e) => setDays(Number(e.target.value))} /> days
          </label>
          <button className="primary" data-testid="new-token-submit" disabled={create.isPending || name === ''}>
            Create
          </button>
        </FormRow>
        <ErrorBox error={create.error} what="Creating the token" />
        {create.data ? (
          <p data-testid="token-created">
            Token &ldquo;{create.data.token.name}&rdquo; made. Copy it now; it is not shown again: <code data-testid="token-secret">{create.data.secret}</code>
          </p>
        ) : null}
      </Card>
      <Card
        title="Tokens"
        actions={
          isAdmin ? (
            <label className="muted">
              <input type="checkbox" data-testid="tokens-all" checked={all} onChange={(e) => setAll(e.target.checked)} /> everyone&apos;s
            </label>
          ) : null
        }
      >
        <ErrorBox error={tokens.error ?? revoke.error} what="Tokens" />
        <DataTable
          rows={tokens.data}
          empty="No tokens."
          testId="token-table"
          className="table compact"
          columns={[{ head: 'Name' }, { head: 'Owner' }, { head: 'Role' }, { head: 'Expires' }, { head: 'State' }, {}]}
          rowKey={(t) => t.id}
          rowAttributes={(t) => ({ 'data-testid': `token-row-${t.id}` })}
        >
          {(t) => (
            <>
              <td>{t.name}</td>
              <td>{t.userName}</td>
              <td>{t.role}</td>
              <td className="small">
                <Time at={t.expiresAt} />
              </td>
              <td data-testid={`token-state-${t.id}`}>{t.revokedAt ? 'revoked' : new Date(t.expiresAt).getTime() < Date.now() ? 'expired' : 'active'}</td>
              <td>
                {t.revokedAt ? null : (
                  <button data-testid={`token-revoke-${t.id}`} onClick={() => revoke.mutate({ tokenId: t.id })}>
                    Revoke
                  </button>
                )}
              </td>
            </>
          )}
        </DataTable>
      </Card>
    </>
  );
}
