import { describe, expect, it } from 'vitest';
import { LeaseLostError, LIMITS, StaleFenceError, UnauthorizedError } from '../src';
import { nextBatchSize, resultBytes, WorkerCore, type ResultToSend, type WorkerCoreDeps } from '../src/worker';
import { assignment, FakeExecutor, FakeTime, FakeTransport, settle, unreachable } from './worker-fakes';
import { asJobId, asWorkerId } from './literal-ids';

function worker(over: Partial<WorkerCoreDeps> & { nodes?: number; slots?: number } = {}) {
  const time = new FakeTime();
  const transport = new FakeTransport(over.nodes ?? 1);
  const executor = new FakeExecutor();
  const core = new WorkerCore({
    workerId: asWorkerId('w-1'),
    slots: over.slots ?? 2,
    clock: time,
    timers: time,
    transport,
    executor,
    pollWaitMs: 25_000,
    shutdownGraceMs: 30_000,
    ...over,
  });
  return { time, transport, executor, core };
}

async function started(over: Parameters<typeof worker>[0] = {}) {
  const w = worker(over);
  await w.core.start();
  await settle();
  return w;
}

describe('WorkerCore: sessions', () => {
  it('stops polling a node that says another process registered its id, without registering again', async () => {
    const { time, transport } = await started({ nodes: 2 });
    const registers = transport.ops('register').length;
    transport.refuse(0, new UnauthorizedError('poll refused: this is not the current session of worker w-1', { field: 'session' }));
    await time.advance(60_000);
    expect(transport.ops('poll').filter((c) => c.node === 0)).toHaveLength(1);
    expect(transport.ops('register')).toHaveLength(registers);
    // The other node's poll is left as it was.
    transport.deliver(1, []);
    await time.advance(0);
    expect(transport.ops('poll').filter((c) => c.node === 1).length).toBeGreaterThanOrEqual(2);
  });
});

describe('WorkerCore: leases', () => {
  it('a refused renewal aborts the handler with LeaseLostError and writes nothing for the job', async () => {
    const { time, transport, executor, core } = await started();
    transport.deliver(0, [assignment('j1')]);
    await settle();
    expect(executor.started.map((s) => s.job.jobId)).toEqual(['j1']);
    transport.renewAnswer = (_n, leases) => leases.map((l) => ({ jobId: l.jobId, ok: false as const, code: 'STALE_FENCE' as const, message: 'stale' }));
    await time.advance(30_000);
    expect(transport.ops('renew')).toHaveLength(1);
    expect(executor.aborted.get('j1')).toBeInstanceOf(LeaseLostError);
    await settle();
    expect(transport.ops('completeMany')).toHaveLength(0);
    expect(transport.ops('fail')).toHaveLength(0);
    expect(core.stats.lost).toBe(1);
    expect(core.busy).toBe(0);
    expect(core.free).toBe(2);
  });

  it('renews due leases on time and keeps the job while the renewals are accepted', async () => {
    const { time, transport, executor, core } = await started();
    transport.deliver(0, [assignment('j1')]);
    await time.advance(29_000);
    expect(transport.ops('renew')).toHaveLength(0);
    await time.advance(1_000);
    expect(transport.ops('renew')).toHaveLength(1);
    await time.advance(30_000);
    expect(transport.ops('renew')).toHaveLength(2);
    expect(executor.aborted.size).toBe(0);
    executor.finish('j1');
    await time.advance(0);
    expect(transport.ops('completeMany')).toHaveLength(1);
    expect(core.stats.succeeded).toBe(1);
  });

  it('a lease that no node could renew before its TTL ran out is lost, and the job stops', async () => {
    const { time, transport, executor, core } = await started({ nodes: 2 });
    transport.deliver(0, [assignment('j1')]);
    transport.renewAnswer = () => Promise.reject(unreachable());
    await time.advance(60_000);
    // Not yet: the lease runs for 90 s from its last renewal.
    expect(executor.aborted.size).toBe(0);
    // Each check goes to the delivering node, then the other; once overdue, once a second.
    const nodes = transport.ops('renew').map((c) => c.node);
    expect(nodes.slice(0, 2)).toEqual([0, 1]);
    expect(nodes.length).toBeGreaterThanOrEqual(2 * 30);
    await time.advance(30_000);
    expect(executor.aborted.get('j1')).toBeInstanceOf(LeaseLostError);
    await settle();
    expect(transport.ops('completeMany')).toHaveLength(0);
    expect(core.stats.lost).toBe(1);
  });

  it('a renewal refused after the job finished leaves the result to its own fenced write', async () => {
    const { time, transport, executor, core } = await started();
    transport.deliver(0, [assignment('j1')]);
    // The renewal is answered only after the job ends and its result has gone out.
    let answerRenewal!: () => void;
    transport.renewAnswer = (_n, leases) =>
      new Promise((resolve) => (answerRenewal = () => resolve(leases.map((l) => ({ jobId: l.jobId, ok: false as const, code: 'LEASE_LOST' as const, message: 'gone' })))));
    let answerResult!: () => void;
    transport.completeAnswer = (_n, results) => new Promise((resolve) => (answerResult = () => resolve(results.map(() => ({ ok: true as const })))));
    await time.advance(30_000);
    executor.finish('j1');
    await settle();
    expect(transport.ops('completeMany')).toHaveLength(1);
    answerRenewal();
    await settle();
    answerResult();
    await settle();
    expect(core.stats).toMatchObject({ succeeded: 1, lost: 0, refusedWrites: 0 });
    expect(transport.ops('completeMany')).toHaveLength(1);
    expect(executor.aborted.size).toBe(0);
  });

  it('checkFence renews at once and throws LeaseLostError when the lease is gone', async () => {
    const { transport, executor } = await started();
    transport.deliver(0, [assignment('j1')]);
    await settle();
    const control = executor.started[0]!.control;
    await expect(control.checkFence()).resolves.toBeUndefined();
    transport.renewAnswer = (_n, leases) => leases.map((l) => ({ jobId: l.jobId, ok: false as const, code: 'STALE_FENCE' as const, message: 'stale' }));
    await expect(control.checkFence()).rejects.toBeInstanceOf(LeaseLostError);
  });
});

describe('WorkerCore: results', () => {
  it('a batch never exceeds the count or the byte limit, and an oversized result goes alone', () => {
    expect(nextBatchSize([10, 10, 10, 10], { maxResults: 3, maxBytes: 1000 })).toBe(3);
    expect(nextBatchSize([400, 400, 400], { maxResults: 10, maxBytes: 1000 })).toBe(2);
    expect(nextBatchSize([5000, 10], { maxResults: 10, maxBytes: 1000 })).toBe(1);
    const r: ResultToSend = { jobId: asJobId('j'), fence: 1, output: { text: 'é'.repeat(100) }, logs: 'x'.repeat(50) };
    expect(resultBytes(r)).toBe(JSON.stringify(r.output).length + 100 + 50 + 200);
  });

  it('results that end together are sent in batches within both limits, one request in flight per node', async () => {
    const big = 'x'.repeat(300);
    const { time, transport, executor, core } = await started({ slots: 10, resultLimits: { maxResults: 3, maxBytes: 1200 } });
    transport.deliver(
      0,
      Array.from({ length: 8 }, (_, i) => assignment(`j${i}`)),
    );
    await settle();
    for (let i = 0; i < 8; i++) executor.finish(`j${i}`, { ok: true, output: i < 4 ? { big } : null, logs: null });
    await time.advance(0);
    const sizes = transport.ops('completeMany').map((c) => (c.req as { results: ResultToSend[] }).results.map((x) => x.jobId));
    // Results j0..j3 weigh about 520 bytes each: two fit 1,200; the small ones go three at a time.
    expect(sizes).toEqual([['j0', 'j1'], ['j2', 'j3'], ['j4', 'j5', 'j6'], ['j7']]);
    for (const c of transport.ops('completeMany')) {
      const results = (c.req as { results: ResultToSend[] }).results;
      expect(results.reduce((n, x) => n + resultBytes(x), 0)).toBeLessThanOrEqual(1200);
    }
    expect(core.stats.succeeded).toBe(8);
  });

  it('a result no node answered is sent again until one does, and is written once', async () => {
    const { time, transport, executor, core } = await started({ nodes: 2 });
    transport.deliver(0, [assignment('j1')]);
    await settle();
    let down = true;
    transport.completeAnswer = (_n, results) => (down ? Promise.reject(unreachable()) : results.map(() => ({ ok: true as const })));
    executor.finish('j1');
    await time.advance(0);
    expect(transport.ops('completeMany').map((c) => c.node)).toEqual([0, 1]);
    expect(core.stats.succeeded).toBe(0);
    expect(core.busy).toBe(1);
    await time.advance(5_000);
    expect(transport.ops('completeMany').length).toBeGreaterThan(2);
    down = false;
    await time.advance(2_000);
    expect(core.stats.succeeded).toBe(1);
    expect(core.busy).toBe(0);
    const tries = transport.ops('completeMany').length;
    await time.advance(10_000);
    expect(transport.ops('completeMany')).toHaveLength(tries);
  });

  it('a failure no node answered is retried too; a refusal ends it and is counted', async () => {
    const { time, transport, executor, core } = await started();
    transport.deliver(0, [assignment('j1')]);
    await settle();
    let tries = 0;
    transport.failAnswer = () => {
      tries++;
      if (tries < 3) throw unreachable();
      throw new StaleFenceError('stale fence', { jobId: 'j1' });
    };
    executor.finish('j1', { ok: false, error: new Error('boom'), retryable: true, logs: null });
    await time.advance(5_000);
    expect(tries).toBe(3);
    expect(core.stats).toMatchObject({ failed: 0, refusedWrites: 1 });
    expect((transport.ops('fail')[0]!.req as { error: string }).error).toBe('boom');
    expect(core.busy).toBe(0);
  });

  it('failures that end together go in one request, each answered on its own', async () => {
    const { time, transport, executor, core } = await started({ slots: 3 });
    transport.deliver(0, [assignment('j1'), assignment('j2'), assignment('j3')]);
    await settle();
    transport.failAnswer = (_node, req) => {
      if ((req as { jobId: string }).jobId === 'j2') throw new StaleFenceError('stale fence', { jobId: 'j2' });
    };
    for (const id of ['j1', 'j2', 'j3']) executor.finish(id, { ok: false, error: new Error(`boom ${id}`), retryable: true, logs: null });
    await time.advance(1_000);
    const requests = transport.ops('failMany').map((c) => (c.req as { items: { jobId: string }[] }).items.map((i) => i.jobId));
    expect(requests).toEqual([['j1', 'j2', 'j3']]);
    expect(core.stats).toMatchObject({ failed: 2, refusedWrites: 1 });
    expect(core.busy).toBe(0);
  });

  it('a timed-out job is aborted and fails with the timeout as its error', async () => {
    const { time, transport, executor } = await started();
    transport.deliver(0, [assignment('j1', {}, { timeoutMs: 5_000 })]);
    await time.advance(5_000);
    expect(String(executor.aborted.get('j1'))).toContain('timed out after 5000 ms');
    expect((transport.ops('fail')[0]!.req as { error: string }).error).toBe('timed out after 5000 ms');
  });
});

describe('WorkerCore: slots and stopping', () => {
  it('hands back jobs beyond its free slots, saying why', async () => {
    const { transport, core } = await started({ slots: 1, nodes: 2 });
    transport.deliver(0, [assignment('j1')]);
    transport.deliver(1, [assignment('j2')]);
    await settle();
    expect(core.busy).toBe(1);
    expect(transport.ops('release').map((c) => c.req)).toEqual([{ workerId: 'w-1', jobId: 'j2', fence: 1, reason: 'no-free-slot' }]);
    expect(core.stats.handedBack).toBe(1);
  });

  it('hand-backs that come together go in one request, and one no node takes is given up, not retried', async () => {
    const { time, transport, core } = await started({ slots: 1, nodes: 2 });
    transport.deliver(0, [assignment('j1'), assignment('j2'), assignment('j3')]);
    await settle();
    expect(core.busy).toBe(1);
    const requests = transport.ops('releaseMany').map((c) => (c.req as { items: { jobId: string }[] }).items.map((i) => i.jobId));
    expect(requests).toEqual([['j2', 'j3']]);
    expect(core.stats.handedBack).toBe(2);
    transport.releaseAnswer = () => {
      throw unreachable();
    };
    transport.deliver(1, [assignment('j4')]);
    await time.advance(60_000);
    // Tried once on each node, then left to run out.
    expect(transport.ops('releaseMany').map((c) => c.node)).toEqual([0, 1, 0]);
    expect(core.stats.handedBack).toBe(2);
  });

  it('stop hands back at once a job known to outlast the grace, lets others finish, and hands back what still runs at its end', async () => {
    const { time, transport, executor, core } = await started({ slots: 3 });
    transport.deliver(0, [assignment('long', {}, { type: 'sleep', config: { durationMs: 60_000 } }), assignment('quick'), assignment('stuck')]);
    await settle();
    const stopped = core.stop();
    await settle();
    expect(transport.ops('release').map((c) => c.req)).toEqual([{ workerId: 'w-1', jobId: 'long', fence: 1, reason: 'stopping' }]);
    expect(executor.aborted.has('long')).toBe(true);
    executor.finish('quick');
    await time.advance(10_000);
    expect(transport.ops('completeMany')).toHaveLength(1);
    // Leases are still renewed while the grace runs.
    await time.advance(20_000);
    expect(transport.ops('renew').length).toBeGreaterThan(0);
    await stopped;
    expect(transport.ops('release').map((c) => (c.req as { jobId: string }).jobId)).toEqual(['long', 'stuck']);
    expect(executor.aborted.has('stuck')).toBe(true);
    expect(core.stats).toMatchObject({ handedBack: 2, succeeded: 1 });
    expect(core.busy).toBe(0);
    // No new poll after the stop, and none still open.
    const polls = transport.ops('poll').length;
    await time.advance(60_000);
    expect(transport.ops('poll')).toHaveLength(polls);
  });

  it('halt sends nothing more: no result, no renewal, no hand-back', async () => {
    const { time, transport, executor, core } = await started();
    transport.deliver(0, [assignment('j1')]);
    await settle();
    core.halt();
    const before = transport.calls.length;
    executor.finish('j1');
    await time.advance(120_000);
    expect(transport.calls.length).toBe(before);
  });
});

describe('WorkerCore: what the store cannot keep', () => {
  it('replaces NULs and lone surrogates in logs, and fails for good a job whose output cannot be stored', async () => {
    const { time, transport, executor, core } = await started();
    transport.deliver(0, [assignment('j1'), assignment('j2')]);
    await settle();
    executor.finish('j1', { ok: true, output: { fine: 'yes' }, logs: 'a\u0000b\ud800c \ud83d\ude00' });
    executor.finish('j2', { ok: true, output: { text: 'nul\u0000' }, logs: 'ok' });
    await time.advance(0);
    await settle();
    const sent = transport.ops('completeMany').flatMap((c) => (c.req as { results: { jobId: string; output: unknown; logs: string | null }[] }).results);
    expect(sent).toEqual([{ jobId: 'j1', fence: 1, output: { fine: 'yes' }, logs: 'a\ufffdb\ufffdc \ud83d\ude00' }]);
    const [failed] = transport.ops('fail').map((c) => c.req as { jobId: string; error: string; retryable: boolean; logs: string | null });
    expect(failed).toMatchObject({ jobId: 'j2', retryable: false, logs: 'ok' });
    expect(failed!.error).toBe("the job's output cannot be stored: output.text must not contain a NUL character (\\u0000)");
    expect(core.stats).toMatchObject({ succeeded: 1, failed: 1 });
  });

  it('clips an error and logs to what the protocol takes, so the write is not refused and sent again', async () => {
    const { time, transport, executor } = await started();
    transport.deliver(0, [assignment('j1')]);
    await settle();
    executor.finish('j1', { ok: false, error: new Error('e'.repeat(LIMITS.maxErrorLength + 10)), retryable: true, logs: 'l'.repeat(LIMITS.maxResultBytes + 10) });
    await time.advance(0);
    await settle();
    const [failed] = transport.ops('fail').map((c) => c.req as { error: string; logs: string });
    expect(failed!.error).toHaveLength(LIMITS.maxErrorLength);
    expect(failed!.logs).toHaveLength(LIMITS.maxResultBytes);
  });
});

describe('WorkerCore: upstream outputs', () => {
  it('reads the upstream outputs of a job with its fence from the node that delivered it, and asks nothing for a job without dependencies', async () => {
    const { transport, executor } = await started({ nodes: 2 });
    transport.upstreamAnswer = (_n, req) => req.taskIds.map((taskId) => ({ taskId, jobId: asJobId(`up-${taskId}`), fence: 3, output: { from: taskId } }));
    transport.deliver(1, [assignment('j1', { fence: 7 }, { dependsOn: ['extract', 'clean'] }), assignment('j2')]);
    await settle();
    const [first, second] = executor.started;
    expect(await first!.control.upstream()).toEqual({ extract: { output: { from: 'extract' } }, clean: { output: { from: 'clean' } } });
    expect(transport.ops('upstream')).toEqual([{ op: 'upstream', node: 1, req: { workerId: 'w-1', jobId: 'j1', fence: 7, taskIds: ['extract', 'clean'] } }]);
    expect(await second!.control.upstream()).toEqual({});
    expect(transport.ops('upstream')).toHaveLength(1);
  });

  it('fails a job whose output is over LIMITS.maxOutputBytes for good, saying so, instead of sending it', async () => {
    const { transport, executor } = await started();
    transport.deliver(0, [assignment('j1')]);
    await settle();
    executor.finish('j1', { ok: true, output: 'x'.repeat(LIMITS.maxOutputBytes), logs: null });
    await settle();
    expect(transport.ops('completeMany')).toHaveLength(0);
    const [failed] = transport.ops('fail').map((c) => c.req as { error: string; retryable: boolean });
    expect(failed).toMatchObject({ retryable: false });
    expect(failed!.error).toMatch(/^the output of job j1 is \d+ bytes of JSON; an output may be at most 65536 bytes \(LIMITS.maxOutputBytes\)/);
  });
});
