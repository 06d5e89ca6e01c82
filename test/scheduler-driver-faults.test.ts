import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDagId } from '@fenceline/core';
import { REPO_ROOT } from '../tools/start/cluster';
import { eventually, FAST_ENV, startFixture, type Fixture } from './support/cluster-fixture';

const SHARDS = Number(FAST_ENV.FENCELINE_SHARDS);

/**
 * When a primary is lost the database driver fails outside any call of the scheduler: it
 * rejects promises nobody holds (CONNECTION_DESTROYED, CONNECTION_CLOSED) and throws a
 * TypeError from its own deferred write on a socket that is gone. Each once ended a
 * scheduler process. Here the driver really does all three inside a running scheduler
 * (test/support/driver-faults.mjs), and the scheduler must live on and keep running jobs.
 */
describe('cluster: a scheduler whose database driver fails outside any call', () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await startFixture({
      schedulers: 1,
      workers: 1,
      env: { NODE_OPTIONS: `--import=${join(REPO_ROOT, 'test', 'support', 'driver-faults.mjs')}` },
    });
  });
  afterAll(async () => f?.stop());

  it('logs each fault, replaces its store connections, stays up and runs the next job', async () => {
    const proc = f.cluster.procs.get('scheduler-1')!;
    const lines = () => proc.logs.map((l) => String(l.msg ?? ''));
    f.cluster.signal('scheduler-1', 'SIGUSR2');
    await eventually('the driver faults to be done', async () => lines().some((m) => m.includes('driver faults done')), 30_000);
    expect(lines().filter((m) => m.startsWith('the database driver wrote to a closed connection'))).toHaveLength(1);
    // Both rejections come within the 3 s in which a burst replaces the pool once.
    expect(lines().filter((m) => m.startsWith('the database driver lost connections no call was waiting on'))).toHaveLength(1);
    expect(proc.child.exitCode).toBeNull();
    expect(proc.child.signalCode).toBeNull();
    await f.store.putDag({ id: 'after-driver-faults', tasks: [{ id: 'one', type: 'sleep', config: { durationMs: 10 } }] }, SHARDS);
    const run = await f.store.triggerRun(parseDagId('after-driver-faults'));
    await eventually('the run after the faults to succeed', async () => (await f.store.getRun(run.id))?.state === 'succeeded', 30_000);
    expect(proc.child.exitCode).toBeNull();
  }, 120_000);
});
