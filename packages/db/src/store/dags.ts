import { sql, type SQL } from 'drizzle-orm';
import {
  NotFoundError,
  canonicalJson,
  heldKeyOf,
  requestFingerprintText,
  type HeldKey,
  firstSlot,
  parseDagSpec,
  shardOf,
  specsEqual,
  type DagRow,
  type DagSpec,
  type DagSpecInput,
  type DagVersionRow,
} from '@fenceline/core';
import { type ListDagsQuery, type PutDagAnswer, type PutDagOptions } from '@fenceline/core/store';
import { array, firstRow, jsonb, rows, ts, type Db, type Executor } from './db';
import { noticeSql } from './notices';
import { checkSpecResources } from './resources';
import { checkStoredRequest, storedFingerprint } from './request-keys';
import { dagFromRow, dagVersionFromRow, toDate, toNumber } from './rows';

/** The current version's spec joined to the head row: what every DagRow read selects. */
const DAG_COLUMNS = sql`d.id, d.shard, d.current_version, d.paused, d.next_run_at, d.created_at, d.updated_at, v.spec`;
const DAG_FROM = sql`dags d join dag_versions v on v.dag_id = d.id and v.version = d.current_version`;

/** The first slot at or after store time `now`, or null for a manual schedule. */
function nextRunFor(spec: DagSpec, now: Date): Date | null {
  const slotMs = firstSlot(spec.schedule, now.getTime());
  return slotMs === null ? null : new Date(slotMs);
}

/**
 * Validates, then stores a new immutable version unless the spec equals the current one.
 * The head row is locked FOR UPDATE so two concurrent puts of one DAG serialise and cannot
 * both create the same version number; a racing first put is caught by the insert's
 * ON CONFLICT and re-read as an existing DAG. next_run_at is recomputed from the store's
 * clock only when the DAG is new or its schedule changed, so an edit of a task does not
 * move (or skip) the next slot.
 */
export async function putDag(db: Db, input: DagSpecInput, shardCount: number, options: PutDagOptions = {}): Promise<PutDagResult> {
  // Both throw before anything is written: InvalidDagError listing every issue, InvalidInputError for the key.
  const spec = parseDagSpec(input);
  const held = heldKeyOf(options, () => requestFingerprintText('putDag', spec.id, spec));
  return db.transaction(async (tx) => {
    if (held === null) return putParsedDag(tx, spec, await storeNow(tx), shardCount);
    return putKeyedDag(tx, spec, held, await storeNow(tx), shardCount);
  });
}

/**
 * A put with a request key. The head row's lock serialises it with every other put of the
 * DAG, so a key read under it is final: a key already held answers what it stored, and a
 * new one is stored with the put's answer before the transaction commits. A DAG that does
 * not exist yet holds no key; two first puts with one key meet at the head row's insert,
 * and the one that loses takes the lock and finds the winner's key. The key is read only
 * under the lock: read before it, a racing first put could commit the DAG and its key
 * between the read and the lock, and the repeat would be stored a second time.
 */
async function putKeyedDag(tx: Executor, spec: DagSpec, held: HeldKey, now: Date, shardCount: number): Promise<PutDagResult> {
  const earlier = async (): Promise<PutDagResult | null> => {
    const row = await firstRow(
      tx,
      sql`select version, created, request_fingerprint from dag_request_keys where dag_id = ${spec.id} and request_owner = ${held.owner} and request_key = ${held.key}`,
    );
    if (!row) return null;
    // The same key with another spec: refused, and the transaction writes nothing.
    checkStoredRequest(held, row.request_fingerprint);
    return { dagId: spec.id, version: toNumber(row.version), created: row.created === true, repeated: true };
  };
  const answer = await putParsedDag(tx, spec, now, shardCount, earlier);
  if (answer.repeated) return answer;
  await rows(
    tx,
    sql`insert into dag_request_keys (dag_id, request_key, request_owner, request_fingerprint, version, created)
        values (${spec.id}, ${held.key}, ${held.owner}, ${storedFingerprint(held)}, ${answer.version}, ${answer.created})`,
  );
  return answer;
}

/**
 * Stores several specs in one transaction: every spec is validated before anything is
 * written, and either all of them are stored or, when any statement fails, none is. The
 * specs are written in id order so two concurrent batches that share DAGs lock their head
 * rows in the same order and cannot deadlock; the results come back in input order. A DAG
 * named twice gets one version per distinct spec, exactly as two puts one after the other.
 */
export async function putDags(db: Db, inputs: DagSpecInput[], shardCount: number): Promise<PutDagResult[]> {
  const specs = inputs.map((input) => parseDagSpec(input));
  const order = specs.map((_, i) => i).sort((a, b) => compareIds(specs[a]!.id, specs[b]!.id) || a - b);
  return db.transaction(async (tx) => {
    const now = await storeNow(tx);
    const results: PutDagResult[] = new Array(specs.length);
    for (const i of order) results[i] = await putParsedDag(tx, specs[i]!, now, shardCount);
    return results;
  });
}

export type PutDagResult = PutDagAnswer;

function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

async function storeNow(tx: Executor): Promise<Date> {
  return toDate((await firstRow(tx, sql`select now() as now`))?.now);
}

/**
 * The body of a put, inside the caller's transaction, at store time `now`. `afterLock`, when
 * given, is asked whenever the head row of a DAG that exists is locked (found at once, or
 * after losing the race to create it), and its answer (a request key already held) ends
 * the put.
 */
async function putParsedDag(tx: Executor, spec: DagSpec, now: Date, shardCount: number, afterLock?: () => Promise<PutDagResult | null>): Promise<PutDagResult> {
  await checkSpecResources(tx, spec);
  let head = await lockDag(tx, spec.id);
  // Whenever the head row is locked, however it came to exist (it may have been created
  // by a racing put an instant ago), a request key already held ends the put.
  if (head && afterLock) {
    const earlier = await afterLock();
    if (earlier) return earlier;
  }
  if (!head) {
    const shard = shardOf(spec.id, shardCount);
    const nextRunAt = nextRunFor(spec, now);
    const inserted = await firstRow(
      tx,
      sql`insert into dags (id, shard, current_version, paused, next_run_at)
          values (${spec.id}, ${shard}, 1, ${spec.paused}, ${nextRunAt === null ? null : ts(nextRunAt)})
          on conflict (id) do nothing
          returning id`,
    );
    if (inserted) {
      await rows(tx, sql`insert into dag_versions (dag_id, version, spec) values (${spec.id}, 1, ${jsonb(spec)})`);
      await rows(tx, noticeSql({ kind: 'dag-changed', shard, dagId: spec.id }));
      return { dagId: spec.id, version: 1, created: true };
    }
    head = await lockDag(tx, spec.id);
    if (!head) throw new Error(`DAG ${spec.id} vanished while it was being created`);
    const earlier = afterLock ? await afterLock() : null;
    if (earlier) return earlier;
  }
  if (specsEqual(head.spec, spec)) return { dagId: spec.id, version: head.version, created: false };
  const version = head.version + 1;
  const scheduleChanged = canonicalJson(head.spec.schedule) !== canonicalJson(spec.schedule);
  const nextRunAt = scheduleChanged ? nextRunFor(spec, now) : null;
  await rows(tx, sql`insert into dag_versions (dag_id, version, spec) values (${spec.id}, ${version}, ${jsonb(spec)})`);
  await rows(
    tx,
    sql`update dags set current_version = ${version}, updated_at = now()
        ${scheduleChanged ? sql`, next_run_at = ${nextRunAt === null ? null : ts(nextRunAt)}` : sql``}
        where id = ${spec.id}`,
  );
  await rows(tx, noticeSql({ kind: 'dag-changed', shard: head.shard, dagId: spec.id }));
  return { dagId: spec.id, version, created: true };
}

async function lockDag(tx: Executor, dagId: string): Promise<{ version: number; shard: number; spec: DagSpec } | undefined> {
  const row = await firstRow(tx, sql`select d.current_version, d.shard, v.spec from ${DAG_FROM} where d.id = ${dagId} for update of d`);
  return row ? { version: toNumber(row.current_version), shard: toNumber(row.shard), spec: row.spec as DagSpec } : undefined;
}

export async function getDag(db: Executor, dagId: string): Promise<DagRow> {
  const row = await firstRow(db, sql`select ${DAG_COLUMNS} from ${DAG_FROM} where d.id = ${dagId}`);
  if (!row) throw new NotFoundError(`DAG ${dagId} does not exist`, { dagId });
  return dagFromRow(row);
}

export async function getDagVersion(db: Executor, dagId: string, version: number): Promise<DagVersionRow> {
  const row = await firstRow(db, sql`select dag_id, version, spec, created_at from dag_versions where dag_id = ${dagId} and version = ${version}`);
  if (!row) throw new NotFoundError(`DAG ${dagId} has no version ${version}`, { dagId, version });
  return dagVersionFromRow(row);
}

export async function getDagVersions(db: Executor, keys: { dagId: string; version: number }[]): Promise<DagVersionRow[]> {
  if (keys.length === 0) return [];
  const result = await rows(
    db,
    sql`select v.dag_id, v.version, v.spec, v.created_at
        from unnest(${array(
          keys.map((k) => k.dagId),
          'text',
        )}, ${array(
          keys.map((k) => k.version),
          'int',
        )}) as k(dag_id, version)
        join dag_versions v on v.dag_id = k.dag_id and v.version = k.version`,
  );
  return result.map(dagVersionFromRow);
}

export async function listDagVersions(db: Executor, dagId: string): Promise<DagVersionRow[]> {
  const result = await rows(db, sql`select dag_id, version, spec, created_at from dag_versions where dag_id = ${dagId} order by version`);
  return result.map(dagVersionFromRow);
}

/** Above this many DAGs an unfiltered list reports the planner's row estimate instead of counting. */
const EXACT_COUNT_LIMIT = 20_000;
const MAX_PAGE = 1_000;

/**
 * One page of DAGs. The page is cut from the head table by index (sort column, then id)
 * before the specs are joined, so only `limit` specs are read. An unfiltered total is the
 * planner's estimate once the table is large, because an exact count(*) of 100,000 rows
 * on every page view is wasted work for a number shown as "about".
 */
export async function listDags(db: Executor, query: ListDagsQuery): Promise<{ rows: DagRow[]; total: number }> {
  const limit = Math.min(Math.max(query.limit ?? 50, 1), MAX_PAGE);
  const offset = Math.max(query.offset ?? 0, 0);
  const direction = query.direction === 'desc' ? sql.raw('desc') : sql.raw('asc');
  const sortColumn = { id: 'id', nextRunAt: 'next_run_at', updatedAt: 'updated_at' }[query.sort ?? 'id'];
  const order: SQL =
    sortColumn === 'id'
      ? sql`d.id ${direction}`
      : // PostgreSQL's default null placement (last ascending, first descending) matches
        // the index, so a descending page is a backward index walk.
        sql`${sql.raw(`d.${sortColumn}`)} ${direction}, d.id ${direction}`;
  const search = query.search?.trim();
  const where: SQL = search ? sql`d.id ilike ${`%${escapeLike(search)}%`}` : sql`true`;
  const page = await rows(
    db,
    sql`with page as (select * from dags d where ${where} order by ${order} limit ${limit} offset ${offset})
        select ${DAG_COLUMNS} from page d join dag_versions v on v.dag_id = d.id and v.version = d.current_version
        order by ${order}`,
  );
  return { rows: page.map(dagFromRow), total: await countDags(db, where, Boolean(search)) };
}

async function countDags(db: Executor, where: SQL, filtered: boolean): Promise<number> {
  if (!filtered) {
    const estimate = await firstRow(db, sql`select reltuples::bigint as n from pg_class where oid = 'dags'::regclass`);
    const n = toNumber(estimate?.n ?? -1);
    if (n > EXACT_COUNT_LIMIT) return n;
  }
  const row = await firstRow(db, sql`select count(*) as n from dags d where ${where}`);
  return toNumber(row?.n ?? 0);
}

/** Escapes LIKE wildcards so a search for "a_b" matches that text, not "a" + any char + "b". */
function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

export async function setPaused(db: Db, dagId: string, paused: boolean): Promise<DagRow> {
  const row = await firstRow(
    db,
    sql`with w as (update dags set paused = ${paused}, updated_at = now() where id = ${dagId} returning *),
        n as (select pg_notify('fenceline', json_build_object('kind', 'dag-changed', 'shard', shard, 'dagId', id)::text) from w)
        select ${DAG_COLUMNS}, (select count(*) from n) as notified
        from w d join dag_versions v on v.dag_id = d.id and v.version = d.current_version`,
  );
  if (!row) throw new NotFoundError(`DAG ${dagId} does not exist`, { dagId });
  return dagFromRow(row);
}
