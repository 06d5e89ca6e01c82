import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotFoundError } from '@fenceline/core';
import { type SchedulerNode } from '@fenceline/core/engine';
import { type NoticeStore, type WorkerCredentialStore } from '@fenceline/core/store';
import { WorkerAuth } from '../src/api/worker-auth';
import { setInternalErrorLog } from '../src/api/opaque-errors';
import { createSchedulerServer } from '../src/http';
import type { Logger, LogLevel } from '@fenceline/telemetry/log';

/** What a failed statement's error looks like: the statement, then every parameter it was given. */
const STATEMENT_ERROR = 'Failed query: insert into results (job_id, output) values ($1, $2)\nparams: 7,{"secret":"another-callers-output"}';

/**
 * A node whose writes fail as a broken store would, behind the real HTTP server, router and
 * error formatter: the answer must carry an opaque id only, and the log the detail under it.
 */
/** A well-formed session secret; the node under test never checks it. */
const SESSION = 'session-for-opaque-error-tests-0123456789';

function failingNode(): SchedulerNode {
  const fail = async (): Promise<never> => {
    throw new Error(STATEMENT_ERROR);
  };
  return {
    nodeId: 'node-under-test',
    metrics: { inc: () => undefined },
    protocol: {
      complete: fail,
      completeMany: fail,
      register: fail,
      release: async () => {
        throw new NotFoundError('job 7 does not exist', { jobId: '7' });
      },
    },
  } as unknown as SchedulerNode;
}

describe('scheduler: unexpected errors', () => {
  const logged: { level: LogLevel; msg: string; fields: Record<string, unknown> }[] = [];
  const token = 'token-for-opaque-error-tests';
  let url: string;
  let close: () => Promise<void>;
  beforeAll(async () => {
    const capture: Logger = { log: (level, msg, fields = {}) => void logged.push({ level, msg, fields }), enabled: () => true, child: () => capture };
    setInternalErrorLog(capture);
    // Development mode with this test's fleet token: the store is never asked.
    const auth = new WorkerAuth({ mode: 'dev', devToken: token, store: {} as WorkerCredentialStore & NoticeStore, nowMs: () => 0 });
    const server = createSchedulerServer(failingNode(), auth);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => new Promise((resolve) => server.close(() => resolve()));
  });
  afterAll(async () => close?.());

  const post = async (path: string, body: unknown): Promise<{ status: number; text: string }> => {
    const res = await fetch(`${url}/trpc/${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, text: await res.text() };
  };

  it('answers 500 with an opaque id on the hot path and the adapter path, and logs the detail under it', async () => {
    const complete = { workerId: 'w', session: SESSION, jobId: '7', fence: 1, output: { mine: true } };
    for (const [path, body] of [
      ['complete', complete],
      ['complete?batch=1', { 0: complete }],
      ['register', { workerId: 'w', slots: 1 }],
    ] as const) {
      const answer = await post(path, body);
      expect(answer.status, answer.text).toBe(500);
      expect(answer.text).not.toMatch(/Failed query|params|insert into|another-callers-output|stack|\.ts:/);
      const parsed = JSON.parse(answer.text) as { error: { message: string; data: { code: string } } } | { error: { message: string; data: { code: string } } }[];
      const error = (Array.isArray(parsed) ? parsed[0]! : parsed).error;
      expect(error.data.code).toBe('INTERNAL_SERVER_ERROR');
      const id = /^internal error; id ([0-9a-f]{16})$/.exec(error.message)?.[1];
      expect(id, error.message).toBeDefined();
      const entries = logged.filter((e) => e.fields.errorId === id);
      expect(entries).toHaveLength(1);
      expect(entries[0]).toMatchObject({ level: 'error', fields: { path: path.split('?')[0], nodeId: 'node-under-test' } });
      // The log names the failure but never quotes the statement's parameters.
      expect(entries[0]!.fields.error).toMatch(/^a store statement failed/);
      expect(JSON.stringify(entries[0])).not.toContain('another-callers-output');
    }
  });

  it('keeps a typed refusal’s code and words', async () => {
    const answer = await post('release', { workerId: 'w', session: SESSION, jobId: '7', fence: 1 });
    expect(answer.status).toBe(404);
    const { error } = JSON.parse(answer.text) as { error: { message: string; data: { fenceline: { code: string } } } };
    expect(error.message).toBe('job 7 does not exist');
    expect(error.data.fenceline.code).toBe('NOT_FOUND');
  });
});
