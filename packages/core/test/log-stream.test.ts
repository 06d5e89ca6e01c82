import { describe, expect, it } from 'vitest';
import { LIMITS } from '../src';
import { LogStream } from '../src/worker/log-stream';
import { assignment, FakeExecutor, FakeTime, FakeTransport, settle } from './worker-fakes';
import { WorkerCore } from '../src/worker';
import { asWorkerId } from './literal-ids';

describe('LogStream', () => {
  it('hands each line once, and nothing when there is nothing new', () => {
    const s = new LogStream();
    expect(s.take()).toBeUndefined();
    s.append('one');
    s.append('two');
    expect(s.take()).toBe('one\ntwo\n');
    expect(s.take()).toBeUndefined();
  });

  it('holds at most a chunk between takes and says how many lines it dropped', () => {
    const s = new LogStream();
    const line = 'x'.repeat(1000);
    for (let i = 0; i < 40; i++) s.append(line);
    const chunk = s.take()!;
    expect(chunk.length).toBeLessThanOrEqual(LIMITS.maxLogChunkChars);
    expect(chunk).toMatch(/\[\d+ lines not streamed: more than 16384 characters between two renewals\]\n$/);
    s.append('after');
    expect(s.take()).toBe('after\n');
  });

  it('streams the start of a line longer than a chunk', () => {
    const s = new LogStream();
    s.append('z'.repeat(LIMITS.maxLogChunkChars * 2));
    const chunk = s.take()!;
    expect(chunk.startsWith('zzz')).toBe(true);
    expect(chunk.length).toBeLessThanOrEqual(LIMITS.maxLogChunkChars);
  });

  it('stops for good at the attempt’s limit, saying so once', () => {
    const s = new LogStream();
    const line = 'y'.repeat(8000);
    let sent = '';
    for (let i = 0; i < 200; i++) {
      s.append(line);
      sent += s.take() ?? '';
    }
    expect(sent.length).toBeLessThanOrEqual(LIMITS.maxStreamedLogChars);
    expect(sent.match(/the live log stops here/g)).toHaveLength(1);
    s.append('later');
    expect(s.take()).toBeUndefined();
  });
});

describe('WorkerCore: streamed logs', () => {
  it('a renewal carries the lines logged since the last one, and a renewal without new lines carries none', async () => {
    const time = new FakeTime();
    const transport = new FakeTransport(1);
    const executor = new FakeExecutor();
    const core = new WorkerCore({ workerId: asWorkerId('w-1'), slots: 1, clock: time, timers: time, transport, executor, pollWaitMs: 25_000, shutdownGraceMs: 30_000 });
    await core.start();
    await settle();
    transport.deliver(0, [assignment('j1')]);
    await settle();
    const { control } = executor.started[0]!;
    control.log('first');
    control.log('second');
    await time.advance(30_000);
    await time.advance(30_000);
    control.log('third');
    await time.advance(30_000);
    const leases = transport.ops('renew').map((c) => (c.req as { leases: { jobId: string; log?: string }[] }).leases);
    expect(leases).toEqual([[{ jobId: 'j1', fence: 1, log: 'first\nsecond\n' }], [{ jobId: 'j1', fence: 1 }], [{ jobId: 'j1', fence: 1, log: 'third\n' }]]);
  });
});
