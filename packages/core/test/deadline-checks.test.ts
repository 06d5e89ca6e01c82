import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { deadlineChecks } from '../src/engine/notification-watch';
import { formatDurationSeconds, parseDurationSeconds, type NotificationWatch } from '../src/notify/notifications';

const T0 = Date.parse('2026-03-01T00:00:00.000Z');

function watch(schedule: NotificationWatch['dags'][number]['schedule'], afterSeconds: number, ruleCreatedMs = T0, dagCreatedMs = T0): NotificationWatch {
  return {
    now: new Date(T0),
    deadlineRules: [{ id: '1', dagId: null, afterSeconds, createdAt: new Date(ruleCreatedMs) }],
    dags: [{ id: 'd', shard: 0, schedule, createdAt: new Date(dagCreatedMs) }],
    clusterRules: false,
  };
}

const slots = (checks: { scheduledAt: Date }[]): string[] => checks.map((c) => c.scheduledAt.toISOString()).sort();

describe('deadlineChecks', () => {
  it('lists the slots whose deadline passed in the window, not those before the DAG or the rule', () => {
    const w = watch({ kind: 'interval', everyMs: 60_000 }, 30, T0 + 90_000, T0);
    // Deadlines at 0:30, 1:30, 2:30, 3:30; the rule was made at 1:30, so 0:30 is not told.
    const { checks } = deadlineChecks(w, 0, T0 - 3_600_000, T0 + 4 * 60_000);
    expect(slots(checks)).toEqual(['2026-03-01T00:01:00.000Z', '2026-03-01T00:02:00.000Z', '2026-03-01T00:03:00.000Z']);
    expect(deadlineChecks(w, 1, T0, T0 + 4 * 60_000).checks).toEqual([]);
  });

  it('finds the same slots with the next-slot cache as without it, over any sequence of checks', () => {
    const schedules = [
      { kind: 'interval' as const, everyMs: 45_000 },
      { kind: 'cron' as const, cron: '*/2 * * * *', timezone: 'Europe/Paris' },
      { kind: 'cron' as const, cron: '0 0 * * *', timezone: 'UTC' },
    ];
    fc.assert(
      // At most 4,000 s in all: fewer than the 100 slots a single check looks at, so one check over the whole span is the reference.
      fc.property(
        fc.constantFrom(...schedules),
        fc.integer({ min: 1, max: 600 }),
        fc.array(fc.integer({ min: 1, max: 200_000 }), { minLength: 1, maxLength: 20 }),
        (schedule, after, steps) => {
          const w = watch(schedule, after, T0 - 86_400_000, T0 - 86_400_000);
          let cache = new Map<string, number>();
          let from = T0;
          const cached: string[] = [];
          for (const step of steps) {
            const out = deadlineChecks(w, 0, from, from + step, cache);
            cached.push(...slots(out.checks));
            cache = out.nextSlots;
            from += step;
          }
          expect(cached.sort()).toEqual(slots(deadlineChecks(w, 0, T0, from).checks));
        },
      ),
      { numRuns: 50 },
    );
  });
});

describe('rule durations', () => {
  it('reads seconds and s, m, h, d, writes the largest whole unit, and refuses anything else naming the field', () => {
    expect(['90', '90s', '10m', '2h', '1d'].map((v) => parseDurationSeconds(v))).toEqual([90, 90, 600, 7200, 86_400]);
    expect([90, 600, 7200, 86_400, 61].map(formatDurationSeconds)).toEqual(['90s', '10m', '2h', '1d', '61s']);
    for (const bad of ['', 'soon', '1.5m', '-5s', '10 minutes']) {
      expect(() => parseDurationSeconds(bad)).toThrow(expect.objectContaining({ details: { field: 'afterSeconds' } }));
    }
  });
});
