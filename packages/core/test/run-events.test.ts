import { describe, expect, it } from 'vitest';
import type { GrantedLease, LeaderToken, NewEvent, RunActionRow, SweptJob } from '../src/store';
import { RunEvents } from '../src/engine/run-events';
import { asDagId, asJobId, asRunId, asWorkerId } from './literal-ids';

const token: LeaderToken = { shard: 3, epoch: 7, nodeId: 'node-a' };
const run = { id: asRunId('run-1'), dagId: asDagId('daily') };

function recorder(): { events: NewEvent[]; ev: RunEvents } {
  const events: NewEvent[] = [];
  return { events, ev: new RunEvents(token, (e) => events.push(e)) };
}

const action: RunActionRow = {
  id: 'act-1',
  runId: run.id,
  dagId: run.dagId,
  shard: 3,
  kind: 'clear',
  taskIds: ['extract'],
  downstream: true,
  reason: 'bad input',
  requestedBy: 'ops',
  state: 'pending',
  createdAt: new Date(0),
  appliedAt: null,
  result: null,
};

describe('RunEvents', () => {
  it("stamps a run's events with the leader's shard and epoch, fields in one order", () => {
    const { events, ev } = recorder();
    const scheduledAt = new Date(Date.UTC(2026, 0, 1));
    ev.created({ ...run, scheduledAt, trigger: 'schedule' });
    ev.started(run, 4);
    ev.finished(run, 'succeeded');
    expect(events).toEqual([
      { type: 'run:created', shard: 3, dagId: 'daily', runId: 'run-1', epoch: 7, data: { scheduledAt: '2026-01-01T00:00:00.000Z', trigger: 'schedule' } },
      { type: 'run:started', shard: 3, dagId: 'daily', runId: 'run-1', epoch: 7, data: { jobs: 4 } },
      { type: 'run:finished', shard: 3, dagId: 'daily', runId: 'run-1', epoch: 7, data: { state: 'succeeded' } },
    ]);
    // The store keeps what it is given; the order of the fields is part of the event as written.
    expect(events.map((e) => Object.keys(e))).toEqual([
      ['type', 'shard', 'dagId', 'runId', 'epoch', 'data'],
      ['type', 'shard', 'dagId', 'runId', 'epoch', 'data'],
      ['type', 'shard', 'dagId', 'runId', 'epoch', 'data'],
    ]);
  });

  it("names a backfill's run and a run's end reason in the data, after the state", () => {
    const { events, ev } = recorder();
    ev.created({ ...run, scheduledAt: new Date(0), trigger: 'backfill' }, 'bf-1');
    ev.finished(run, 'failed', { reason: 'too many tasks' });
    ev.finished(run, 'cancelled', { backfillId: 'bf-1' });
    expect(events.map((e) => e.data)).toEqual([
      { scheduledAt: '1970-01-01T00:00:00.000Z', trigger: 'backfill', backfillId: 'bf-1' },
      { state: 'failed', reason: 'too many tasks' },
      { state: 'cancelled', backfillId: 'bf-1' },
    ]);
    expect(Object.keys(events[1]!.data!)).toEqual(['state', 'reason']);
  });

  it('tells skipped slots as a run:created of the DAG with no run and no epoch', () => {
    const { events, ev } = recorder();
    ev.slotsSkipped(run.dagId, 5, 'latest');
    expect(events).toEqual([{ type: 'run:created', shard: 3, dagId: 'daily', data: { skippedSlots: 5, policy: 'latest' } }]);
  });

  it('tells an action, each job it moved by what it became, and each lease it revoked', () => {
    const { events, ev } = recorder();
    const result = { changed: [{ taskId: 'extract', from: 'failed' as const, to: 'waiting' as const }], runState: 'failed' as const };
    ev.actionApplied(run, action, result);
    ev.jobActed(run, { id: asJobId('job-1'), fence: 2 }, { from: 'failed', to: 'waiting' }, action);
    ev.jobActed(run, undefined, { from: 'leased', to: 'cancelled' }, action);
    ev.jobActed(run, undefined, { from: 'waiting', to: 'upstream_failed' }, action);
    ev.jobActed(run, undefined, { from: 'failed', to: 'succeeded' }, action);
    ev.leaseRevoked(run, { jobId: asJobId('job-2'), fence: 5, holder: asWorkerId('w-1') }, 'cleared by ops', action.id);
    expect(events[0]).toEqual({
      type: 'run:action',
      shard: 3,
      dagId: 'daily',
      runId: 'run-1',
      epoch: 7,
      data: { actionId: 'act-1', kind: 'clear', by: 'ops', reason: 'bad input', changed: result.changed, runState: 'failed' },
    });
    expect(events.slice(1, 5).map((e) => e.type)).toEqual(['job:cleared', 'job:cancelled', 'job:upstream_failed', 'job:marked']);
    expect(events[1]).toEqual({
      type: 'job:cleared',
      shard: 3,
      dagId: 'daily',
      runId: 'run-1',
      jobId: 'job-1',
      fence: 2,
      epoch: 7,
      data: { actionId: 'act-1', from: 'failed', to: 'waiting', by: 'ops', reason: 'bad input' },
    });
    expect(events[2]).toMatchObject({ jobId: null, fence: null });
    expect(events[5]).toEqual({
      type: 'lease:revoked',
      shard: 3,
      dagId: 'daily',
      runId: 'run-1',
      jobId: 'job-2',
      workerId: 'w-1',
      fence: 5,
      epoch: 7,
      data: { reason: 'cleared by ops', actionId: 'act-1' },
    });
  });

  it('dates a grant by the store and tells an expiry with what became of the job', () => {
    const { events, ev } = recorder();
    const leasedAt = new Date(1_000);
    const lease = { jobId: asJobId('job-1'), runId: run.id, dagId: run.dagId, taskId: 't', workerId: asWorkerId('w-1'), fence: 3, attempt: 2, leasedAt } as GrantedLease;
    ev.leaseGranted({ id: asJobId('job-1'), runId: run.id, dagId: run.dagId }, lease);
    const swept = { jobId: asJobId('job-1'), runId: run.id, dagId: run.dagId, previousHolder: asWorkerId('w-1'), fence: 4 } as SweptJob;
    ev.leaseExpired(swept, { state: 'ready', reason: 'lease ran out' });
    expect(events).toEqual([
      { type: 'lease:granted', at: leasedAt, shard: 3, dagId: 'daily', runId: 'run-1', jobId: 'job-1', workerId: 'w-1', fence: 3, epoch: 7, data: { attempt: 2 } },
      { type: 'lease:expired', shard: 3, dagId: 'daily', runId: 'run-1', jobId: 'job-1', workerId: 'w-1', fence: 4, epoch: 7, data: { state: 'ready', reason: 'lease ran out' } },
    ]);
    expect(Object.keys(events[0]!)).toEqual(['type', 'at', 'shard', 'dagId', 'runId', 'jobId', 'workerId', 'fence', 'epoch', 'data']);
  });

  it("tells a backfill's steps as backfill events of its DAG", () => {
    const { events, ev } = recorder();
    ev.backfill('advanced', run.dagId, { backfillId: 'bf-1', created: 2 });
    expect(events).toEqual([{ type: 'backfill:advanced', shard: 3, dagId: 'daily', epoch: 7, data: { backfillId: 'bf-1', created: 2 } }]);
  });
});
