/**
 * A valid input per console procedure: each field is replaced in turn by a NUL, a lone
 * surrogate and 5,000-deep nesting, and every answer must be a 4xx or a success, never a
 * 5xx, a statement or a stack. A procedure added later without a base here is still swept
 * with bad values at its input's root.
 */
export const CONSOLE_BASES: Record<string, unknown> = {
  'auth.signIn': { token: 'not-a-token' },
  'cluster.fairShare': { windowMs: 600_000 },
  'dags.list': { search: 'sweep', sort: 'id', direction: 'asc', limit: 50, offset: 0 },
  'dags.get': { id: 'sweep' },
  'dags.versions': { id: 'sweep' },
  'dags.save': { spec: { id: 'sweep', name: 'Sweep', tasks: [{ id: 'one', type: 'noop', config: { note: 'x', list: [1, 'y'] } }] } },
  'dags.trigger': { id: 'sweep', requestKey: 'sweep-key' },
  'dags.setPaused': { id: 'sweep', paused: true },
  'dags.setCatchup': { id: 'sweep', catchup: { policy: 'latest' } },
  'runs.timeline': { runId: '1' },
  'runs.result': { jobId: '1' },
};
