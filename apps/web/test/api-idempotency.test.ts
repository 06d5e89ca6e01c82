import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDagId, parseRunId } from '@fenceline/core';
import { type AuditAction } from '@fenceline/core/store';
import { secretHash } from '@fenceline/db/people';
import { startApiHttp } from './support/api-http';

/**
 * Idempotency keys over the HTTP API on a real PostgreSQL, with generated keys and bodies,
 * for every endpoint that takes one: a key is its caller's (another user's request with the
 * same key is a request of its own, audited as that user's), it names one request (the same
 * key with another body is refused 422 and writes nothing), a repeat gets the first answer,
 * and requests sent at once with one key write once.
 */

let api: Awaited<ReturnType<typeof startApiHttp>>;
/** Two operators, each with a token and the name the audit log records them under. */
let ann: { token: string; name: string };
let bob: { token: string; name: string };

/** The DAG whose runs the run action cases act on, a new run each. */
const triggerDag = parseDagId('keyed-trigger');

beforeAll(async () => {
  api = await startApiHttp();
  const operator = async () => {
    const token = await api.tokenFor('operator');
    const principal = await api.store.apiTokenPrincipal({ secretHash: secretHash(token) });
    return { token, name: principal!.user.name };
  };
  ann = await operator();
  bob = await operator();
  await api.store.putDag({ id: triggerDag, params: { batch: { type: 'integer', required: true } }, tasks: [{ id: 'one', type: 'noop', config: {} }] }, 4);
}, 120_000);
afterAll(async () => {
  await api?.stop();
}, 60_000);

interface Answer {
  status: number;
  body: Record<string, unknown> & { code?: string; message?: string; issues?: { field: string; message: string }[] };
}

async function post(path: string, token: string, body: unknown, key: string): Promise<Answer> {
  const res = await fetch(`${api.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': key },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Answer['body'] };
}

/**
 * One keyed endpoint as the cases drive it: the path and a body for a generated number (two
 * numbers, two different requests), what it wrote (counted), and the audit entry that names
 * what an answer made.
 */
interface Keyed {
  name: string;
  /** Makes what the endpoint acts on for one case (a DAG, a run), so cases do not meet. */
  prepare: () => Promise<string>;
  path: (target: string) => string;
  body: (target: string, n: number) => unknown;
  /** The first answer's status: 201 for a new thing, 202 for a stored action. */
  created: number;
  /** What the endpoint has written for the target, as a list of ids, in any order. */
  written: (target: string) => Promise<string[]>;
  /** The id an answer names, and the audit entry that records it. */
  idOf: (answer: Answer) => string;
  audit: { action: AuditAction; names: (entry: { dagId: string | null; target: string | null; details: Record<string, unknown> }, id: string) => boolean };
}

let cases = 0;
const unique = (prefix: string) => `${prefix}-${++cases}`;

const KEYED: Keyed[] = [
  {
    name: 'trigger',
    // A DAG of the case's own: a generated key may come again in a later case (fast-check
    // draws short keys often and repeats them while shrinking), and on a shared DAG that
    // later case would be a true repeat of an earlier one.
    prepare: async () => {
      const dag = parseDagId(unique('keyed-trigger'));
      await api.store.putDag({ id: dag, params: { batch: { type: 'integer', required: true } }, tasks: [{ id: 'one', type: 'noop', config: {} }] }, 4);
      return dag;
    },
    path: (dag) => `/dags/${dag}/trigger`,
    body: (_dag, n) => ({ params: { batch: n } }),
    created: 201,
    written: async (dag) => (await api.store.pageRuns({ dagId: parseDagId(dag), limit: 500 })).rows.map((r) => r.id),
    idOf: (a) => String(a.body.id),
    audit: { action: 'dag.triggered', names: (e, id) => e.details.runId === id },
  },
  {
    name: 'run action',
    prepare: async () => (await api.store.triggerRun(triggerDag, { params: { batch: 0 } })).id,
    path: (run) => `/runs/${run}/actions`,
    body: (_run, n) => ({ kind: 'cancel', reason: `reason ${n}` }),
    created: 202,
    written: async (run) => (await api.store.listRunActions(parseRunId(run))).map((a) => a.id),
    idOf: (a) => String(a.body.id),
    audit: { action: 'run.action_requested', names: (e, id) => e.details.actionId === id },
  },
  {
    name: 'backfill',
    // A DAG of the case's own, for the reason the trigger's case gives.
    prepare: async () => {
      const dag = parseDagId(unique('keyed-backfill'));
      await api.store.putDag({ id: dag, schedule: { kind: 'interval', everyMs: 3_600_000 }, tasks: [{ id: 'one', type: 'noop', config: {} }] }, 4);
      return dag;
    },
    path: () => '/backfills',
    body: (dag, n) => ({ dagId: dag, from: '2026-01-01T00:00:00Z', to: new Date(Date.UTC(2026, 0, 1, 1 + (n % 20))).toISOString() }),
    created: 201,
    written: async (dag) => (await api.store.listBackfills({ dagId: parseDagId(dag), limit: 1_000 })).map((b) => b.id),
    idOf: (a) => String(a.body.id),
    audit: { action: 'backfill.created', names: (e, id) => e.target === id },
  },
  {
    name: 'apply',
    // A DAG of the case's own, so each apply below is the one that makes its version.
    prepare: async () => unique('keyed-apply'),
    path: () => '/dags',
    body: (dag, n) => ({ id: dag, description: `take ${n}`, tasks: [{ id: 'one', type: 'noop', config: {} }] }),
    created: 201,
    written: async (dag) => (await api.store.listDagVersions(parseDagId(dag)).catch(() => [])).map((v) => `${v.dagId}@${v.version}`),
    idOf: (a) => `${String(a.body.dagId)}@${String(a.body.version)}`,
    audit: { action: 'dag.saved', names: (e, id) => `${e.dagId}@${String(e.details.version)}` === id },
  },
];

const auditOf = async (action: AuditAction) => api.store.listAudit({ action, limit: 500 });

/** A key as a client makes one: 1 to 100 letters, digits, _ or -. */
const keyArb = fc.stringMatching(/^[A-Za-z0-9_-]{1,100}$/);

describe('HTTP API: Idempotency-Key belongs to its caller and its request', () => {
  for (const e of KEYED) {
    it(`${e.name}: two users with one key each get their own; a repeat gets the first answer; another body is refused 422 and writes nothing`, async () => {
      await fc.assert(
        fc.asyncProperty(keyArb, fc.integer({ min: 1, max: 1_000_000 }), fc.integer({ min: 1, max: 1_000_000 }), fc.boolean(), async (key, n, other, bobSame) => {
          fc.pre(n !== other && n % 20 !== other % 20);
          const target = await e.prepare();
          // Ann's request: a new thing, audited as hers.
          const first = await post(e.path(target), ann.token, e.body(target, n), key);
          expect(first.status, JSON.stringify(first.body)).toBe(e.created);
          // Bob, with the same key and the same body or another: a request of his own, never Ann's answer.
          const bobs = await post(e.path(target), bob.token, e.body(target, bobSame ? n : other), key);
          expect(bobs.status, JSON.stringify(bobs.body)).toBeLessThan(300);
          expect(bobs.body.repeated).toBeUndefined();
          if (e.name !== 'apply' || !bobSame) expect(e.idOf(bobs)).not.toBe(e.idOf(first));
          // Ann again, the same request: the first answer, nothing written.
          const before = (await e.written(target)).sort();
          const audits = (await api.store.listAudit({ limit: 500 })).length;
          const again = await post(e.path(target), ann.token, e.body(target, n), key);
          expect(again.status).toBe(e.name === 'backfill' ? 200 : first.status);
          expect(again.body).toEqual(e.name === 'backfill' ? { ...first.body, repeated: true } : first.body);
          // Ann with the key and another body: refused, naming the header, and nothing written.
          const reused = await post(e.path(target), ann.token, e.body(target, other), key);
          expect(reused.status).toBe(422);
          expect(reused.body.code).toBe('KEY_REUSED');
          expect(reused.body.issues).toEqual([{ field: 'Idempotency-Key', message: expect.stringContaining('different request') }]);
          expect(reused.body.message).toContain('Idempotency-Key');
          expect((await e.written(target)).sort()).toEqual(before);
          expect((await api.store.listAudit({ limit: 500 })).length).toBe(audits);
          // The audit log names each user for their own, once each.
          const entries = await auditOf(e.audit.action);
          const annsEntries = entries.filter((a) => e.audit.names(a, e.idOf(first)));
          expect(annsEntries.map((a) => a.actor)).toEqual([ann.name]);
          if (e.name !== 'apply' || !bobSame) expect(entries.filter((a) => e.audit.names(a, e.idOf(bobs))).map((a) => a.actor)).toEqual([bob.name]);
        }),
        { numRuns: 6 },
      );
    }, 120_000);

    it(`${e.name}: one key sent several times at once writes once; each answer is the first or 409`, async () => {
      await fc.assert(
        fc.asyncProperty(keyArb, fc.integer({ min: 1, max: 1_000_000 }), fc.integer({ min: 2, max: 5 }), async (key, n, copies) => {
          const target = await e.prepare();
          const before = await e.written(target);
          const answers = await Promise.all(Array.from({ length: copies }, () => post(e.path(target), ann.token, e.body(target, n), key)));
          for (const a of answers) expect([200, e.created, 409], JSON.stringify(a.body)).toContain(a.status);
          const answered = answers.filter((a) => a.status !== 409);
          expect(answered.length).toBeGreaterThan(0);
          expect(new Set(answered.map(e.idOf)).size).toBe(1);
          for (const a of answers.filter((x) => x.status === 409)) {
            expect(a.body).toMatchObject({ code: 'CONFLICT', issues: [{ field: 'Idempotency-Key' }] });
          }
          const after = await e.written(target);
          expect(after.filter((id) => !before.includes(id))).toEqual([e.idOf(answered[0]!)]);
          expect((await auditOf(e.audit.action)).filter((a) => e.audit.names(a, e.idOf(answered[0]!)) && a.actor === ann.name)).toHaveLength(1);
        }),
        { numRuns: 4 },
      );
    }, 120_000);
  }
});
