import { jobStateWord, parseRunId } from '@fenceline/core';
import { type AuditStore, type RunActionKind, type RunActionRequest, type RunActionRow, type RunActionStore, type RunReadStore } from '@fenceline/core/store';
import { cliAudit, osUser } from './cli-people';
import { flag, fmt, hasFlag, need, positional, UsageError } from './cli-args';
import { cliKeyOwner, commandLine, lostInTransit, requestKeyOf, sendOnce } from './cli-once';

/** The operator actions on runs, as CLI commands. */
export const ACTION_HELP = `  cancel <RUN_ID> [--task T]... [--downstream] [--reason TEXT]
                                   cancel a run, or the named tasks (and with --downstream what depends on them);
                                   running jobs are stopped and any result they still send is refused
  clear <RUN_ID> --task T... [--downstream]
                                   run finished tasks again with fresh attempts (the run reopens)
  retry <RUN_ID>                   clear every failed and upstream_failed task of the run
  mark <RUN_ID> --task T... --success|--failed --reason TEXT
                                   set tasks' outcome by hand; downstream proceeds as if they had run
  actions <RUN_ID>                 a run's operator actions and what each changed
  (cancel, clear, retry and mark wait up to 30 s for the shard's leader to apply the action; --no-wait returns at once)`;

export const ACTION_COMMANDS = new Set(['cancel', 'clear', 'retry', 'mark', 'actions']);

type ActionCliStore = RunActionStore & RunReadStore & AuditStore;

const WAIT_MS = 30_000;
const POLL_MS = 200;

/** Every value of a repeatable flag, in order. */
function flags(args: string[], name: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) if (args[i] === name && args[i + 1] !== undefined) out.push(args[++i]!);
  return out;
}

/** The request a `cancel`, `clear`, `retry` or `mark` command line asks for. */
export function actionRequestOf(command: string, args: string[]): RunActionRequest {
  const runId = parseRunId(need(positional(args)[0], 'RUN_ID'), 'RUN_ID');
  const taskIds = flags(args, '--task');
  const base = {
    runId,
    taskIds,
    downstream: hasFlag(args, '--downstream'),
    reason: flag(args, '--reason') ?? null,
    requestedBy: `cli:${osUser()}`,
    requestKey: flag(args, '--idempotency-key'),
  };
  switch (command) {
    case 'cancel':
      return { ...base, kind: 'cancel' };
    case 'clear':
      return { ...base, kind: 'clear' };
    case 'retry':
      return { ...base, kind: 'retry_failed' };
    default: {
      const success = hasFlag(args, '--success');
      if (success === hasFlag(args, '--failed')) throw new UsageError('mark needs exactly one of --success or --failed');
      const kind: RunActionKind = success ? 'mark_success' : 'mark_failed';
      return { ...base, kind };
    }
  }
}

/** What an applied action did, in a line an operator can read. */
export function describeAction(a: RunActionRow): string {
  const head = `action ${a.id} (${a.kind}${a.taskIds.length > 0 ? ` ${a.taskIds.join(', ')}` : ''}${a.downstream ? ' and downstream' : ''}) by ${a.requestedBy}`;
  if (a.state === 'pending' || !a.result) return `${head}: pending, not applied yet`;
  const changed = a.result.changed.map((c) => `${c.taskId} ${jobStateWord(c.from)} -> ${jobStateWord(c.to)}`).join(', ');
  return `${head}: applied at ${fmt(a.appliedAt)}; ${changed || a.result.note || 'nothing changed'}; run is ${a.result.runState}`;
}

export async function runActionCommand(store: ActionCliStore, command: string, args: string[]): Promise<number> {
  if (command === 'actions') {
    const runId = parseRunId(need(positional(args)[0], 'RUN_ID'), 'RUN_ID');
    await store.getRun(runId);
    const actions = await store.listRunActions(runId);
    if (actions.length === 0) console.log(`run ${runId} has no operator actions`);
    for (const a of actions) console.log(describeAction(a));
    return 0;
  }
  const req = actionRequestOf(command, args);
  const action = await sendOnce({
    key: requestKeyOf(req.requestKey),
    send: (requestKey) => store.requestRunAction({ ...req, requestKey, requestOwner: cliKeyOwner() }),
    transient: lostInTransit,
    command: commandLine(command, args),
  });
  await cliAudit(store, {
    action: 'run.action_requested',
    dagId: action.dagId,
    target: action.runId,
    details: { actionId: action.id, kind: action.kind, taskIds: action.taskIds, downstream: action.downstream, reason: action.reason },
  });
  return reportAction(action, (id) => store.getRunAction(id), hasFlag(args, '--no-wait'));
}

/**
 * Prints a stored action once the shard's leader has applied it (or at once with
 * --no-wait), reading it again with `get` until then; the store and the HTTP API read it
 * their own way, and both print the same lines.
 */
export async function reportAction(action: RunActionRow, get: (id: RunActionRow['id']) => Promise<RunActionRow>, noWait: boolean): Promise<number> {
  if (noWait) {
    console.log(`${describeAction(action)}`);
    return 0;
  }
  const deadline = Date.now() + WAIT_MS;
  let current = action;
  while (current.state === 'pending' && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    current = await get(action.id);
  }
  if (current.state === 'pending') {
    console.log(`${describeAction(current)}: no leader of shard ${current.shard} applied it within ${WAIT_MS / 1000} s; it stays stored and the shard's next leader applies it`);
    return 0;
  }
  console.log(describeAction(current));
  return 0;
}
