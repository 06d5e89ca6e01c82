import { describe, expect, it } from 'vitest';
import { DEFAULT_OFFER, type WorkerOffer } from '@fenceline/core';
import { routingWarnings } from '../src/app/(console)/editor/routing-warnings';
import { parseResources } from '../src/app/(console)/editor/task-fields';

const live = (offer: Partial<WorkerOffer>, reported = true) => ({ offer: { ...DEFAULT_OFFER, ...offer }, reported });
const spec = (tasks: Record<string, unknown>[]) => ({ id: 'd', tasks: tasks.map((t, i) => ({ id: `t${i}`, type: 'noop', config: {}, dependsOn: [], ...t })) });

describe('the editor warns of tasks no live worker or limit would serve', () => {
  const offers = [live({}), live({ pool: 'gpu', labels: ['region=eu'], types: ['noop', 'train'] })];
  const limits = [{ name: 'warehouse', capacity: 2 }];

  it('names the pool, the labels or the type no live worker offers, in unmetNeed words', () => {
    const warnings = routingWarnings(
      spec([{}, { pool: 'gpu', type: 'train', labels: ['region=eu'] }, { pool: 'tpu' }, { pool: 'gpu', labels: ['region=us'] }, { type: 'shell' }]),
      { offers, limits },
    );
    expect(warnings.map((w) => [w.taskId, w.message])).toEqual([
      ['t2', 'no live worker in pool `tpu`: task t2 would wait, ready, until one joins'],
      ['t3', 'no live worker in pool `gpu` has labels region=us: task t3 would wait, ready, until one joins'],
      ['t4', 'no live worker in pool `default` allows shell: task t4 would wait, ready, until one joins'],
    ]);
  });

  it('says nothing of workers while one has not said what it offers, and still checks limits', () => {
    const warnings = routingWarnings(spec([{ pool: 'tpu', resources: { warehouse: 3, missing: 1 } }]), { offers: [...offers, live({}, false)], limits });
    expect(warnings.map((w) => w.message)).toEqual([
      'limit `warehouse` has only 2 units, task t0 asks for 3: the store refuses the save',
      'limit `missing` does not exist: the store refuses the save until it is created',
    ]);
  });

  it('reads resources typed as name=units and names an entry it cannot read', () => {
    expect(parseResources('warehouse=1, api-quota = 2')).toEqual({ value: { warehouse: 1, 'api-quota': 2 }, error: null });
    expect(parseResources(' ')).toEqual({ value: undefined, error: null });
    expect(parseResources('warehouse=1, api')).toEqual({ value: undefined, error: '"api" is not name=units (such as warehouse=1)' });
  });
});
