import { describe, expect, it } from 'vitest';
import { type RunRow } from '../src';
import { MAX_OPEN_SPANS, RunTraces } from '../src/engine';
import { RecordingTracing } from '../src/testing/recording-tracing';
import { asDagId, asRunId } from './literal-ids';

function row(id: string): RunRow {
  const at = new Date(0);
  return {
    id: asRunId(id),
    dagId: asDagId('dag-1'),
    dagVersion: 1,
    shard: 0,
    scheduledAt: at,
    trigger: 'manual',
    state: 'running',
    createdAt: at,
    startedAt: at,
    endedAt: null,
    params: {},
  };
}

describe('RunTraces: open spans stay bounded', () => {
  it('lets the oldest open span go past the bound, and counts it', async () => {
    let dropped = 0;
    const traces = new RunTraces(new RecordingTracing(), (n) => (dropped += n));
    for (let i = 0; i <= MAX_OPEN_SPANS; i++) traces.runStarted(row(`run-${i}`), 0);
    expect(traces.openCount().runs).toBe(MAX_OPEN_SPANS);
    expect(dropped).toBe(1);
    expect(traces.spanOf({ runId: asRunId('run-0') })).toBeUndefined();
    expect(traces.spanOf({ runId: asRunId(`run-${MAX_OPEN_SPANS}`) })).toBeDefined();
  });

  it("lets a lost shard's spans go unended and keeps the others", async () => {
    const tracing = new RecordingTracing();
    let dropped = 0;
    const traces = new RunTraces(tracing, (n) => (dropped += n));
    traces.runStarted(row('on-0'), 0);
    traces.runStarted({ ...row('on-1'), shard: 1 }, 1);
    traces.dropShard(0);
    expect(traces.openCount().runs).toBe(1);
    expect(dropped).toBe(1);
    expect(tracing.spans.every((s) => !s.ended)).toBe(true);
    traces.runEnded(asRunId('on-1'), [], 'succeeded');
    expect(tracing.named('fenceline.run').map((s) => s.ended)).toEqual([false, true]);
  });
});
