import { describe, expect, it } from 'vitest';
import type { DagId, RunId } from '../../ids';
import type { RunRow } from '../../model';
import { RUN_PAGE_MAX_LIMIT } from '../../run/run-page';
import type { LeaderToken, RunPage, RunPageQuery } from '../../store';
import type { ContractContext } from './context';
import { newJobs, refusedWith, SHARD_COUNT, spec } from './fixtures';
import { createScheduledRuns, finishRun, markUpstreamFailed, startRun } from './one-leader';

/** The store contract's part on pages of runs: keyset cursors, filters, and refusals. */
export function runPagesContract(c: ContractContext): void {
  describe('pages of runs', () => {
    const SECOND = 1_000;

    /**
     * DAGs of one shard with scheduled runs on slots of their own, one second apart in a
     * stretch of 1990 no other test schedules in, so a range filter sees only this test's
     * runs. Every DAG gets the same slots, so runs tie on scheduled_at and page by id.
     */
    async function dagsWithRuns(dagCount: number, slotCount: number) {
      const { token, dagId } = await c.leadFreshShard();
      const ids = c.idsInShard(dagId, token.shard, dagCount, '-p');
      const baseMs = Date.UTC(1990, 0, 1) + Math.floor(Math.random() * 1e9) * SECOND;
      const slots = Array.from({ length: slotCount }, (_, i) => new Date(baseMs + i * SECOND));
      const runs: RunRow[] = [];
      for (const id of ids) runs.push(...(await addRuns(token, id, slots)));
      expect(runs).toHaveLength(dagCount * slotCount);
      return { token, ids, baseMs, slots, runs, range: { scheduledFrom: new Date(baseMs), scheduledBefore: new Date(baseMs + slotCount * SECOND) } };
    }

    /** Scheduled runs of a fresh interval DAG on these past slots. */
    async function addRuns(token: LeaderToken, id: DagId, slots: Date[]): Promise<RunRow[]> {
      await c.store.putDag(spec(id, { schedule: { kind: 'interval', everyMs: SECOND } }), SHARD_COUNT);
      const next = (await c.store.getDag(id)).nextRunAt!;
      await c.untilDue([next.getTime() + 5]);
      return createScheduledRuns(c.store, token, id, next, slots, new Date(next.getTime() + 3_600_000));
    }

    /** Every page from the first, following `next`; `between` runs after each page. */
    async function walk(query: RunPageQuery, between: (pageNo: number) => Promise<void> = async () => {}): Promise<RunPage[]> {
      const pages: RunPage[] = [];
      let cursor: string | undefined;
      for (let n = 0; n < 100; n++) {
        const page = await c.store.pageRuns({ ...query, cursor });
        pages.push(page);
        if (page.next === null) return pages;
        cursor = page.next;
        await between(n);
      }
      throw new Error('pageRuns: more than 100 pages');
    }

    const ids = (pages: RunPage[]): RunId[] => pages.flatMap((p) => p.rows.map((r) => r.id));
    /** The order pages must follow: (scheduled_at, id), ids compared as numbers. */
    const byKey = (a: RunRow, b: RunRow) => a.scheduledAt.getTime() - b.scheduledAt.getTime() || Number(a.id) - Number(b.id);

    it('pageRuns walks every run once, in (scheduled_at, id) order, while new runs are inserted between pages', async () => {
      const { token, ids: dags, slots, runs, range } = await dagsWithRuns(3, 5);
      const newestFirst = [...runs].sort(byKey).reverse();
      const inserted: RunRow[] = [];
      const extra = c.idsInShard(dags[0]!, token.shard, 4, '-x').slice(1);
      const pages = await walk({ ...range, limit: 4 }, async (n) => {
        // New runs land on every side of the page just read: on the same slots (ties), and
        // between and beyond them.
        if (n < extra.length) {
          const at = [slots[0]!, new Date(slots[2]!.getTime() + 500), slots[4]!];
          inserted.push(...(await addRuns(token, extra[n]!, at)));
        }
      });
      const seen = ids(pages);
      expect(new Set(seen).size, 'no run repeated').toBe(seen.length);
      for (const run of runs) expect(seen, `run ${run.id} not skipped`).toContain(run.id);
      expect(seen.filter((id) => !inserted.some((r) => r.id === id))).toEqual(newestFirst.map((r) => r.id));
      const shown = pages.flatMap((p) => p.rows);
      expect(
        [...shown]
          .sort(byKey)
          .reverse()
          .map((r) => r.id),
      ).toEqual(shown.map((r) => r.id));
      expect(pages[0]!.previous).toBeNull();
      expect(pages.at(-1)!.next).toBeNull();
      expect(pages.slice(0, -1).every((p) => p.rows.length === 4)).toBe(true);
    });

    it('pageRuns pages back with previous to the same pages, oldest first too', async () => {
      const { runs, range } = await dagsWithRuns(2, 5);
      for (const order of ['newest', 'oldest'] as const) {
        const sorted = [...runs].sort(byKey);
        const expected = (order === 'newest' ? sorted.reverse() : sorted).map((r) => r.id);
        const forward = await walk({ ...range, order, limit: 3 });
        expect(ids(forward)).toEqual(expected);
        expect(forward.map((p) => p.rows.length)).toEqual([3, 3, 3, 1]);
        // From the last page back to the first, one `previous` at a time.
        const back: RunPage[] = [forward.at(-1)!];
        while (back[0]!.previous !== null) back.unshift(await c.store.pageRuns({ ...range, order, limit: 3, cursor: back[0]!.previous }));
        expect(back.map((p) => p.rows.map((r) => r.id))).toEqual(forward.map((p) => p.rows.map((r) => r.id)));
        expect(back[0]!.previous).toBeNull();
        expect(back[0]!.next).not.toBeNull();
      }
      expect(await c.store.pageRuns({ ...range, limit: RUN_PAGE_MAX_LIMIT })).toMatchObject({ next: null, previous: null });
    });

    it('pageRuns filters by DAG, state, trigger and scheduled range, all at once too', async () => {
      const { token, ids: dags, slots, runs, range } = await dagsWithRuns(2, 4);
      const [one, two] = dags as [DagId, DagId];
      const started = runs.find((r) => r.dagId === one && r.scheduledAt.getTime() === slots[1]!.getTime())!;
      await startRun(c.store, token, started.id, newJobs());
      const failed = runs.find((r) => r.dagId === two && r.scheduledAt.getTime() === slots[2]!.getTime())!;
      const failedJobs = await startRun(c.store, token, failed.id, newJobs());
      // A run finishes only once none of its jobs is open.
      await markUpstreamFailed(
        c.store,
        token,
        failedJobs.map((j) => j.id),
      );
      expect(await finishRun(c.store, token, failed.id, 'failed')).toBe(true);
      const page = (query: RunPageQuery) => c.store.pageRuns({ limit: 100, ...query }).then((p) => p.rows.map((r) => r.id));
      const expectIds = (rows: RunRow[]) =>
        [...rows]
          .sort(byKey)
          .reverse()
          .map((r) => r.id);

      expect(await page({ ...range, dagId: one })).toEqual(expectIds(runs.filter((r) => r.dagId === one)));
      expect(await page({ ...range, state: 'running' })).toEqual([started.id]);
      expect(await page({ ...range, state: 'failed' })).toEqual([failed.id]);
      expect(await page({ ...range, state: 'queued', dagId: two })).toEqual(expectIds(runs.filter((r) => r.dagId === two && r.id !== failed.id)));
      expect(await page({ ...range, trigger: 'schedule' })).toEqual(expectIds(runs));
      // Triggers no run of the range has are answered with no runs, not refused.
      for (const trigger of ['manual', 'backfill', 'rerun']) expect(await page({ ...range, trigger })).toEqual([]);
      // From is inclusive, before is exclusive.
      const middle = { scheduledFrom: slots[1]!, scheduledBefore: slots[3]! };
      expect(await page(middle)).toEqual(expectIds(runs.filter((r) => r.scheduledAt >= slots[1]! && r.scheduledAt < slots[3]!)));
      expect(await page({ ...middle, dagId: two, state: 'failed', trigger: 'schedule' })).toEqual([failed.id]);
      // A manual run is scheduled at store time now, and found by its trigger.
      const manual = await c.store.triggerRun(one);
      expect(await page({ dagId: one, trigger: 'manual' })).toEqual([manual.id]);
      expect((await c.store.pageRuns({ dagId: one, limit: 1 })).rows.map((r) => r.id)).toEqual([manual.id]);
      // Manual runs are scheduled to the store clock's precision (microseconds in
      // PostgreSQL): a page boundary between them still neither repeats nor skips one.
      const more = [manual];
      for (let i = 0; i < 3; i++) {
        // One manual run per DAG and instant: the memory store's clock moves only when told.
        await c.h.advanceMs(2);
        more.push(await c.store.triggerRun(one));
      }
      expect(ids(await walk({ dagId: one, trigger: 'manual', limit: 1 }))).toEqual(more.map((r) => r.id).reverse());
    });

    it('pageRuns refuses a cursor it did not give out, naming the field, and bad filters', async () => {
      const { range } = await dagsWithRuns(1, 3);
      const first = await c.store.pageRuns({ ...range, limit: 1 });
      expect(first.next).not.toBeNull();
      const refused = async (query: RunPageQuery, field: string) => {
        const error = await refusedWith(c.store.pageRuns(query), 'INVALID_INPUT');
        expect(error.details.field).toBe(field);
        expect(error.message).toContain(field);
      };
      const cursor = first.next!;
      for (const bad of ['', 'nope', '%%%', cursor.slice(0, 10), `${cursor}AA`, 'x'.repeat(500), btoa('r1|newest|after|1990-01-01T00:00:00.000000Z|0')]) {
        await refused({ ...range, cursor: bad }, 'cursor');
      }
      // A cursor of one order does not page the other.
      await refused({ ...range, order: 'oldest', cursor }, 'cursor');
      await refused({ limit: 0 }, 'limit');
      await refused({ limit: RUN_PAGE_MAX_LIMIT + 1 }, 'limit');
      await refused({ limit: 1.5 }, 'limit');
      await refused({ scheduledFrom: new Date(Number.NaN) }, 'scheduledFrom');
      await refused({ trigger: 'sometimes' }, 'trigger');
      await refused({ state: 'done' as RunRow['state'] }, 'state');
      // The cursor still pages as before.
      expect((await c.store.pageRuns({ ...range, limit: 1, cursor })).rows).toHaveLength(1);
    });
  });
}
