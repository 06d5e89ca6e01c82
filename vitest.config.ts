import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// One project per layer, so `vitest run --project db` runs just the store tests.
// The projects that need PostgreSQL share one server for the run (see the setup file).
const withDatabase = ['test/support/database-server.ts'];

export default defineConfig({
  test: {
    projects: [
      { test: { name: 'core', include: ['packages/core/test/**/*.test.ts'], testTimeout: 60_000 } },
      { test: { name: 'db', include: ['packages/db/test/**/*.test.ts'], globalSetup: withDatabase, testTimeout: 60_000, hookTimeout: 120_000, fileParallelism: false } },
      { test: { name: 'sim', include: ['packages/sim/test/**/*.test.ts'], testTimeout: 120_000 } },
      { test: { name: 'worker', include: ['apps/worker/test/**/*.test.ts'], testTimeout: 60_000 } },
      { test: { name: 'effects', include: ['packages/effects/test/**/*.test.ts'], globalSetup: withDatabase, testTimeout: 60_000, hookTimeout: 120_000 } },
      { test: { name: 'telemetry', include: ['packages/telemetry/test/**/*.test.ts'], testTimeout: 60_000 } },
      {
        resolve: { alias: { '@': fileURLToPath(new URL('./apps/web/src', import.meta.url)) } },
        test: {
          name: 'web',
          include: ['apps/web/test/**/*.test.ts'],
          // The console runs inside these test workers: what they write is kept (log-tee.ts),
          // and the log sweep greps it for the secrets the tests registered, as for the cluster.
          setupFiles: ['apps/web/test/support/log-tee.ts'],
          globalSetup: ['test/support/log-sweep.ts'],
          testTimeout: 60_000,
        },
      },
      {
        // The CLI's HTTP tests serve the console's API route files, which import through '@'.
        resolve: { alias: { '@': fileURLToPath(new URL('./apps/web/src', import.meta.url)) } },
        test: {
          name: 'cluster',
          include: ['apps/scheduler/test/**/*.test.ts', 'test/**/*.test.ts'],
          // The log sweep's teardown runs after every cluster test: it greps all their processes' logs.
          globalSetup: [...withDatabase, 'test/support/log-sweep.ts'],
          testTimeout: 180_000,
          hookTimeout: 180_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
