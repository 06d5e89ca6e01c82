// Loaded into a scheduler process (NODE_OPTIONS=--import=...) by the driver-faults test.
// On SIGUSR2 it makes the database driver (postgres.js, the copy the scheduler uses) fail
// in the ways seen in failover drills, on a pool of its own in the same process, so the
// scheduler's process-wide handlers meet the driver's own errors:
// - an un-awaited query whose pool is ended: an unhandled CONNECTION_DESTROYED rejection;
// - an un-awaited query whose backend is terminated: an unhandled CONNECTION_CLOSED one;
// - a transaction whose backend is terminated: the driver's deferred ROLLBACK write finds
//   its socket gone and throws a TypeError from a timer, outside any call.
import postgres from '../../node_modules/postgres/src/index.js';

const url = process.env.DATABASE_URL;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function faults() {
  const admin = postgres(url, { max: 1 });
  try {
    const destroyed = postgres(url, { max: 1 });
    destroyed`select pg_sleep(5)`.execute();
    await sleep(300);
    await destroyed.end({ timeout: 0 });

    const closed = postgres(url, { max: 1, connection: { application_name: 'driver-fault-closed' } });
    closed`select pg_sleep(5)`.execute();
    await sleep(300);
    await admin`select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'driver-fault-closed'`;

    const tx = postgres(url, { max: 1 });
    await tx
      .begin(async (t) => {
        const [row] = await t`select pg_backend_pid() as pid`;
        await admin`select pg_terminate_backend(${row.pid})`;
        await sleep(300);
        await t`select 1`;
      })
      .catch(() => undefined);
    await sleep(500);
    process.stderr.write('driver faults done\n');
  } finally {
    await admin.end({ timeout: 1 });
  }
}

process.on('SIGUSR2', () => void faults());
