import type { KeyedRequestOptions } from '../request-keys';
import type { BackfillId, DagId } from '../ids';
import type { BackfillRow, DagRow, DagVersionRow, RunRow } from '../model';
import type { BackfillRequest } from '../backfill/plan';
import type { DagSpecInput } from '../spec';
import type { StoreTime } from './shared';

/**
 * The catalogue: DAG specs and their versions, pausing, and manual triggers. Operators
 * write it (console, CLI); every write is validated and tells the shard's leader.
 */
export interface CatalogueStore extends StoreTime {
  /**
   * Validates and stores a spec. A spec equal to the current version changes nothing;
   * otherwise a new immutable version is created and becomes current. Throws InvalidDagError.
   * With a `requestKey` (checked as checkRequestKey checks a trigger's), the answer is
   * stored with the key, its owner and the request's fingerprint for the DAG in the same
   * write: the same put of the DAG sent again by the key's owner writes nothing, even when
   * the DAG changed in between, and returns the first answer with `repeated: true`; the
   * owner's key sent with another spec throws KeyReusedError and writes nothing. Another
   * owner's key of the same text is a key of its own (KeyedRequestOptions).
   */
  putDag(spec: DagSpecInput, shardCount: number, options?: PutDagOptions): Promise<PutDagAnswer>;
  getDag(dagId: DagId): Promise<DagRow>;
  listDagVersions(dagId: DagId): Promise<DagVersionRow[]>;
  listDags(query: ListDagsQuery): Promise<{ rows: DagRow[]; total: number }>;
  setPaused(dagId: DagId, paused: boolean): Promise<DagRow>;
  /**
   * Queues a manual run at store time now; notifies the shard's leader. With a
   * `requestKey`, the same trigger of the DAG sent again by the key's owner queues nothing
   * and returns the run the first one queued, marked `repeated`, so a request sent twice (a
   * double click, a retry after a lost answer) makes one run; the key sent by its owner with
   * other params throws KeyReusedError. Throws InvalidInputError for a key that fails
   * checkRequestKey or for params the DAG's declaration refuses (`details.issues` names each
   * bad field as `params.NAME`), NotFoundError for a DAG that does not exist; a refused
   * trigger writes nothing.
   */
  triggerRun(dagId: DagId, options?: TriggerOptions): Promise<TriggeredRun>;
  /**
   * Records a backfill of the DAG over [from, to) (validated by planBackfill against the
   * DAG's current schedule, which pins the version whose slots it covers) and notifies the
   * shard's leader, which creates its runs. Throws InvalidInputError naming the field, or
   * NotFoundError for a DAG that does not exist; a refusal writes nothing. With a
   * `requestKey`, the same request of the DAG sent again by the key's owner returns the
   * backfill the first one started (`repeated: true`) and writes nothing, so a request sent
   * twice starts one; the key sent by its owner with another request throws KeyReusedError.
   */
  createBackfill(request: BackfillRequest): Promise<BackfillRow>;
  getBackfill(backfillId: BackfillId): Promise<BackfillRow>;
  listBackfills(query: ListBackfillsQuery): Promise<BackfillRow[]>;
  /**
   * running -> cancelled, so no more of its runs are created, and notifies the shard's
   * leader, which cancels its queued runs (LeaderStore.settleBackfill). A backfill that is
   * no longer running is returned as it is.
   */
  cancelBackfill(backfillId: BackfillId): Promise<BackfillRow>;
}

/** How a put is asked: with a request key, a repeated put returns the first answer (KeyedRequestOptions). */
export type PutDagOptions = KeyedRequestOptions;

/** What a put stored: the version now current, whether this put created it, and whether a request key made it a repeat. */
export interface PutDagAnswer {
  dagId: string;
  version: number;
  created: boolean;
  repeated?: boolean;
}

export interface ListDagsQuery {
  search?: string;
  limit?: number;
  offset?: number;
  sort?: 'id' | 'nextRunAt' | 'updatedAt';
  direction?: 'asc' | 'desc';
}

/** How a manual trigger identifies itself; see CatalogueStore.triggerRun. */
export interface TriggerOptions extends KeyedRequestOptions {
  /**
   * Values for the DAG's declared parameters, checked against the current version's
   * declaration (resolveRunParams) before anything is written; the run stores them with the
   * defaults of the ones left out.
   */
  params?: Record<string, unknown>;
}

/** A manual trigger's run; `repeated` when a request key made the trigger a repeat that queued nothing. */
export type TriggeredRun = RunRow & { repeated?: true };

/** Which backfills a read lists (CatalogueStore.listBackfills), newest first. */
export interface ListBackfillsQuery {
  dagId?: DagId;
  limit?: number;
}
