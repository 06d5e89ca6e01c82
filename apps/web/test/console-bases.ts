/**
 * A valid input per console procedure: each field is replaced in turn by a NUL, a lone
 * surrogate and 5,000-deep nesting, and every answer must be a 4xx or a success, never a
 * 5xx, a statement or a stack. A procedure added later without a base here is still swept
 * with bad values at its input's root.
 */
export const CONSOLE_BASES: Record<string, unknown> = {
  'auth.signIn': { name: 'sweep-user', password: 'not the password' },
  'users.create': { name: 'sweep-user', role: 'viewer', password: 'a password long enough 123' },
  'users.setRole': { userId: '1', role: 'viewer' },
  'users.setDisabled': { userId: '1', disabled: false },
  'users.revokeSessions': { userId: '1' },
  'tokens.list': { all: true },
  'tokens.create': { name: 'sweep token', role: 'viewer', expiresInDays: 1 },
  'tokens.revoke': { tokenId: '1' },
  'audit.list': { actor: 'sweep-user', action: 'dag.saved', dagId: 'sweep', beforeId: '10', limit: 10 },
  'cluster.fairShare': { windowMs: 600_000 },
  'limits.set': { name: 'sweep-limit', capacity: 2 },
  'limits.delete': { name: 'sweep-limit' },
  'notifications.list': { state: 'dead', limit: 10 },
  'notifications.createChannel': { name: 'sweep-channel', kind: 'webhook', url: 'https://hooks.example.com/sweep', secret: 'sweep-secret' },
  'notifications.deleteChannel': { id: '1' },
  'notifications.createRule': { channelId: '1', event: 'pool_no_worker', dagId: null, afterSeconds: 60, pool: 'gpu' },
  'notifications.deleteRule': { id: '1' },
  'notifications.retry': { id: '1' },
  'dags.list': { search: 'sweep', sort: 'id', direction: 'asc', limit: 50, offset: 0 },
  'dags.get': { id: 'sweep' },
  'dags.versions': { id: 'sweep' },
  'dags.save': { spec: { id: 'sweep', name: 'Sweep', tasks: [{ id: 'one', type: 'noop', config: { note: 'x', list: [1, 'y'] } }] } },
  'dags.trigger': { id: 'sweep', requestKey: 'sweep-key', params: { note: 'text' } },
  'dags.setPaused': { id: 'sweep', paused: true },
  'dags.setCatchup': { id: 'sweep', catchup: { policy: 'latest' } },
  'runs.timeline': { runId: '1' },
  'runs.result': { jobId: '1' },
  'runs.attempts': { jobId: '1' },
  'runs.logChunks': { jobId: '1', fence: 1, afterSeq: 0 },
  'runs.list': { dag: 'sweep', state: 'failed', trigger: 'manual', from: '2026-01-01T00:00:00Z', to: '2026-02-01T00:00:00Z', order: 'oldest', limit: '10' },
};
