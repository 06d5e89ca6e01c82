import { describe, expect, it } from 'vitest';
import { lendCheckWorkers, lendsAny, refusedLends, reserveOf, type LendCheck, type LendCheckedGrant } from '../src/fairshare/lend-check';
import { parseWorkerId, type WorkerId } from '../src/ids';

const w = (name: string): WorkerId => parseWorkerId(name);
const check = (pool: string, reserve: number, free: Record<string, number>): LendCheck => ({
  pool,
  reserve,
  fraction: 0,
  minSlots: 0,
  liveWindowMs: 60_000,
  workers: Object.entries(free).map(([id, n]) => ({ workerId: w(id), free: n })),
});

describe('refusedLends', () => {
  const slots = (): number => 2;
  const none = (): number => 0;

  it('lends only what stays above the reserve, after the batch grants that lend nothing', () => {
    const gpu = check('gpu', 1, { a: 2, b: 2 });
    const grants: LendCheckedGrant[] = [{ lend: gpu }, { lend: gpu, lent: true }, { lend: gpu, lent: true }, { lend: gpu, lent: true }];
    // Free 4, one grant within its cap, a reserve of 1: two loans fit, the third is refused.
    expect([...refusedLends(grants, () => 0, slots, none)]).toEqual([3]);
  });

  it("takes each worker's free slots as the smaller of its poll and the store's record", () => {
    const c = check('default', 0, { a: 2, b: 1, stranger: 9 });
    const held = (id: WorkerId): number => (id === 'a' ? 2 : 0);
    const known = (id: WorkerId): number | undefined => (id === 'stranger' ? undefined : 2);
    // a: min(2, 2 - 2) = 0; b: min(1, 2) = 1; the unregistered worker: 0. One loan of three.
    const grants: LendCheckedGrant[] = [0, 1, 2].map(() => ({ lend: c, lent: true }));
    expect([...refusedLends(grants, held, known, none)]).toEqual([1, 2]);
  });

  it('counts each pool apart, from the latest lending round of the batch', () => {
    const older = check('default', 1, { a: 2, b: 2, c: 2 });
    const newer = check('default', 1, { a: 2 });
    const other = check('gpu', 0, { g: 2 });
    const grants: LendCheckedGrant[] = [
      { lend: older, lent: true },
      { lend: newer, lent: true },
      { lend: other, lent: true },
      { lend: other, lent: true },
      { lend: other, lent: true },
    ];
    // default: by the newer round only a waits, 2 free less a reserve of 1: one loan, the
    // second refused. gpu: two free, the third loan refused.
    expect([...refusedLends(grants, () => 0, slots, none)]).toEqual([1, 4]);
  });

  it("keeps the larger of the node's reserve and the store's share of the live pool", () => {
    const c: LendCheck = { ...check('default', 1, { a: 2, b: 2, c: 2 }), fraction: 0.5 };
    const grants: LendCheckedGrant[] = [0, 1, 2, 3, 4].map(() => ({ lend: c, lent: true }));
    // 6 free; the node's reserve is 1, but half of the 6 live slots the store counts is 3.
    expect([
      ...refusedLends(
        grants,
        () => 0,
        slots,
        () => 6,
      ),
    ]).toEqual([3, 4]);
    // With a store that counts fewer live slots than the node, the node's reserve stands.
    expect([
      ...refusedLends(
        grants,
        () => 0,
        slots,
        () => 0,
      ),
    ]).toEqual([]);
  });

  it('refuses nothing in a batch that does not lend, and names the workers its checks list', () => {
    const c = check('default', 5, {});
    expect(lendsAny([{ lend: c }, {}])).toBe(false);
    expect(refusedLends([{ lend: c }, { lend: c }], () => 0, slots, none).size).toBe(0);
    const l = check('default', 0, { a: 1, b: 1 });
    expect(lendsAny([{}, { lend: l, lent: true }])).toBe(true);
    expect(lendCheckWorkers([{ lend: l }, { lend: l, lent: true }]).sort()).toEqual(['a', 'b']);
  });
});

describe('reserveOf', () => {
  it('keeps the share of the pool, or the floor in slots if that is more, but never more than an eighth of the pool by the floor', () => {
    const rule = { fraction: 0.003, minSlots: 10 };
    // 10,000 slots: the share (30) is above the floor.
    expect(reserveOf(rule, 10_000)).toBe(30);
    // 1,000 slots: the share is 3, the floor 10.
    expect(reserveOf(rule, 1_000)).toBe(10);
    // 16 slots: the floor is held to an eighth of the pool, so 14 slots may still be lent.
    expect(reserveOf(rule, 16)).toBe(2);
    // A pool of 7 or fewer keeps only its share, rounded up.
    expect(reserveOf(rule, 7)).toBe(1);
    expect(reserveOf({ fraction: 0, minSlots: 10 }, 7)).toBe(0);
    // A share above the floor's eighth still holds: a quarter of 16 is 4.
    expect(reserveOf({ fraction: 0.25, minSlots: 10 }, 16)).toBe(4);
  });
});
