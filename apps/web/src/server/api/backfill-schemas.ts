import { z } from 'zod';
import { BACKFILL_MODES, backfillIdSchema, LIMITS, type BackfillMode } from '@fenceline/core';
import { instant } from './schemas';

/**
 * The HTTP API's schemas for backfills. The body is bounded here as the console's form is;
 * the store checks the rest (the DAG exists and has a schedule, the range has slots and is
 * not too wide, a large one is confirmed) and names the field it refuses.
 */

const modes = BACKFILL_MODES as [BackfillMode, ...BackfillMode[]];
const count = z.number().int().min(0);

export const backfillIdPath = z.object({ id: backfillIdSchema.describe('The backfill id') });

export const backfillListQuery = z.strictObject({
  dag: z.string().min(1).max(2_000).optional().describe('Only backfills of this DAG'),
  limit: z.coerce.number().int().min(1).max(200).optional().describe('At most this many, newest first; 20 by default'),
});

export const backfillBody = z.strictObject({
  dagId: z.string().min(1).max(2_000).describe('The DAG whose schedule slots are backfilled'),
  from: z.string().min(1).max(64).describe('The first instant of the range, ISO 8601 with a zone (inclusive)'),
  to: z.string().min(1).max(64).describe('The end of the range, ISO 8601 with a zone (exclusive)'),
  maxActiveRuns: z.number().int().min(1).max(LIMITS.maxMaxActiveRuns).optional().describe('Unfinished runs of the backfill at once; 4 by default'),
  mode: z.enum(modes).optional().describe('skip (the default) leaves a slot that has a run; rerun clears its ended run to run again'),
  confirm: z.boolean().optional().describe(`Needed above ${LIMITS.backfillConfirmSlots} slots; without it such a backfill is refused naming confirm`),
});

export const backfillRowSchema = z.object({
  id: z.string(),
  dagId: z.string(),
  dagVersion: z.number().int().min(1).describe('The DAG version whose schedule the slots were counted from'),
  shard: count,
  fromAt: instant,
  toAt: instant,
  maxActiveRuns: z.number().int().min(1),
  mode: z.enum(modes),
  state: z.enum(['running', 'done', 'cancelled']),
  totalSlots: z.number().int().min(1),
  nextSlotAt: instant.nullable().describe('Where its leader resumes; null once every slot was created or skipped'),
  createdRuns: count,
  skippedSlots: count.describe('Slots that already had a run, left as they were'),
  rerunRuns: count.describe('Slots whose ended run a rerun took over'),
  activeRuns: count.describe('Its runs queued or running now'),
  finishedRuns: count.describe('Its runs that ended'),
  requestedBy: z.string(),
  createdAt: instant,
  endedAt: instant.nullable(),
  repeated: z.literal(true).optional().describe('Present on the answer to a request whose Idempotency-Key started this backfill before'),
});

export const backfillListAnswer = z.object({ backfills: z.array(backfillRowSchema) });
