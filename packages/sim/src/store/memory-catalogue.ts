import {
  canonicalJson,
  heldKeyOf,
  requestFingerprintText,
  firstSlot,
  NotFoundError,
  assertResourcesFit,
  parseDagSpec,
  resolveRunParams,
  shardOf,
  specsEqual,
  type DagRow,
  type DagSpec,
  type DagSpecInput,
  type DagVersionRow,
} from '@fenceline/core';
import { type CatalogueStore, type PutDagAnswer, type PutDagOptions, type ListDagsQuery, type TriggerOptions, type TriggeredRun } from '@fenceline/core/store';
import { date, dagRowOf, runRowOf, type MemDag } from './memory-rows';
import { checkFiledRequest, heldKeySlot, type MemoryTables } from './memory-tables';

/** DAG specs and their versions, pausing and manual triggers, in memory (CatalogueStore; its backfills are memory-backfills.ts). */
export class MemoryCatalogue implements Omit<CatalogueStore, 'now' | 'createBackfill' | 'getBackfill' | 'listBackfills' | 'cancelBackfill'> {
  constructor(private readonly tables: MemoryTables) {}

  /** With a request key, a repeated put returns the answer kept for the key and writes nothing, as the SQL store's does. */
  async putDag(input: DagSpecInput, shardCount: number, options: PutDagOptions = {}): Promise<PutDagAnswer> {
    const spec = parseDagSpec(input);
    const held = heldKeyOf(options, () => requestFingerprintText('putDag', spec.id, spec));
    if (held === null) return this.put(spec, shardCount);
    const kept = this.tables.dagRequestKeys.get(heldKeySlot(spec.id, held));
    if (kept) {
      checkFiledRequest(held, kept.fingerprint);
      return { dagId: spec.id, version: kept.version, created: kept.created, repeated: true };
    }
    const answer = this.put(spec, shardCount);
    this.tables.dagRequestKeys.set(heldKeySlot(spec.id, held), { version: answer.version, created: answer.created, fingerprint: held.fingerprint });
    return answer;
  }

  /** Synchronous, so that a keyed put's check and its key are written with no other call between them. */
  private put(spec: DagSpec, shardCount: number): PutDagAnswer {
    // A task that consumes a limit that does not exist, or more than it has, could never run.
    if (spec.tasks.some((t) => t.resources)) assertResourcesFit(spec, new Map([...this.tables.resourceLimits].map(([name, l]) => [name, l.capacity])));
    const now = this.tables.nowMs();
    const head = this.tables.dags.get(spec.id);
    if (!head) {
      const shard = shardOf(spec.id, shardCount);
      const dag: MemDag = { id: spec.id, shard, version: 1, paused: spec.paused, nextRunAtMs: firstSlot(spec.schedule, now), createdAtMs: now, updatedAtMs: now };
      this.tables.dags.set(spec.id, dag);
      this.tables.versions.set(spec.id, [{ dagId: spec.id, version: 1, spec, createdAt: date(now) }]);
      this.tables.indexDue(dag);
      this.tables.emit({ op: 'dag:put', atMs: now, dagId: spec.id, shard, version: 1, nextRunAtMs: dag.nextRunAtMs, paused: dag.paused });
      this.tables.publish({ kind: 'dag-changed', shard, dagId: spec.id });
      return { dagId: spec.id, version: 1, created: true };
    }
    const current = this.tables.specOf(head);
    if (specsEqual(current, spec)) return { dagId: spec.id, version: head.version, created: false };
    const version = head.version + 1;
    this.tables.versions.get(spec.id)!.push({ dagId: spec.id, version, spec, createdAt: date(now) });
    head.version = version;
    head.updatedAtMs = now;
    // An edit that keeps the schedule keeps the next slot, so it neither moves nor skips one.
    if (canonicalJson(current.schedule) !== canonicalJson(spec.schedule)) {
      head.nextRunAtMs = firstSlot(spec.schedule, now);
      this.tables.indexDue(head);
    }
    this.tables.emit({ op: 'dag:put', atMs: now, dagId: spec.id, shard: head.shard, version, nextRunAtMs: head.nextRunAtMs, paused: head.paused });
    this.tables.publish({ kind: 'dag-changed', shard: head.shard, dagId: spec.id });
    return { dagId: spec.id, version, created: true };
  }

  async getDag(dagId: string): Promise<DagRow> {
    const dag = this.tables.dags.get(dagId);
    if (!dag) throw new NotFoundError(`DAG ${dagId} does not exist`, { dagId });
    return dagRowOf(dag, this.tables.specOf(dag));
  }

  async listDagVersions(dagId: string): Promise<DagVersionRow[]> {
    return (this.tables.versions.get(dagId) ?? []).map((v) => ({ ...v }));
  }

  async listDags(query: ListDagsQuery): Promise<{ rows: DagRow[]; total: number }> {
    const limit = Math.min(Math.max(query.limit ?? 50, 1), 1_000);
    const offset = Math.max(query.offset ?? 0, 0);
    const desc = query.direction === 'desc';
    const search = query.search?.trim().toLowerCase();
    const all = [...this.tables.dags.values()].filter((d) => !search || d.id.toLowerCase().includes(search));
    const sort = query.sort ?? 'id';
    const byId = (a: MemDag, b: MemDag): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
    all.sort((a, b) => {
      if (sort !== 'id') {
        const av = sort === 'nextRunAt' ? a.nextRunAtMs : a.updatedAtMs;
        const bv = sort === 'nextRunAt' ? b.nextRunAtMs : b.updatedAtMs;
        // NULLS LAST in either direction, as the SQL store orders them.
        if (av === null && bv !== null) return 1;
        if (bv === null && av !== null) return -1;
        if (av !== null && bv !== null && av !== bv) return desc ? bv - av : av - bv;
      }
      return desc ? byId(b, a) : byId(a, b);
    });
    return { rows: all.slice(offset, offset + limit).map((d) => dagRowOf(d, this.tables.specOf(d))), total: all.length };
  }

  async setPaused(dagId: string, paused: boolean): Promise<DagRow> {
    const dag = this.tables.dags.get(dagId);
    if (!dag) throw new NotFoundError(`DAG ${dagId} does not exist`, { dagId });
    const now = this.tables.nowMs();
    dag.paused = paused;
    dag.updatedAtMs = now;
    this.tables.indexDue(dag);
    this.tables.emit({ op: 'dag:paused', atMs: now, dagId, paused });
    this.tables.publish({ kind: 'dag-changed', shard: dag.shard, dagId: dag.id });
    return dagRowOf(dag, this.tables.specOf(dag));
  }

  async triggerRun(dagId: string, options: TriggerOptions = {}): Promise<TriggeredRun> {
    const held = heldKeyOf(options, () => requestFingerprintText('triggerRun', dagId, { params: options.params ?? {} }));
    const dag = this.tables.dags.get(dagId);
    if (!dag) throw new NotFoundError(`DAG ${dagId} does not exist`, { dagId });
    const keyed = held === null ? undefined : this.tables.requestKeys.get(heldKeySlot(dagId, held));
    if (held !== null && keyed !== undefined) {
      checkFiledRequest(held, keyed.fingerprint);
      return { ...runRowOf(this.tables.runs.get(keyed.runId)!), repeated: true };
    }
    // Checked against the version the run pins, before anything is written.
    const params = resolveRunParams(this.tables.specOf(dag).params ?? {}, options.params ?? {});
    // The SQL store retries a collision on (dag_id, scheduled_at) with clock_timestamp(),
    // which moves on by microseconds; virtual time stands still within an event, so the
    // retry here moves on by one millisecond instead.
    const now = this.tables.nowMs();
    for (let k = 0; k < 3; k++) {
      if (this.tables.rules.slotTaken(dagId, now + k)) continue;
      const run = this.tables.insertRun(dag, now + k, 'manual', null, null, params);
      if (held !== null) this.tables.requestKeys.set(heldKeySlot(dagId, held), { runId: run.id, fingerprint: held.fingerprint });
      this.tables.publish({
        kind: 'run-queued',
        shard: dag.shard,
        runId: run.id,
        dagId: run.dagId,
        dagVersion: run.dagVersion,
        scheduledAt: date(run.scheduledAtMs).toISOString(),
        params: { ...params },
      });
      return runRowOf(run);
    }
    throw new Error(`could not queue a manual run of ${dagId}: scheduled_at collided three times`);
  }
}
