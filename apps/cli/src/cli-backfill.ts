import { LIMITS, InvalidInputError, parseBackfillId, parseDagId, parseInstant, type BackfillId, type BackfillMode, type BackfillRow, type DagId } from '@fenceline/core';
import { type AuditStore, type CatalogueStore } from '@fenceline/core/store';
import { flag, fmt, hasFlag, need, positional, UsageError } from './cli-args';
import type { ApiClient } from './cli-http-client';
import { ApiError, isTransient } from './cli-http-client';
import { cliAudit, osUser } from './cli-people';
import { cliKeyOwner, commandLine, lostInTransit, requestKeyOf, sendOnce } from './cli-once';

export const BACKFILL_HELP = `  backfill <DAG> --from ISO --to ISO [--max-active N] [--mode skip|rerun] [--yes] [--no-wait] [--idempotency-key KEY]
                                   one run per schedule slot in [from, to), at most N unfinished at once
                                   (default 4); a slot that has a run is skipped, or with --mode rerun
                                   its ended run is cleared to run again;
                                   above ${LIMITS.backfillConfirmSlots} slots it needs --yes; prints its progress until it ends
                                   (exit 0 when done, 1 when cancelled); a request whose answer is lost
                                   is sent again with the same key, so it starts one backfill
  backfill list [DAG] [--limit N]  recent backfills with their progress (20 by default)
  backfill status <ID>             one backfill's progress
  backfill cancel <ID>             create no more runs; its queued runs end cancelled`;

type BackfillStore = CatalogueStore & AuditStore;

/** What `backfill` asks for a new backfill: the range as the operator typed it, checked where it lands. */
export interface BackfillAsk {
  dagId: DagId;
  from: string;
  to: string;
  maxActiveRuns: number | undefined;
  confirm: boolean;
  mode: BackfillMode | undefined;
  /**
   * Always sent: --idempotency-key, else a new key per command, so a request the CLI sends
   * again after a lost answer starts nothing and follows the first backfill.
   */
  requestKey: string;
}

/**
 * The backfill commands' reads and writes, against the store or the HTTP API. Both check
 * the same (the store refuses what the console refuses, naming the field) and audit each
 * change once: the store path as the CLI's OS user, the API as the token's owner.
 */
export interface BackfillOps {
  list(dagId: DagId | undefined, limit: number): Promise<BackfillRow[]>;
  get(id: BackfillId): Promise<BackfillRow>;
  create(ask: BackfillAsk): Promise<BackfillRow>;
  cancel(id: BackfillId): Promise<BackfillRow>;
  /** Whether a refusal of `create` is the one a large backfill gets without --yes. */
  needsConfirm(err: unknown): boolean;
  /** Whether a failure of `create` may have left it unanswered, so sending it again with its key is safe. */
  transient(err: unknown): boolean;
}

/** The backfill commands against the store, auditing as the CLI's OS user. */
export function storeBackfills(store: BackfillStore): BackfillOps {
  return {
    list: (dagId, limit) => store.listBackfills({ dagId, limit }),
    get: (id) => store.getBackfill(id),
    create: async (ask) => {
      // An unreadable date goes to the store as an invalid one, which refuses it by its field.
      const b = await store.createBackfill({ ...ask, from: new Date(ask.from), to: new Date(ask.to), requestedBy: osUser(), requestOwner: cliKeyOwner() });
      if (b.repeated) return b;
      const details = { backfillId: b.id, from: b.fromAt.toISOString(), to: b.toAt.toISOString(), slots: b.totalSlots, maxActiveRuns: b.maxActiveRuns };
      await cliAudit(store, { action: 'backfill.created', dagId: b.dagId, target: b.id, details });
      return b;
    },
    cancel: async (id) => {
      const before = await store.getBackfill(id);
      const b = await store.cancelBackfill(id);
      if (before.state === 'running' && b.state === 'cancelled') await cliAudit(store, { action: 'backfill.cancelled', dagId: b.dagId, target: b.id });
      return b;
    },
    needsConfirm: (err) => err instanceof InvalidInputError && err.details.field === 'confirm',
    transient: lostInTransit,
  };
}

/** The backfill commands over the HTTP API (`--url`); the API checks the role and audits each change. */
export function httpBackfills(api: ApiClient): BackfillOps {
  const path = (id: BackfillId) => `/backfills/${id}`;
  return {
    list: async (dagId, limit) => ((await api.get('/backfills', { dag: dagId, limit: String(limit) })) as { backfills: BackfillRow[] }).backfills,
    get: async (id) => (await api.get(path(id))) as BackfillRow,
    create: async ({ requestKey, ...body }) => (await api.post('/backfills', { body, idempotencyKey: requestKey })) as BackfillRow,
    cancel: async (id) => (await api.post(`${path(id)}/cancel`)) as BackfillRow,
    needsConfirm: (err) => err instanceof ApiError && err.issues.some((i) => i.field === 'confirm'),
    transient: isTransient,
  };
}

const BAR_WIDTH = 30;
const POLL_MS = 1_000;

/** Slots dealt with: skipped ones and the runs that ended. */
function doneSlots(b: BackfillRow): number {
  return b.skippedSlots + b.finishedRuns;
}

/** One line of progress: a bar of slots done, the counts, and the state. */
export function progressLine(b: BackfillRow): string {
  const done = doneSlots(b);
  const filled = Math.round((done / b.totalSlots) * BAR_WIDTH);
  const bar = `${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}`;
  const percent = Math.floor((done / b.totalSlots) * 100);
  return `backfill ${b.id} [${bar}] ${percent}% ${done}/${b.totalSlots} slots: ${b.createdRuns} runs created, ${b.skippedSlots} skipped, ${b.activeRuns} unfinished; ${b.state}`;
}

/** Whether nothing about the backfill will change any more. */
function settled(b: BackfillRow): boolean {
  return b.state !== 'running' && b.endedAt !== null && b.activeRuns === 0;
}

/** Prints the progress until the backfill has settled; exit code 0 when done, 1 when it was cancelled. */
async function follow(ops: BackfillOps, first: BackfillRow): Promise<number> {
  const tty = process.stdout.isTTY === true;
  let b = first;
  let last = '';
  for (;;) {
    const line = progressLine(b);
    if (line !== last) {
      // A terminal redraws one line; a log or a pipe gets a line per change.
      if (tty) process.stdout.write(`\r\x1b[2K${line}`);
      else console.log(line);
      last = line;
    }
    if (settled(b)) break;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    b = await ops.get(b.id);
  }
  if (tty) process.stdout.write('\n');
  return b.state === 'done' ? 0 : 1;
}

function textFlag(args: string[], name: string): string {
  const text = flag(args, name);
  if (text === undefined) throw new UsageError(`backfill needs ${name} ISO`);
  // Checked here so that a bad instant is refused the same way against the store or the API.
  parseInstant(text, name.replace(/^--/, ''));
  return text;
}

/** The `backfill` commands, against the store or the API (`ops`), printing the same lines either way. */
export async function backfillCommand(ops: BackfillOps, args: string[]): Promise<number> {
  const [first, second] = positional(args);
  switch (first) {
    case 'list': {
      const limit = flag(args, '--limit') ?? '20';
      if (!/^[0-9]{1,3}$/.test(limit) || Number(limit) < 1 || Number(limit) > 200) throw new UsageError(`--limit: must be a whole number from 1 to 200, got "${limit}"`);
      const rows = await ops.list(second === undefined ? undefined : parseDagId(second, 'DAG'), Number(limit));
      console.table(
        rows.map((b) => ({
          id: b.id,
          dag: b.dagId,
          from: fmt(b.fromAt),
          to: fmt(b.toAt),
          state: b.state,
          progress: `${doneSlots(b)}/${b.totalSlots}`,
          created: b.createdRuns,
          skipped: b.skippedSlots,
          unfinished: b.activeRuns,
          by: b.requestedBy,
        })),
      );
      return 0;
    }
    case 'status': {
      const b = await ops.get(parseBackfillId(need(second, 'backfill id'), 'ID'));
      console.log(progressLine(b));
      return 0;
    }
    case 'cancel': {
      const id = parseBackfillId(need(second, 'backfill id'), 'ID');
      const before = await ops.get(id);
      const b = await ops.cancel(id);
      console.log(before.state === 'running' ? `backfill ${b.id} cancelled; its queued runs end cancelled` : `backfill ${b.id} is already ${b.state}`);
      return 0;
    }
    default: {
      const dagId = parseDagId(need(first, 'DAG id'), 'DAG');
      const maxActive = flag(args, '--max-active');
      const givenKey = flag(args, '--idempotency-key');
      const ask = {
        dagId,
        from: textFlag(args, '--from'),
        to: textFlag(args, '--to'),
        maxActiveRuns: maxActive === undefined ? undefined : Number(maxActive),
        confirm: hasFlag(args, '--yes'),
        // Any other word goes to the store, which refuses it naming the field.
        mode: flag(args, '--mode') as BackfillMode | undefined,
      };
      let b: BackfillRow;
      try {
        b = await sendOnce({
          key: requestKeyOf(givenKey),
          send: (requestKey) => ops.create({ ...ask, requestKey }),
          transient: (err) => ops.transient(err),
          command: commandLine('backfill', args),
        });
      } catch (err) {
        if (ops.needsConfirm(err)) {
          const refusal = err as { code: string; message: string };
          console.error(`${refusal.code}: ${refusal.message}; run it again with --yes to go ahead`);
          return 1;
        }
        throw err;
      }
      // A repeat the CLI sent itself after a lost answer is this command's own backfill, not an earlier one.
      if (b.repeated && givenKey !== undefined) console.log(`backfill ${b.id} was started by an earlier request with this key; nothing new was started`);
      console.log(`backfill ${b.id} of ${b.dagId}: ${b.totalSlots} slots from ${fmt(b.fromAt)} to ${fmt(b.toAt)}, at most ${b.maxActiveRuns} unfinished runs`);
      if (hasFlag(args, '--no-wait')) return 0;
      return follow(ops, b);
    }
  }
}
