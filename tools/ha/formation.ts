import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { appendFile, chown, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/**
 * A highly available PostgreSQL on one machine, for the failover tests, the chaos soak's
 * `--ha` fault and the store-failover bench: a pg_auto_failover monitor and N data nodes (a
 * primary and N - 1 secondaries, 3 nodes by default), each on its own port and data
 * directory, brought up and torn down by this module. With three nodes or more the
 * formation's `number_sync_standbys` is 1: every commit waits for one standby, and the loss
 * of any one node still leaves the primary a synchronous standby, so the store keeps
 * accepting results. With two, the survivor of a lost machine runs alone and the store
 * takes no result until the other node is back. It needs Debian's `postgresql-15-auto-failover`
 * (`pg_autoctl`); `haUnavailableReason()` says why it cannot run when it cannot.
 */
export interface Formation {
  /** The multi-host URL the product connects with: every node, `target_session_attrs=read-write`. */
  url: string;
  nodes: FormationNode[];
  /** The node the monitor says is primary now, if any. */
  primary(): Promise<FormationNode | undefined>;
  /**
   * kill -9 of the primary's postmaster; returns the node killed. With `machine`, its
   * pg_autoctl keeper is killed first, as when the whole machine is lost: otherwise the
   * keeper restarts the postmaster at once, and the monitor may keep it primary.
   */
  killPrimary(opts?: { machine?: boolean }): Promise<FormationNode>;
  /** Waits until the monitor reports a primary other than `old` that accepts writes. */
  waitForNewPrimary(old: FormationNode, timeoutMs: number): Promise<FormationNode>;
  /**
   * Makes every secondary's replication asynchronous (they stop counting for the quorum, and
   * the formation's `number_sync_standbys` goes to 0) or synchronous again.
   */
  setSynchronous(sync: boolean): Promise<void>;
  /**
   * Starts the keeper of a node whose machine was lost (killPrimary with `machine`), as when
   * the machine comes back: it rejoins the formation as a secondary.
   */
  restartNode(node: FormationNode): Promise<void>;
  /**
   * Waits until the formation is settled: a primary and every node not lost with its machine
   * (killPrimary with `machine`, not restarted since) a secondary, each in the state the
   * monitor assigned it, and the primary committing with a synchronous standby. A drill
   * waits for it before each kill.
   */
  waitForHealthy(timeoutMs: number): Promise<void>;
  /** The folder holding every node's data; stop() removes it. */
  readonly baseDir: string;
  /** Stops every process of the formation and removes its directories. */
  stop(): Promise<void>;
}

export interface FormationNode {
  name: string;
  port: number;
  pgdata: string;
}

export interface FormationOptions {
  /** The monitor listens here, the nodes on the next `nodes` ports. */
  basePort: number;
  /**
   * How many data nodes (2 to 5; default 3). Three or more keep a synchronous standby
   * through the loss of any one node; two do not.
   */
  nodes?: number;
  /** How long the nodes may take to reach primary and secondary; default 90 s. */
  startTimeoutMs?: number;
  /**
   * Aborting it (Ctrl-C while the formation comes up) stops what was started so far,
   * removes the folder and rejects.
   */
  signal?: AbortSignal;
  /** Told of each step, and of the folder once it exists, so an operator sees what is under way. */
  log?: (line: string) => void;
}

/**
 * The monitor's failure detection, shortened for drills. By default a primary lost with
 * its machine is declared unhealthy after 20 s and its demotion is awaited for 30 s, so
 * the standby took over about 52 s after the loss; with these it does in about 10 s. A
 * production formation keeps its own settings; the product does not depend on them.
 */
const MONITOR_SETTINGS = `
# fenceline drill: detect a lost primary within seconds
pgautofailover.health_check_period = 1000
pgautofailover.health_check_timeout = 1000
pgautofailover.health_check_max_retries = 1
pgautofailover.health_check_retry_delay = 500
pgautofailover.node_considered_unhealthy_timeout = 3000
pgautofailover.primary_demote_timeout = 5000
`;

const PG_BIN = process.env.FENCELINE_PG_BIN ?? '/usr/lib/postgresql/15/bin';
const PG_AUTOCTL = process.env.FENCELINE_PG_AUTOCTL ?? 'pg_autoctl';

/** Why a formation cannot be started on this machine, or null when it can. */
export async function haUnavailableReason(): Promise<string | null> {
  try {
    await execFileAsync(PG_AUTOCTL, ['--version'], { env: pgEnv() });
  } catch {
    return `${PG_AUTOCTL} was not found: install it with \`apt-get install -y postgresql-15-auto-failover\``;
  }
  if (!existsSync(join(PG_BIN, 'pg_ctl'))) return `no PostgreSQL binaries under ${PG_BIN} (set FENCELINE_PG_BIN)`;
  if (userInfo().uid === 0 && (await postgresUser()) === null) return 'running as root, and there is no `postgres` user to run PostgreSQL as';
  return null;
}

/** The formation's size when none is asked for: a primary and two standbys. */
export const DEFAULT_NODES = 3;
export const MAX_NODES = 5;

/**
 * Starts a monitor and the nodes and waits until the formation is settled: one primary, every
 * other node a secondary, and the primary committing with a synchronous standby.
 */
export async function startFormation(opts: FormationOptions): Promise<Formation> {
  const count = opts.nodes ?? DEFAULT_NODES;
  if (!Number.isInteger(count) || count < 2 || count > MAX_NODES) throw new RangeError(`nodes must be a whole number from 2 to ${MAX_NODES}, got ${count}`);
  const reason = await haUnavailableReason();
  if (reason) throw new Error(reason);
  const owner = userInfo().uid === 0 ? await postgresUser() : null;
  const baseDir = await mkdtemp(join(tmpdir(), 'fenceline-ha-'));
  if (owner) await chown(baseDir, owner.uid, owner.gid);
  const children: ChildProcess[] = [];
  const logs: string[] = [];
  const monitorPort = opts.basePort;
  const monitorData = join(baseDir, 'monitor');
  const nodes: FormationNode[] = Array.from({ length: count }, (_, i) => i + 1).map((n) => ({ name: `node_${n}`, port: opts.basePort + n, pgdata: join(baseDir, `node${n}`) }));
  const run = (args: string[], signal?: AbortSignal) =>
    execFileAsync(PG_AUTOCTL, args, { env: pgEnv(baseDir), cwd: baseDir, ...(owner ?? {}), maxBuffer: 4 * 1024 * 1024, timeout: 120_000, ...(signal ? { signal } : {}) });
  const keepers = new Map<string, ChildProcess>();
  const serve = (args: string[], name?: string) => {
    // Its own process group, so a lost machine can be played by killing the group.
    const child = spawn(PG_AUTOCTL, args, { env: pgEnv(baseDir), cwd: baseDir, ...(owner ?? {}), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    if (name) keepers.set(name, child);
    const keep = (d: Buffer) => {
      logs.push(d.toString());
      if (logs.length > 200) logs.shift();
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    children.push(child);
  };
  const state = async (): Promise<NodeState[]> => {
    const { stdout } = await run(['show', 'state', '--pgdata', monitorData, '--json']);
    return JSON.parse(stdout) as NodeState[];
  };
  // pg_autoctl 2.0's `set formation number-sync-standbys 1`, run with the monitor's data
  // folder, was refused here ("number-sync-standbys value 1 is not valid"), so the
  // monitor's own function is called, as that command would.
  const setNumberSyncStandbys = async (n: number) => {
    const out = await psql(monitorPort, 'autoctl_node', 'pg_auto_failover', `select pgautofailover.set_formation_number_sync_standbys('default', ${n})`, baseDir);
    if (out !== 't') throw new Error(`the monitor did not set number_sync_standbys to ${n} (answered "${out}")`);
  };
  // Nodes whose machine was lost and not brought back; the formation is settled without them.
  const lost = new Set<string>();
  const settled = async (): Promise<boolean> => {
    const s = await state().catch(() => []);
    const at = (name: string) => s.find((x) => x.nodename === name);
    const isIn = (name: string, want: string) => at(name)?.current_group_state === want && at(name)?.assigned_group_state === want;
    const live = nodes.filter((n) => !lost.has(n.name));
    const primaries = live.filter((n) => isIn(n.name, 'primary'));
    if (primaries.length !== 1) return false;
    if (!live.every((n) => n === primaries[0] || isIn(n.name, 'secondary'))) return false;
    return synchronousOn(primaries[0]!.port, baseDir);
  };
  let stopping: Promise<void> | null = null;
  const stop = (): Promise<void> => (stopping ??= stopAll(children, [monitorData, ...nodes.map((n) => n.pgdata)], baseDir));
  // While the formation comes up, an abort ends the step under way (a pg_autoctl command is
  // killed, a wait gives up); what was started so far is then stopped and removed below.
  const startWait = (what: string, probe: () => Promise<boolean>) => until(what, opts.startTimeoutMs ?? 90_000, probe, opts.signal);
  const checkAborted = () => {
    if (opts.signal?.aborted) throw new Error('interrupted');
  };
  try {
    const common = ['--hostname', '127.0.0.1', '--auth', 'trust', '--no-ssl', '--pgctl', join(PG_BIN, 'pg_ctl')];
    checkAborted();
    opts.log?.(`data folder ${baseDir}; starting the monitor on ${monitorPort}`);
    await run(['create', 'monitor', '--pgdata', monitorData, '--pgport', String(monitorPort), ...common], opts.signal);
    checkAborted();
    await appendFile(join(monitorData, 'postgresql.conf'), MONITOR_SETTINGS);
    serve(['run', '--pgdata', monitorData]);
    const monitorUri = `postgres://autoctl_node@127.0.0.1:${monitorPort}/pg_auto_failover`;
    await startWait('the monitor to answer', async () => (await state().catch(() => null)) !== null);
    for (const node of nodes) {
      checkAborted();
      opts.log?.(`starting ${node.name} on ${node.port}`);
      serve(['create', 'postgres', '--pgdata', node.pgdata, '--pgport', String(node.port), '--name', node.name, '--monitor', monitorUri, '--run', ...common], node.name);
      // Each later node clones the primary; it must find the first one primary.
      await startWait(`${node.name} to join`, async () => {
        const s = await state().catch(() => []);
        const me = s.find((x) => x.nodename === node.name);
        return me?.current_group_state === (node === nodes[0] ? 'single' : 'secondary') || me?.current_group_state === 'primary';
      });
    }
    // pg_auto_failover's default of 0 lets a primary whose only synchronous standby is
    // judged unhealthy commit alone (wait_primary); with a standby to spare, 1 keeps every
    // commit waiting for one of them.
    if (count >= 3) {
      checkAborted();
      await setNumberSyncStandbys(1);
    }
    opts.log?.(`waiting for a primary and ${count - 1} synchronous secondaries`);
    await startWait(`a primary and ${count - 1} secondaries, settled and synchronous`, settled);
  } catch (err) {
    await stop().catch(() => undefined);
    throw new Error(`the PostgreSQL formation did not come up: ${(err as Error).message}\n${logs.slice(-20).join('')}`);
  }

  const byName = (name: string) => nodes.find((n) => n.name === name);
  const primary = async () => {
    const s = await state();
    // A primary left without its secondary runs as wait_primary: it takes writes, but
    // commits no longer wait for a standby until the other node is back.
    const writable = (state: string) => state === 'primary' || state === 'wait_primary';
    const p = s.find((x) => writable(x.current_group_state) && writable(x.assigned_group_state));
    return p ? byName(p.nodename) : undefined;
  };
  return {
    url: `postgres://postgres@${nodes.map((n) => `127.0.0.1:${n.port}`).join(',')}/postgres?target_session_attrs=read-write`,
    nodes,
    primary,
    async killPrimary(killOpts = {}) {
      const node = await primary();
      if (!node) throw new Error('the formation has no primary to kill');
      const pid = await postmasterPid(node.pgdata);
      if (!pid) throw new Error(`${node.name} has no postmaster.pid`);
      const keeper = keepers.get(node.name);
      if (killOpts.machine && keeper?.pid) signal(-keeper.pid, 'SIGKILL');
      signal(pid, 'SIGKILL');
      if (killOpts.machine) lost.add(node.name);
      return node;
    },
    async waitForNewPrimary(old, timeoutMs) {
      let found: FormationNode | undefined;
      await until(`a primary other than ${old.name}`, timeoutMs, async () => {
        const p = await primary().catch(() => undefined);
        found = p && p.name !== old.name ? p : undefined;
        return found !== undefined;
      });
      return found!;
    },
    async setSynchronous(sync) {
      const s = await state();
      const secondaries = s.filter((x) => x.current_group_state === 'secondary').map((x) => byName(x.nodename)!);
      if (secondaries.length === 0) throw new Error('the formation has no secondary');
      // The monitor refuses fewer quorum standbys than number_sync_standbys asks for, so it
      // goes to 0 before they leave the quorum and back to 1 once they are in it again.
      if (!sync && count >= 3) await setNumberSyncStandbys(0);
      for (const node of secondaries) await settingWithRetries(() => run(['set', 'node', 'replication-quorum', String(sync), '--pgdata', node.pgdata]));
      if (sync && count >= 3) await setNumberSyncStandbys(1);
    },
    async restartNode(node) {
      const keeper = keepers.get(node.name);
      if (keeper && keeper.exitCode === null && keeper.signalCode === null) return;
      // The lost machine's postmaster may have left a stale pid file; the keeper starts a new one.
      serve(['run', '--pgdata', node.pgdata], node.name);
      lost.delete(node.name);
    },
    async waitForHealthy(timeoutMs) {
      await until('a primary and its secondaries, settled and synchronous', timeoutMs, settled);
    },
    baseDir,
    stop,
  };
}

/**
 * Runs a `pg_autoctl set` again when the monitor fails it. With three nodes, the monitor's
 * update of a standby's setting can deadlock with its own update of the node states the
 * previous change set off ("deadlock detected" while updating pgautofailover.node); the
 * transaction is rolled back, so running it again is safe.
 */
async function settingWithRetries(set: () => Promise<unknown>, attempts = 5): Promise<void> {
  for (let i = 1; ; i++) {
    try {
      await set();
      return;
    } catch (err) {
      if (i >= attempts) throw err;
      await new Promise((resolve) => setTimeout(resolve, 500 * i));
    }
  }
}

/**
 * Stops a formation and removes its folder: each keeper's process group gets SIGTERM (a
 * keeper stops its postmaster with it) and SIGKILL if it is still there after 15 s; a
 * postmaster whose keeper was already gone is killed by its pid file; the folder is removed
 * once no postmaster is left to write in it. Safe to call while the formation comes up.
 */
async function stopAll(children: ChildProcess[], pgdatas: string[], baseDir: string): Promise<void> {
  const live = () => children.filter((c) => c.exitCode === null && c.signalCode === null);
  const exited = (c: ChildProcess) => new Promise((r) => (c.exitCode === null && c.signalCode === null ? c.once('exit', r) : r(undefined)));
  for (const child of live()) if (child.pid) signal(-child.pid, 'SIGTERM');
  await Promise.race([Promise.all(live().map(exited)), sleep(15_000)]);
  for (const child of live()) if (child.pid) signal(-child.pid, 'SIGKILL');
  await Promise.race([Promise.all(live().map(exited)), sleep(5_000)]);
  const pids = await Promise.all(pgdatas.map(async (dir) => ({ dir, pid: await postmasterPid(dir) })));
  const postmasters = pids.filter((p) => p.pid !== null && isPostmasterOf(p.pid, p.dir)).map((p) => p.pid!);
  for (const pid of postmasters) signal(pid, 'SIGKILL');
  // Its backends notice a killed postmaster within moments and exit; the folder goes after them.
  const deadline = Date.now() + 10_000;
  while (postmasters.some(alive) && Date.now() < deadline) await sleep(100);
  await rm(baseDir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
}

/** Whether `pid` is still the postmaster of `pgdata` (a stale pid file may name a pid reused since). */
function isPostmasterOf(pid: number, pgdata: string): boolean {
  if (!alive(pid)) return false;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(pgdata);
  } catch {
    // No /proc to ask: trust the pid file, as pg_ctl does.
    return true;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

interface NodeState {
  nodename: string;
  nodeport: number;
  current_group_state: string;
  assigned_group_state: string;
}

/**
 * pg_autoctl keeps its state and configuration under XDG folders of HOME; they go in the
 * formation's own directory, which the user running PostgreSQL owns (root's HOME is not
 * writable by the `postgres` user).
 */
function pgEnv(home?: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${PG_BIN}:${process.env.PATH ?? ''}`, PG_CONFIG: join(PG_BIN, 'pg_config') };
  if (home) Object.assign(env, { HOME: home, XDG_CONFIG_HOME: join(home, 'config'), XDG_DATA_HOME: join(home, 'share'), XDG_RUNTIME_DIR: join(home, 'run') });
  return env;
}

async function postgresUser(): Promise<{ uid: number; gid: number } | null> {
  try {
    const [uid, gid] = await Promise.all([execFileAsync('id', ['-u', 'postgres']), execFileAsync('id', ['-g', 'postgres'])]);
    return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  } catch {
    return null;
  }
}

/**
 * Whether the server on `port` commits with a synchronous standby: it names one in
 * `synchronous_standby_names` and one replicates as `sync` or `quorum`. The monitor may
 * report the states settled a moment before the primary's settings follow.
 */
async function synchronousOn(port: number, home: string): Promise<boolean> {
  const sql = "select current_setting('synchronous_standby_names') <> '' and exists (select 1 from pg_stat_replication where sync_state in ('sync', 'quorum'))";
  return (await psql(port, 'postgres', 'postgres', sql, home).catch(() => '')) === 't';
}

/** One statement through psql; its single value, as text. */
async function psql(port: number, user: string, db: string, sql: string, home: string): Promise<string> {
  const { stdout } = await execFileAsync(join(PG_BIN, 'psql'), ['-h', '127.0.0.1', '-p', String(port), '-U', user, '-d', db, '-v', 'ON_ERROR_STOP=1', '-Atc', sql], {
    env: pgEnv(home),
    timeout: 10_000,
  });
  return stdout.trim();
}

async function postmasterPid(pgdata: string): Promise<number | null> {
  const text = await readFile(join(pgdata, 'postmaster.pid'), 'utf8').catch(() => '');
  const pid = Number(text.split('\n')[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : null;
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // Already gone.
  }
}

async function until(what: string, timeoutMs: number, probe: () => Promise<boolean>, signal?: AbortSignal): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (signal?.aborted) throw new Error('interrupted');
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
