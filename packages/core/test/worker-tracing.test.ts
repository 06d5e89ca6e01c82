import { describe, expect, it } from 'vitest';
import { WorkerCore } from '../src/worker';
import { RecordingTracing } from '../src/testing/recording-tracing';
import { assignment, FakeExecutor, FakeTime, FakeTransport, settle } from './worker-fakes';
import { asWorkerId } from './literal-ids';

const CARRIED = '00-0123456789abcdef0123456789abcdef-00000000000000aa-01';

async function started(tracing: RecordingTracing) {
  const time = new FakeTime();
  const transport = new FakeTransport(1);
  const executor = new FakeExecutor();
  const core = new WorkerCore({ workerId: asWorkerId('w-1'), slots: 2, clock: time, timers: time, transport, executor, pollWaitMs: 25_000, tracing });
  await core.start();
  await settle();
  return { time, transport, executor };
}

describe('WorkerCore: tracing', () => {
  it("runs a job in a span that is the child of the attempt's carried context, and hands its own context to the handler", async () => {
    const tracing = new RecordingTracing();
    const { time, transport, executor } = await started(tracing);
    transport.deliver(0, [assignment('j1', { traceparent: CARRIED })]);
    await settle();
    const [span] = tracing.named('fenceline.job.run');
    expect(span?.traceId).toBe('0123456789abcdef0123456789abcdef');
    expect(span?.parentSpanId).toBe('00000000000000aa');
    expect(span?.kind).toBe('consumer');
    expect(executor.started[0]!.control.traceparent).toBe(span!.traceparent());
    executor.finish('j1');
    await time.advance(0);
    expect(transport.ops('completeMany')).toHaveLength(1);
    expect(span!.events.map((e) => e.name)).toEqual(['running', 'result']);
    expect(span!.ended).toBe(true);
    expect(span!.error).toBeUndefined();
  });

  it('makes no span with tracing off, and passes the carried context on as it came', async () => {
    const tracing = new RecordingTracing(false);
    const { time, transport, executor } = await started(tracing);
    transport.deliver(0, [assignment('j1', { traceparent: CARRIED }), assignment('j2')]);
    await settle();
    expect(executor.started.map((s) => s.control.traceparent)).toEqual([CARRIED, undefined]);
    executor.finish('j1');
    executor.finish('j2');
    await time.advance(0);
    expect(tracing.spans).toEqual([]);
  });
});
