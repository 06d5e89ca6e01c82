import { LIMITS, InvalidInputError, parseBackfillId, parseInstant, parseDagId, type AuditStore, type BackfillMode, type BackfillRow, type CatalogueStore } from '@fenceline/core';
import { flag, fmt, hasFlag, need, positional, UsageError } from './cli-args';
import { cliAudit, osUser } from './cli-people';

export const BACKFILL_HELP = `  backfill <DAG> --from ISO --to ISO [--max-active N] [--mode skip|rerun] [--yes] [--no-wait]
                                   one run per schedule slot in [from, to), at most N unfinished at once
                                   (default 4); a slot that has a run is skipped, or with --mode rerun
                                   its ended run is cleared to run again;
                                   above ${LIMITS.backfillConfirmSlots} slots it needs --yes; prints its progress until it ends
  backfill list [DAG]              recent backfills with their progress
  backfill status <ID>             one backfill's progress
  backfill cancel <ID>             create no more runs; its queued runs end cancelled`;

type BackfillStore = CatalogueStore & AuditStore;

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
async function follow(store: BackfillStore, first: BackfillRow): Promise<number> {
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
    b = await store.getBackfill(b.id);
  }
  if (tty) process.stdout.write('\n');
  return b.state === 'done' ? 0 : 1;
}

function dateFlag(args: string[], name: string): Date {
  const text = flag(args, name);
  if (text === undefined) throw new UsageError(`backfill needs ${name} ISO`);
  return parseInstant(text, name.replace(/^--/, ''));
}

export async function backfillCommand(store: BackfillStore, args: string[]): Promise<number> {
  const [first, second] = positional(args);
  switch (first) {
    case 'list': {
      const rows = await store.listBackfills({ dagId: second === undefined ? undefined : parseDagId(second, 'DAG'), limit: Number(flag(args, '--limit') ?? 20) });
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
      const b = await store.getBackfill(parseBackfillId(need(second, 'backfill id'), 'ID'));
      console.log(progressLine(b));
      return 0;
    }
    case 'cancel': {
      const id = parseBackfillId(need(second, 'backfill id'), 'ID');
      const before = await store.getBackfill(id);
      const b = await store.cancelBackfill(id);
      if (before.state === 'running' && b.state === 'cancelled') await cliAudit(store, { action: 'backfill.cancelled', dagId: b.dagId, target: b.id });
      console.log(before.state === 'running' ? `backfill ${b.id} cancelled; its queued runs end cancelled` : `backfill ${b.id} is already ${b.state}`);
      return 0;
    }
    default: {
      const dagId = parseDagId(need(first, 'DAG id'), 'DAG');
      const maxActive = flag(args, '--max-active');
      let b: BackfillRow;
      try {
        b = await store.createBackfill({
          dagId,
          from: dateFlag(args, '--from'),
          to: dateFlag(args, '--to'),
          maxActiveRuns: maxActive === undefined ? undefined : Number(maxActive),
          confirm: hasFlag(args, '--yes'),
          // Any other word goes to the store, which refuses it naming the field.
          mode: flag(args, '--mode') as BackfillMode | undefined,
          requestedBy: osUser(),
        });
      } catch (err) {
        if (err instanceof InvalidInputError && err.details.field === 'confirm') {
          console.error(`${err.code}: ${err.message}; run it again with --yes to go ahead`);
          return 1;
        }
        throw err;
      }
      const details = { backfillId: b.id, from: b.fromAt.toISOString(), to: b.toAt.toISOString(), slots: b.totalSlots, maxActiveRuns: b.maxActiveRuns };
      await cliAudit(store, { action: 'backfill.created', dagId: b.dagId, target: b.id, details });
      console.log(`backfill ${b.id} of ${b.dagId}: ${b.totalSlots} slots from ${fmt(b.fromAt)} to ${fmt(b.toAt)}, at most ${b.maxActiveRuns} unfinished runs`);
      if (hasFlag(args, '--no-wait')) return 0;
      return follow(store, b);
    }
  }
}
