'use client';

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { CHANNEL_KINDS, roleAtLeast, type ChannelKind } from '@fenceline/core';
import { useTRPC } from '@/client/trpc';
import { ErrorBox } from '@/components/errors';
import { FieldError, namesOneOf } from '@/components/field-error';
import { useRole } from '@/components/shell';
import { Time } from '@/components/time';
import { ConfirmDelete } from '@/components/confirm-delete';
import { DataTable } from '@/components/data-table';
import { FormRow } from '@/components/form-row';
import { Card } from '@/components/ui';

const FIELDS = ['name', 'kind', 'url', 'secret'] as const;

/**
 * Notification channels, each with its URL masked as every read shows it and whether its
 * bodies are signed. Only an admin adds or deletes one: a channel holds a secret and decides
 * which host hears about runs. The secret is sent once and never shown again.
 */
export function ChannelsCard() {
  const trpc = useTRPC();
  const role = useRole();
  const admin = roleAtLeast(role, 'admin');
  const queryClient = useQueryClient();
  const channels = useQuery(trpc.notifications.channels.queryOptions());
  // A deleted channel takes its rules with it, so both lists are read again.
  const refresh = () => {
    void queryClient.invalidateQueries({ queryKey: trpc.notifications.channels.queryKey() });
    void queryClient.invalidateQueries({ queryKey: trpc.notifications.rules.queryKey() });
  };
  const [name, setName] = useState('');
  const [kind, setKind] = useState<ChannelKind>('webhook');
  const [url, setUrl] = useState('');
  const [secret, setSecret] = useState('');
  const create = useMutation(
    trpc.notifications.createChannel.mutationOptions({
      onSuccess: () => {
        setName('');
        setUrl('');
        setSecret('');
        refresh();
      },
    }),
  );
  const remove = useMutation(trpc.notifications.deleteChannel.mutationOptions({ onSuccess: refresh }));

  const submit = () => {
    remove.reset();
    create.mutate({ name, kind, url, secret: secret === '' ? null : secret });
  };
  const deleteConfirmed = (id: string) => {
    create.reset();
    remove.mutate({ id });
  };

  return (
    <Card title="Channels">
      {admin ? (
        <FormRow onSubmit={submit} testId="channel-form" className="notify-form">
          <label className="form-field">
            Name
            <input data-testid="channel-name" value={name} onChange={(e) => setName(e.target.value)} placeholder="ops-slack" />
            <FieldError error={create.error} field="name" />
          </label>
          <label className="form-field">
            Kind
            <select data-testid="channel-kind" value={kind} onChange={(e) => setKind(e.target.value as ChannelKind)}>
              {CHANNEL_KINDS.map((k) => (
                <option key={k} value={k}>
                  {k}
                </option>
              ))}
            </select>
            <FieldError error={create.error} field="kind" />
          </label>
          <label className="form-field wide">
            URL
            <input data-testid="channel-url" value={url} onChange={(e) => setUrl(e.target.value)} placeholder="https://hooks.slack.com/services/…" autoComplete="off" />
            <FieldError error={create.error} field="url" />
          </label>
          <label className="form-field">
            Secret (optional)
            <input data-testid="channel-secret" type="password" value={secret} onChange={(e) => setSecret(e.target.value)} autoComplete="new-password" />
            <FieldError error={create.error} field="secret" />
          </label>
          <button className="primary" type="submit" data-testid="channel-add" disabled={create.isPending}>
            Add channel
          </button>
        </FormRow>
      ) : (
        <p className="small muted" data-testid="channel-read-only">
          Admins add and delete channels; you are signed in as {role}.
        </p>
      )}
      {namesOneOf(create.error, FIELDS) ? null : <ErrorBox error={create.error} what="Add channel" />}
      <ErrorBox error={remove.error} what="Delete channel" />
      <ErrorBox error={channels.error} what="Reading channels" />
      <DataTable
        rows={channels.data}
        empty="No channel yet."
        testId="channels-table"
        columns={[{ head: 'Name' }, { head: 'Kind' }, { head: 'URL' }, { head: 'Signed' }, { head: 'Added' }, admin && {}]}
        rowKey={(c) => c.id}
        rowAttributes={(c) => ({ 'data-testid': `channel-${c.name}`, 'data-id': c.id })}
      >
        {(c) => (
          <>
            <td>{c.name}</td>
            <td>{c.kind}</td>
            <td>
              <code data-testid={`channel-${c.name}-url`} title="Masked: only the host and the last characters are shown">
                {c.url}
              </code>
            </td>
            <td data-testid={`channel-${c.name}-signed`}>{c.hasSecret ? 'signed' : 'unsigned'}</td>
            <td className="small">
              <Time at={c.createdAt} />
            </td>
            {admin ? (
              <td>
                <ConfirmDelete
                  testId={`channel-delete-${c.name}`}
                  question={`Delete channel ${c.name} and its rules? Its notifications are not sent again.`}
                  onConfirm={() => deleteConfirmed(c.id)}
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
