import { describe, expect, it } from 'vitest';
import { planDispatch, type FreeWorker, type ReadyJob } from '../src/fairshare/plan';
import { keysFit, needKey, needOf, offerFits, offerKey, unmetNeed, workerOfferSchema, type JobNeed, type WorkerOffer } from '../src/routing/offer';

function jobs(prefix: string, count: number, need?: JobNeed): ReadyJob[] {
  return Array.from({ length: count }, (_, i) => ({
    jobId: `${prefix}-${String(i).padStart(5, '0')}`,
    priority: 0,
    readyAtMs: 1_000 + i,
    ...(need ? { need: needKey(need) } : {}),
  }));
}

function fleet(prefix: string, count: number, free: number, offer?: WorkerOffer): FreeWorker[] {
  return Array.from({ length: count }, (_, i) => ({ workerId: `${prefix}${String(i).padStart(3, '0')}`, free, ...(offer ? { offer: offerKey(offer) } : {}) }));
}

const offer = (o: Partial<WorkerOffer>): WorkerOffer => workerOfferSchema.parse(o);

/** The planner's fit test, over keys, built from the offers and needs a test uses. */
function fitsOver(offers: WorkerOffer[], needs: JobNeed[]): (need: string, offer: string) => boolean {
  const o = new Map(offers.map((x) => [offerKey(x), x]));
  const n = new Map(needs.map((x) => [needKey(x), x]));
  return (need, key) => offerFits(o.get(key)!, n.get(need)!);
}

describe('routing', () => {
  const plain = offer({});
  const shelly = offer({ types: ['noop', 'sleep', 'http', 'shell'] });
  const gpuEu = offer({ labels: ['gpu', 'region=eu'] });

  it('a job goes only to a worker whose pool, labels and types cover it', () => {
    expect(offerFits(plain, needOf({ type: 'sleep' }))).toBe(true);
    expect(offerFits(plain, needOf({ type: 'shell' }))).toBe(false);
    expect(offerFits(shelly, needOf({ type: 'shell' }))).toBe(true);
    expect(offerFits(gpuEu, needOf({ type: 'noop', labels: ['region=eu'] }))).toBe(true);
    expect(offerFits(gpuEu, needOf({ type: 'noop', labels: ['region=us'] }))).toBe(false);
    expect(offerFits(gpuEu, needOf({ type: 'noop', pool: 'gpu' }))).toBe(false);
  });

  it('fits over keys exactly as over the offers, whatever characters a type holds', () => {
    const odd = offer({ types: ['a,b', 'noop'] });
    expect(keysFit(needKey(needOf({ type: 'a' })), offerKey(odd))).toBe(false);
    expect(keysFit(needKey(needOf({ type: 'a,b' })), offerKey(odd))).toBe(true);
    expect(keysFit(needKey(needOf({ type: 'noop', labels: ['gpu'] })), offerKey(gpuEu))).toBe(true);
    expect(keysFit(needKey(needOf({ type: 'noop', labels: ['gpu'], pool: 'x' })), offerKey(gpuEu))).toBe(false);
  });

  it('says which part of a need no live worker covers', () => {
    expect(unmetNeed(needOf({ type: 'noop', pool: 'gpu' }), [plain])).toBe('no live worker in pool `gpu`');
    expect(unmetNeed(needOf({ type: 'noop', labels: ['region=eu', 'gpu'] }), [plain])).toBe('no live worker in pool `default` has labels gpu, region=eu');
    expect(unmetNeed(needOf({ type: 'shell' }), [plain, gpuEu])).toBe('no live worker in pool `default` allows shell');
    expect(unmetNeed(needOf({ type: 'etl' }), [plain])).toBe('no live worker in pool `default` runs type `etl`');
    expect(unmetNeed(needOf({ type: 'shell' }), [plain, shelly])).toBeNull();
  });

  it('never plans a shell job onto a worker without shell, and leaves it ready when none has it', () => {
    const shell = needOf({ type: 'shell' });
    const sleep = needOf({ type: 'sleep' });
    const fits = fitsOver([plain, shelly], [shell, sleep]);
    const dags = [
      { dagId: 'a', held: 0, ready: jobs('sh', 5, shell) },
      { dagId: 'b', held: 0, ready: jobs('sl', 5, sleep) },
    ];
    const onlyPlain = planDispatch({ dags, poolSlots: 10, workers: fleet('p', 10, 1, plain), capFraction: 1, fits });
    expect(onlyPlain.grants.map((g) => g.dagId)).toEqual(['b', 'b', 'b', 'b', 'b']);
    const mixed = planDispatch({ dags, poolSlots: 10, workers: [...fleet('p', 8, 1, plain), ...fleet('s', 2, 1, shelly)], capFraction: 1, fits });
    const shellGrants = mixed.grants.filter((g) => g.dagId === 'a');
    expect(shellGrants).toHaveLength(2);
    for (const g of shellGrants) expect(g.workerId.startsWith('s')).toBe(true);
    expect(mixed.grants.filter((g) => g.dagId === 'b')).toHaveLength(5);
  });
});

describe('lending', () => {
  const ready = [
    { dagId: 'fan', held: 0, ready: jobs('f', 1_000) },
    { dagId: 'other', held: 0, ready: jobs('o', 1) },
  ];

  it('without lending a DAG stops at its cap; with it, it borrows down to the reserve', () => {
    const strict = planDispatch({ dags: ready, poolSlots: 100, workers: fleet('w', 100, 1), capFraction: 0.3 });
    expect(strict.grants.filter((g) => g.dagId === 'fan')).toHaveLength(30);
    const lent = planDispatch({ dags: ready, poolSlots: 100, workers: fleet('w', 100, 1), capFraction: 0.3, lendReserve: 10 });
    const fan = lent.grants.filter((g) => g.dagId === 'fan');
    // 100 free, 10 kept back, 1 to the other DAG: 89 for the fan-out, 59 of them lent.
    expect(fan).toHaveLength(89);
    expect(fan.filter((g) => g.lent)).toHaveLength(59);
    expect(lent.grants.find((g) => g.dagId === 'other')?.lent).toBeUndefined();
  });

  it('lends nothing once the free slots are down to the reserve, and still serves a DAG under its cap from it', () => {
    const plan = planDispatch({
      dags: [
        { dagId: 'fan', held: 80, ready: jobs('f', 500) },
        { dagId: 'other', held: 0, ready: jobs('o', 3) },
      ],
      poolSlots: 100,
      workers: fleet('w', 10, 1),
      capFraction: 0.3,
      lendReserve: 10,
    });
    expect(plan.grants.filter((g) => g.dagId === 'fan')).toEqual([]);
    expect(plan.grants.filter((g) => g.dagId === 'other')).toHaveLength(3);
  });

  it('counts the whole pool free, not only the workers listed, against the reserve', () => {
    const plan = planDispatch({
      dags: [{ dagId: 'fan', held: 30, ready: jobs('f', 500) }],
      poolSlots: 100,
      workers: fleet('w', 5, 1),
      capFraction: 0.3,
      lendReserve: 10,
      poolFree: 12,
    });
    expect(plan.grants).toHaveLength(2);
    expect(plan.grants.every((g) => g.lent)).toBe(true);
  });

  it('a higher DAG priority is served before a lower one, within the caps and when lending', () => {
    const dags = [
      { dagId: 'low', held: 30, ready: jobs('l', 50), priority: 0 },
      { dagId: 'high', held: 30, ready: jobs('h', 50), priority: 5 },
    ];
    const plan = planDispatch({ dags, poolSlots: 100, workers: fleet('w', 15, 1), capFraction: 0.3, lendReserve: 10, poolFree: 15 });
    expect(plan.grants.map((g) => g.dagId)).toEqual(['high', 'high', 'high', 'high', 'high']);
    const scarce = planDispatch({
      dags: [
        { dagId: 'low', held: 0, ready: jobs('l', 5) },
        { dagId: 'high', held: 0, ready: jobs('h', 5), priority: 1 },
      ],
      poolSlots: 10,
      workers: fleet('w', 1, 1),
      capFraction: 1,
    });
    expect(scarce.grants.map((g) => g.dagId)).toEqual(['high']);
  });
});
