import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, chown, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/**
 * A highly available PostgreSQL on one machine, for the failover tests, the chaos soak's
 * `--ha` fault and the store-failover bench: a pg_auto_failover monitor and two nodes (a
 * primary and a synchronous secondary), each on its own port and data directory, brought
 * up and torn down by this module. It needs Debian's `postgresql-15-auto-failover`
 * (`pg_autoctl`); `haUnavailableReason()` says why it cannot run when it cannot.
 */
export interface Formation {
  /** The multi-host URL the product connects with: both nodes, `target_session_attrs=read-write`. */
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
  /** Makes the secondary's replication asynchronous (it stops counting for the quorum) or synchronous again. */
  setSynchronous(sync: boolean): Promise<void>;
  /** Stops every process of the formation and removes its directories. */
  stop(): Promise<void>;
}

export interface FormationNode {
  name: string;
  port: number;
  pgdata: string;
}

export interface FormationOptions {
  /** The monitor listens here, the nodes on the next two ports. */
  basePort: number;
  /** How long the nodes may take to reach primary and secondary; default 90 s. */
  startTimeoutMs?: number;
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

/** Starts a monitor and two nodes and waits until one is primary and the other a synchronous secondary. */
export async function startFormation(opts: FormationOptions): Promise<Formation> {
  const reason = await haUnavailableReason();
  if (reason) throw new Error(reason);
  const owner = userInfo().uid === 0 ? await postgresUser() : null;
  const baseDir = await mkdtemp(join(tmpdir(), 'fenceline-ha-'));
  if (owner) await chown(baseDir, owner.uid, owner.gid);
  const children: ChildProcess[] = [];
  const logs: string[] = [];
  const monitorPort = opts.basePort;
  const monitorData = join(baseDir, 'monitor');
  const nodes: FormationNode[] = [1, 2].map((n) => ({ name: `node_${n}`, port: opts.basePort + n, pgdata: join(baseDir, `node${n}`) }));
  const run = (args: string[]) => execFileAsync(PG_AUTOCTL, args, { env: pgEnv(baseDir), cwd: baseDir, ...(owner ?? {}), maxBuffer: 4 * 1024 * 1024 });
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
  const stop = async (): Promise<void> => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
    await Promise.all(children.map((c) => (c.exitCode === null && c.signalCode === null ? new Promise((r) => c.once('exit', r)) : undefined)));
    // A postmaster whose keeper was already gone is stopped by its pid file.
    for (const dir of [monitorData, ...nodes.map((n) => n.pgdata)]) {
      const pid = await postmasterPid(dir);
      if (pid) signal(pid, 'SIGKILL');
    }
    await rm(baseDir, { recursive: true, force: true });
  };
  try {
    const common = ['--hostname', '127.0.0.1', '--auth', 'trust', '--no-ssl', '--pgctl', join(PG_BIN, 'pg_ctl')];
    await run(['create', 'monitor', '--pgdata', monitorData, '--pgport', String(monitorPort), ...common]);
    await appendFile(join(monitorData, 'postgresql.conf'), MONITOR_SETTINGS);
    serve(['run', '--pgdata', monitorData]);
    const monitorUri = `postgres://autoctl_node@127.0.0.1:${monitorPort}/pg_auto_failover`;
    await until('the monitor to answer', opts.startTimeoutMs ?? 90_000, async () => (await state().catch(() => null)) !== null);
    for (const node of nodes) {
      serve(['create', 'postgres', '--pgdata', node.pgdata, '--pgport', String(node.port), '--name', node.name, '--monitor', monitorUri, '--run', ...common], node.name);
      // The second node clones the first; it must find the first one primary.
      await until(`${node.name} to join`, opts.startTimeoutMs ?? 90_000, async () => {
        const s = await state().catch(() => []);
        const me = s.find((x) => x.nodename === node.name);
        return me?.current_group_state === (node === nodes[0] ? 'single' : 'secondary') || me?.current_group_state === 'primary';
      });
    }
    await until('a primary and a secondary', opts.startTimeoutMs ?? 90_000, async () => {
      const s = await state();
      return s.some((x) => x.current_group_state === 'primary') && s.some((x) => x.current_group_state === 'secondary');
    });
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
      const secondary = s.find((x) => x.current_group_state === 'secondary');
      if (!secondary) throw new Error('the formation has no secondary');
      const node = byName(secondary.nodename)!;
      await run(['set', 'node', 'replication-quorum', String(sync), '--pgdata', node.pgdata]);
    },
    stop,
  };
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

async function until(what: string, timeoutMs: number, probe: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
