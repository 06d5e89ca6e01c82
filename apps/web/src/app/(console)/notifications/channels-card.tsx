'use client';

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { CHANNEL_KINDS, roleAtLeast, type ChannelKind } from '@fenceline/core';
import { useTRPC } from '@/client/trpc';
import { ErrorBox } from '@/components/errors';
import { FieldError, namesOneOf } from '@/components/field-error';
import { useRole } from '@/components/shell';
import { Time } from '@/components/time';
import { Card, Empty } from '@/components/ui';

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

  const submit = (e: FormEvent) => {
    e.preventDefault();
    remove.reset();
    create.mutate({ name, kind, url, secret: secret === '' ? null : secret });
  };
  const deleteClicked = (id: string, channel: string) => {
    if (window.confirm(`Delete channel ${channel} and its rules? Its notifications are not sent again.`)) {
      create.reset();
      remove.mutate({ id });
    }
  };

  return (
    <Card title="Channels">
      {admin ? (
        <form className="field-row notify-form" onSubmit={submit} data-testid="channel-form">
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
        </form>
      ) : (
        <p className="small muted" data-testid="channel-read-only">
          Admins add and delete channels; you are signed in as {role}.
        </p>
      )}
      {namesOneOf(create.error, FIELDS) ? null : <ErrorBox error={create.error} what="Add channel" />}
      <ErrorBox error={remove.error} what="Delete channel" />
      <ErrorBox error={channels.error} what="Reading channels" />
      {channels.data && channels.data.length === 0 ? <Empty>No channel yet.</Empty> : null}
      {channels.data && channels.data.length > 0 ? (
        <div className="table-scroll">
          <table className="table" data-testid="channels-table">
            <thead>
              <tr>
                <th>Name</th>
                <th>Kind</th>
                <th>URL</th>
                <th>Signed</th>
                <th>Added</th>
                {admin ? <th /> : null}
              </tr>
            </thead>
            <tbody>
              {channels.data.map((c) => (
                <tr key={c.id} data-testid={`channel-${c.name}`} data-id={c.id}>
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
                      <button type="button" data-testid={`channel-delete-${c.name}`} onClick={() => deleteClicked(c.id, c.name)} disabled={remove.isPending}>
                        Delete
                      </button>
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </Card>
  );
}
