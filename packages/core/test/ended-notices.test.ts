import { describe, expect, it } from 'vitest';
import { parseJobId } from '../src/ids';
import { endedNotices } from '../src/engine/scheduler-node';

describe('job-ended notices to another node', () => {
  it('tell each shard of its ended jobs in notices of at most 200 ids, every id once, in order', () => {
    const rows = [
      ...Array.from({ length: 450 }, (_, i) => ({ id: parseJobId(String(1_000 + i)), shard: 3 })),
      { id: parseJobId('7'), shard: 5 },
      ...Array.from({ length: 10 }, (_, i) => ({ id: parseJobId(String(5_000 + i)), shard: 3 })),
    ];
    const notices = endedNotices(rows);
    const forShard = (s: number) => notices.filter((n) => n.shard === s);
    expect(forShard(3).map((n) => (n.kind === 'job-ended' ? n.jobIds?.length : -1))).toEqual([200, 200, 60]);
    expect(forShard(5)).toEqual([{ kind: 'job-ended', shard: 5, jobId: '7', jobIds: ['7'] }]);
    const ids = forShard(3).flatMap((n) => (n.kind === 'job-ended' ? (n.jobIds ?? []) : []));
    expect(ids).toEqual(rows.filter((r) => r.shard === 3).map((r) => r.id));
    // jobId names the first of its notice's jobs, for a reader that knows only jobId.
    for (const n of notices) if (n.kind === 'job-ended') expect(n.jobId).toBe(n.jobIds![0]);
    // A payload of 200 of the longest ids fits NOTIFY's 8,000 bytes.
    const longest = endedNotices(Array.from({ length: 200 }, (_, i) => ({ id: parseJobId(String(9_000_000_000_000_000_000n + BigInt(i))), shard: 1 })));
    expect(Buffer.byteLength(JSON.stringify(longest[0]))).toBeLessThan(8_000);
    expect(endedNotices([])).toEqual([]);
  });
});
