/**
 * A valid input per worker procedure, naming jobs no worker holds: each field is replaced
 * in turn by text and JSON the store cannot take, and every answer must be a 4xx or a
 * success that names the field, never a 5xx, a statement or a stack. A procedure that
 * takes input and has no base here fails the sweeps (procedure-bases.ts), so one added
 * later gets its fields swept.
 */
/** A well-formed session no worker registered: writes with it reach the store's checks and are refused there. */
const SESSION = 'sweeper-session-0123456789abcdef0123456789';

export const WORKER_BASES: Record<string, unknown> = {
  register: { workerId: 'sweeper', slots: 1, meta: { host: 'box', tags: ['a'] } },
  poll: { workerId: 'sweeper', session: SESSION, slots: 1, free: 1, waitMs: 0 },
  renew: { workerId: 'sweeper', session: SESSION, leases: [{ jobId: '987654321', fence: 1 }] },
  renewMany: { renewals: [{ workerId: 'sweeper', session: SESSION, jobId: '987654321', fence: 1 }] },
  complete: { workerId: 'sweeper', session: SESSION, jobId: '987654321', fence: 1, output: { answer: 'x', list: [1, 'y'] }, logs: 'line' },
  completeMany: { workerId: 'sweeper', session: SESSION, results: [{ jobId: '987654321', fence: 1, output: { answer: 'x' }, logs: 'line' }] },
  fail: { workerId: 'sweeper', session: SESSION, jobId: '987654321', fence: 1, error: 'boom', retryable: true, logs: 'line' },
  failMany: { workerId: 'sweeper', session: SESSION, failures: [{ jobId: '987654321', fence: 1, error: 'boom', retryable: true, logs: 'line' }] },
  release: { workerId: 'sweeper', session: SESSION, jobId: '987654321', fence: 1, reason: 'stopping' },
  releaseMany: { workerId: 'sweeper', session: SESSION, releases: [{ jobId: '987654321', fence: 1, reason: 'stopping' }] },
  upstream: { workerId: 'sweeper', session: SESSION, jobId: '987654321', fence: 1, taskIds: ['extract', 'load.csv'] },
};
