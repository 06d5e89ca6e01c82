import { startFormation } from './formation';
import { runFailoverDrill } from './drill';

const USAGE = `usage: npm run ha -- <command> [--port N]

  up      start a pg_auto_failover monitor and two PostgreSQL nodes (primary and
          synchronous secondary) on ports N..N+2 (default 55430), print the multi-host
          URL to use as DATABASE_URL, and stop and remove everything on Ctrl-C
  drill   start a formation and a cluster, run 3,000 jobs, SIGKILL the primary's machine
          (its keeper and postmaster) midway, audit the store and print the figures;
          exits 1 when the audit finds a violation

Needs Debian's postgresql-15-auto-failover (apt-get install -y postgresql-15-auto-failover).`;

async function main(): Promise<void> {
  const [command, ...rest] = process.argv.slice(2);
  const portAt = rest.indexOf('--port');
  const basePort = portAt >= 0 ? Number(rest[portAt + 1]) : 55_430;
  if (!Number.isInteger(basePort) || basePort < 1024 || basePort > 65_000) throw new Error('--port must be an integer from 1024 to 65000');
  if (command === 'up') {
    const formation = await startFormation({ basePort });
    process.stdout.write(
      `formation up: ${formation.nodes.map((n) => `${n.name} on ${n.port}`).join(', ')}\nDATABASE_URL=${formation.url}\nCtrl-C stops it and removes its data.\n`,
    );
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    await formation.stop();
    return;
  }
  if (command === 'drill') {
    const report = await runFailoverDrill({ basePort, dags: 6, tasksPerDag: 500, jobMs: 20, killAtFraction: 0.4, log: (l) => process.stdout.write(`${l}\n`) });
    process.stdout.write(`${JSON.stringify({ ...report, audit: undefined }, null, 2)}\n`);
    if (report.violations.length > 0) process.exitCode = 1;
    return;
  }
  process.stdout.write(`${USAGE}\n`);
  if (command !== undefined && command !== 'help' && command !== '--help') process.exitCode = 2;
}

main().catch((err: unknown) => {
  process.stderr.write(`ha: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
