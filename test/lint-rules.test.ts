import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../tools/start/cluster';

// The repository's boundaries are lint rules (eslint.config.js). A rule that stopped
// matching, say after a config edit, would pass every file silently; these cases lint
// small sources, placed by path where the rule applies, and expect each one reported.
const eslint = new ESLint({ cwd: REPO_ROOT });

/** The rule ids ESLint reports for `code` as if it were the file at `path`. */
async function reported(path: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: `${REPO_ROOT}/${path}` });
  if (result === undefined) throw new Error(`ESLint returned no result for ${path}`);
  return result.messages.map((m) => `${m.line}:${m.ruleId ?? m.message}`);
}

describe('lint rules', () => {
  it('passes a file that keeps the rules, so the cases below fail for the reason they name', async () => {
    const clean = "import { LIMITS } from '@fenceline/core';\nexport const max = LIMITS.maxTasksPerDag;\n";
    expect(await reported('packages/db/test/fixture.ts', clean)).toEqual([]);
    expect(await reported('packages/core/src/fixture.ts', 'export const at = (ms: number) => new Date(ms);\n')).toEqual([]);
  });

  it("refuses an import of another package's src/, by relative path or by package name", async () => {
    const fixture = [
      "import { storeContract } from '../../core/src/testing/store-contract';",
      "import { schedulerClient } from '../apps/worker/src/client';",
      "import { readSchedulerConfig } from '@fenceline/scheduler/src/config';",
      'export const used = [storeContract, schedulerClient, readSchedulerConfig];',
    ];
    expect(await reported('packages/db/test/fixture.ts', fixture[0] + '\n' + fixture[3])).toEqual(['1:no-restricted-imports']);
    expect(await reported('test/fixture.test.ts', fixture.slice(1).join('\n'))).toEqual(['1:no-restricted-imports', '2:no-restricted-imports']);
  });

  it('keeps IO, other packages and UI out of the scheduling core', async () => {
    const fixture = [
      "import { readFileSync } from 'node:fs';",
      "import { openStore } from '@fenceline/db';",
      "import { createElement } from 'react';",
      'export const used = [readFileSync, openStore, createElement];',
    ].join('\n');
    expect(await reported('packages/core/src/fixture.ts', fixture)).toEqual(['1:no-restricted-imports', '2:no-restricted-imports', '3:no-restricted-imports']);
  });

  it('keeps OpenTelemetry out of the scheduling core, which traces through its port', async () => {
    const fixture = ["import { trace } from '@opentelemetry/api';", "import { otelTracing } from '@fenceline/telemetry';", 'export const used = [trace, otelTracing];'].join('\n');
    expect(await reported('packages/core/src/fixture.ts', fixture)).toEqual(['1:no-restricted-imports', '2:no-restricted-imports']);
    expect(await reported('packages/telemetry/src/fixture.ts', fixture)).toEqual([]);
  });

  it('lets only packages/db import the database drivers', async () => {
    const fixture = "import postgres from 'postgres';\nimport { sql } from 'drizzle-orm';\nexport const used = [postgres, sql];\n";
    expect(await reported('apps/scheduler/src/fixture.ts', fixture)).toEqual(['1:no-restricted-imports', '2:no-restricted-imports']);
    expect(await reported('packages/db/src/fixture.ts', fixture)).toEqual([]);
  });

  it("lets the effects library and the user's code reach the user's database, and keeps the library standing alone", async () => {
    const fixture = "import postgres from 'postgres';\nimport pg from 'pg';\nexport const used = [postgres, pg];\n";
    expect(await reported('packages/effects/src/fixture.ts', fixture)).toEqual([]);
    expect(await reported('examples/fixture.ts', fixture)).toEqual([]);
    expect(await reported('packages/effects/src/fixture.ts', "import { LIMITS } from '@fenceline/core';\nexport const used = LIMITS;\n")).toEqual(['1:no-restricted-imports']);
  });

  it('keeps the worker off the store and the console off the scheduler and worker', async () => {
    expect(await reported('apps/worker/src/fixture.ts', "import { openStore } from '@fenceline/db';\nexport const used = openStore;\n")).toEqual(['1:no-restricted-imports']);
    const wire = "import type { WorkerRouter } from '@fenceline/scheduler/wire';\nexport type Used = WorkerRouter;\n";
    expect(await reported('apps/worker/src/fixture.ts', wire)).toEqual([]);
    expect(await reported('apps/worker/src/fixture.ts', wire.replace('import type', 'import'))).toEqual(['1:no-restricted-syntax']);
    const scheduler =
      "import { readSchedulerConfig } from '@fenceline/scheduler';\nimport type { WorkerRouter } from '@fenceline/scheduler';\nexport const used = [readSchedulerConfig];\nexport type Used = WorkerRouter;\n";
    expect(await reported('apps/worker/src/fixture.ts', scheduler)).toEqual(['1:no-restricted-imports', '2:no-restricted-imports']);
    const consoleFixture = "import { workerRouter } from '@fenceline/scheduler';\nimport { Worker } from '@fenceline/worker';\nexport const used = [workerRouter, Worker];\n";
    expect(await reported('apps/web/src/fixture.ts', consoleFixture)).toEqual(['1:no-restricted-imports', '2:no-restricted-imports']);
  });

  it('keeps the simulator off the SQL store and the database drivers', async () => {
    const fixture = [
      "import { openStore } from '@fenceline/db';",
      "import { seedDags } from '@fenceline/db/testing';",
      "import postgres from 'postgres';",
      "import { sqlStore } from '../../db/store/sql-store';",
      'export const used = [openStore, seedDags, postgres, sqlStore];',
    ].join('\n');
    const four = ['1:no-restricted-imports', '2:no-restricted-imports', '3:no-restricted-imports', '4:no-restricted-imports'];
    expect(await reported('packages/sim/src/fixture.ts', fixture)).toEqual(four);
    expect(await reported('packages/sim/test/fixture.test.ts', fixture)).toEqual(four);
    expect(
      await reported(
        'packages/sim/src/fixture.ts',
        "import { LIMITS } from '@fenceline/core';\nimport { effect } from '@fenceline/effects';\nexport const used = [LIMITS, effect];\n",
      ),
    ).toEqual([]);
  });

  it('keeps every app out of the libraries under packages/: db, sim and telemetry', async () => {
    const fixture = [
      "import { workerRouter } from '@fenceline/scheduler';",
      "import { Worker } from '@fenceline/worker';",
      "import { readClusterFile } from '@fenceline/cli/cluster-file';",
      "import { page } from '../../../apps/web/app/page';",
      'export const used = [workerRouter, Worker, readClusterFile, page];',
    ].join('\n');
    const four = ['1:no-restricted-imports', '2:no-restricted-imports', '3:no-restricted-imports', '4:no-restricted-imports'];
    for (const path of ['packages/db/src/fixture.ts', 'packages/db/test/fixture.test.ts', 'packages/sim/src/fixture.ts', 'packages/telemetry/src/fixture.ts']) {
      expect(await reported(path, fixture), path).toEqual(four);
    }
  });

  it("keeps the database's test support out of the console", async () => {
    expect(await reported('apps/web/src/fixture.ts', "import { seedDags } from '@fenceline/db/testing';\nexport const used = seedDags;\n")).toEqual(['1:no-restricted-imports']);
    expect(await reported('e2e/fixture.test.ts', "import { seedDags } from '@fenceline/db/testing';\nexport const used = seedDags;\n")).toEqual([]);
  });

  it('keeps ambient time, randomness and timers out of the core, but not out of its test helpers', async () => {
    const fixture = [
      'export const now = Date.now();',
      'export const today = new Date();',
      'export const r = Math.random();',
      'export const t = performance.now();',
      'setTimeout(() => {}, 1);',
      'setInterval(() => {}, 1);',
    ].join('\n');
    expect(await reported('packages/core/src/fixture.ts', fixture)).toEqual([
      '1:no-restricted-properties',
      '2:no-restricted-syntax',
      '3:no-restricted-properties',
      '4:no-restricted-properties',
      '5:no-restricted-globals',
      '6:no-restricted-globals',
    ]);
    expect(await reported('packages/core/src/testing/fixture.ts', fixture)).toEqual([]);
  });
});
