import { describe, expect, it } from 'vitest';
import type { PollItem } from '@fenceline/core/engine';
import { checkedTraceparents } from '../src/trace-context';

const GOOD = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

function lease(traceparent?: unknown): PollItem {
  return {
    jobId: '1',
    runId: '1',
    dagId: 'd',
    taskId: 't',
    attempt: 1,
    fence: 1,
    leaseTtlMs: 1,
    renewIntervalMs: 1,
    task: { type: 'noop', config: {}, timeoutMs: 0, dependsOn: [] },
    params: {},
    ...(traceparent === undefined ? {} : { traceparent }),
  } as unknown as PollItem;
}

describe('worker: the trace context a lease carries', () => {
  it('keeps a well-formed traceparent and drops anything else, leaving leases without one as they are', () => {
    const bad = [
      '',
      'hello',
      `${GOOD}\r\nx-injected: 1`,
      '00-00000000000000000000000000000000-b7ad6b7169203331-01',
      '00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01',
      GOOD.toUpperCase(),
      42,
    ];
    const items = checkedTraceparents([lease(GOOD), lease(), ...bad.map(lease), { revoked: true, jobId: '2', fence: 3 } as unknown as PollItem]);
    expect(items.map((i) => ('traceparent' in i ? i.traceparent : null))).toEqual([GOOD, null, ...bad.map(() => null), null]);
  });
});
