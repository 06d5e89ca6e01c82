'use client';

import { useEffect, useMemo, useState } from 'react';
import { Card } from '@/components/ui';
import { clock, ReplayControls, type Speed } from './replay-controls';
import { ReplayGraph } from './replay-graph';
import { ReplayLegend } from './replay-legend';
import { type SimReplay } from './replay-model';
import { STATE_CODE } from '@/lib/shown-states';
import { planDrawing } from '@/lib/graph-plan';
import { compileTimeline, momentAt } from './replay-timeline';
import { usePlayback } from './use-playback';
import { plural } from '@/lib/plural';

function runStateAt(run: SimReplay['runs'][number], atMs: number): string {
  if (run.endedAtMs !== null && run.endedAtMs <= atMs) return run.state;
  if (run.startedAtMs !== null && run.startedAtMs <= atMs) return 'running';
  return run.createdAtMs <= atMs ? 'queued' : 'not created yet';
}

/**
 * One DAG of a simulator run replayed over virtual time: the graph coloured by each job's
 * state at the slider's moment, playback at a choice of speeds, and what happened so far.
 */
export function ReplayPanel({ replay, index }: { replay: SimReplay; index: number }) {
  const timeline = useMemo(() => compileTimeline(replay), [replay]);
  const plan = useMemo(() => planDrawing(replay.tasks), [replay]);
  const [atMs, setAtMs] = useState(timeline.startMs);
  const [playing, setPlaying] = useState(false);
  const [speed, setSpeed] = useState<Speed>(60);
  usePlayback(playing, speed, (byMs) => setAtMs((t) => Math.min(timeline.endMs, t + byMs)));
  useEffect(() => {
    if (playing && atMs >= timeline.endMs) setPlaying(false);
  }, [playing, atMs, timeline.endMs]);
  const moment = useMemo(() => momentAt(timeline, atMs), [timeline, atMs]);

  const run = moment.runIndex === null ? null : replay.runs[moment.runIndex]!;
  const total = replay.tasks.length;
  const finished = (['succeeded', 'failed', 'upstream_failed', 'cancelled'] as const).reduce((n, s) => n + (moment.counts[STATE_CODE[s]] ?? 0), 0);
  const grouped = plan.nodes.filter((n) => n.kind === 'group');
  const runState = run ? runStateAt(run, atMs) : 'none';
  return (
    <Card title={`Replay: DAG ${replay.dagId}`}>
      <div data-testid={`sim-replay-${index}`} data-dag={replay.dagId} data-start-ms={timeline.startMs} data-run-state={runState} data-exact={moment.exact ? 'true' : 'false'}>
        <ReplayGraph replay={replay} plan={plan} moment={moment} />
        <ReplayControls
          index={index}
          atMs={atMs}
          endMs={timeline.endMs}
          playing={playing}
          speed={speed}
          onTime={(ms) => {
            setPlaying(false);
            setAtMs(ms);
          }}
          onPlay={() => {
            if (!playing && atMs >= timeline.endMs) setAtMs(timeline.startMs);
            setPlaying(!playing);
          }}
          onSpeed={setSpeed}
        />
        <ReplayLegend counts={moment.counts} index={index} />
        <p className="small muted" data-testid={`replay-status-${index}`}>
          {run
            ? `DAG run ${run.runId} (${run.trigger}${replay.runs.length > 1 ? `, ${moment.runIndex! + 1} of ${replay.runs.length}` : ''}), created at ${clock(run.createdAtMs)}: ${runState}, ${finished.toLocaleString('en-US')} of ${plural(total, 'job')} finished; so far ${plural(moment.expired, 'lease')} expired, ${moment.handedBack} handed back, ${plural(moment.refused, 'fenced write')} refused.`
            : 'This DAG had no run in the simulation.'}
          {grouped.length > 0
            ? ` ${plan.nodes.length - grouped.length} tasks are drawn on their own and ${grouped.reduce((n, g) => n + g.members.length, 0).toLocaleString('en-US')} in ${grouped.length === 1 ? 'one group' : `${grouped.length} groups`}, counted by state.`
            : ''}
        </p>
        {replay.truncatedAtMs !== null ? (
          <p className={`small ${moment.exact ? 'muted' : 'warn-text'}`} data-testid={`replay-truncated-${index}`}>
            The recording kept its first {replay.limits.maxTransitions.toLocaleString('en-US')} state changes, up to {clock(replay.truncatedAtMs)};{' '}
            {replay.dropped.transitions.toLocaleString('en-US')} later ones were not kept. Past that point the graph holds the last recorded states, and at the very end each
            job&apos;s final state.
          </p>
        ) : null}
        {replay.dropped.runs > 0 ? (
          <p className="small muted">
            {plural(replay.dropped.runs, 'later run')} of this DAG {replay.dropped.runs === 1 ? 'was' : 'were'} not followed (over {replay.limits.maxJobs.toLocaleString('en-US')}{' '}
            jobs in all).
          </p>
        ) : null}
      </div>
    </Card>
  );
}
