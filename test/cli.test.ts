import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDatabase, dropDatabase, openStore, type SqlStore } from '@fenceline/db';
import { REPO_ROOT } from '../tools/start/cluster';
import { ADMIN_URL } from './support/cluster-fixture';
import { parseDagId } from '@fenceline/core';

/**
 * `fenceline apply` as an operator runs it: the real CLI process, in a folder of spec
 * files, against a database of its own. Files are named relative to that folder, so the
 * messages are checked exactly as a person would see them.
 */

const TSX_LOADER = pathToFileURL(join(REPO_ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
const CLI = join(REPO_ROOT, 'apps/cli/src/cli.ts');

let databaseName: string;
let databaseUrl: string;
let store: SqlStore;
let folder: string;

beforeAll(async () => {
  databaseName = `fenceline_cli_${randomBytes(4).toString('hex')}`;
  databaseUrl = await createDatabase(ADMIN_URL, databaseName);
  store = await openStore({ databaseUrl, applicationName: 'fenceline-test', max: 2 });
});
afterAll(async () => {
  await store?.close();
  if (databaseName) await dropDatabase(ADMIN_URL, databaseName).catch(() => undefined);
});
beforeEach(async () => {
  if (folder) await rm(folder, { recursive: true, force: true });
  folder = await mkdtemp(join(tmpdir(), 'fenceline-cli-'));
});

async function cli(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return cliIn({ cwd: folder, initCwd: folder }, ...args);
}

/**
 * `npm run fenceline` starts the CLI in the repository root and records the folder the
 * operator ran it from in INIT_CWD; `cwd` and `initCwd` play those two parts.
 */
async function cliIn(where: { cwd: string; initCwd: string }, ...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', TSX_LOADER, CLI, ...args], {
    cwd: where.cwd,
    env: { ...process.env, DATABASE_URL: databaseUrl, INIT_CWD: where.initCwd },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  return { code, stdout, stderr };
}

async function file(name: string, text: string): Promise<void> {
  await writeFile(join(folder, name), text);
}

function spec(id: string): string {
  return JSON.stringify({ id, tasks: [{ id: 'only', type: 'noop' }] }, null, 2);
}

async function storedIds(): Promise<string[]> {
  return (await store.listDags({ limit: 100 })).rows.map((d) => d.id).sort();
}

/** How many lines of `text` contain `needle`. */
function linesWith(text: string, needle: string): number {
  return text.split('\n').filter((line) => line.includes(needle)).length;
}

describe('fenceline apply', () => {
  it('reads a relative path from the folder npm was run in, not the repository root', async () => {
    await file('here.json', spec('cli-from-caller'));
    const res = await cliIn({ cwd: REPO_ROOT, initCwd: folder }, 'apply', 'here.json');
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    expect(await storedIds()).toContain('cli-from-caller');
  });

  it('stores nothing when the second of two files is invalid, and names that file', async () => {
    await file('a.json', spec('cli-first'));
    await file('b.json', JSON.stringify({ id: 'cli-second', tasks: [] }));
    const before = await storedIds();

    const res = await cli('apply', 'a.json', 'b.json');

    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^b\.json: INVALID_DAG: DAG "cli-second" has 1 problem$/m);
    expect(res.stderr).toContain('nothing stored: 1 of 2 files have problems');
    expect(res.stderr).not.toMatch(/^a\.json/m);
    expect(res.stdout).toBe('');
    expect(await storedIds()).toEqual(before);

    // a.json on its own is a good spec: it was held back only because b.json was bad.
    const alone = await cli('apply', 'a.json');
    expect(alone.code).toBe(0);
    expect(alone.stdout.trim()).toBe('a.json: cli-first version 1 stored');
    expect(await storedIds()).toContain('cli-first');
  });

  it('stores every file when all are good, and reports an unchanged one as such', async () => {
    await file('one.json', spec('cli-one'));
    await file('two.yaml', 'id: cli-two\ntasks:\n  - id: only\n    type: noop\n');
    const res = await cli('apply', 'one.json', 'two.yaml');
    expect(res.code).toBe(0);
    expect(res.stdout.trim().split('\n')).toEqual(['one.json: cli-one version 1 stored', 'two.yaml: cli-two version 1 stored']);
    const again = await cli('apply', 'one.json', 'two.yaml');
    expect(again.code).toBe(0);
    expect(again.stdout).toContain('one.json: cli-one unchanged (version 1)');
    // Each stored version is in the audit log once, as the CLI's; the unchanged apply added none.
    const applied = await store.listAudit({ action: 'dag.applied' });
    expect(applied.filter((e) => e.dagId === 'cli-one' || e.dagId === 'cli-two').map((e) => [e.dagId, e.actorKind, e.source, e.details])).toEqual([
      ['cli-two', 'cli', 'cli', { version: 1 }],
      ['cli-one', 'cli', 'cli', { version: 1 }],
    ]);
  });

  it('names a missing file and stores nothing', async () => {
    await file('a.json', spec('cli-missing-neighbour'));
    const res = await cli('apply', 'a.json', 'c.yaml');
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^c\.yaml: no such file$/m);
    expect(res.stderr).not.toContain('ENOENT');
    expect(await storedIds()).not.toContain('cli-missing-neighbour');
  });

  it('names a file of broken JSON with the line to look at', async () => {
    await file('a.json', spec('cli-json-neighbour'));
    await file('b.json', '{\n  "id": "cli-broken",\n  "tasks": \n');
    const res = await cli('apply', 'a.json', 'b.json');
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^b\.json: not valid JSON: .+ \(line 4, column 1\)$/m);
    expect(res.stderr).not.toContain('Unexpected end of JSON input');
    expect(await storedIds()).not.toContain('cli-json-neighbour');
  });

  it('names a file of broken YAML with the line to look at', async () => {
    await file('a.json', spec('cli-yaml-neighbour'));
    await file('c.yaml', 'id: cli-broken-yaml\ntasks:\n  - id: only\n   type: noop\n');
    const res = await cli('apply', 'a.json', 'c.yaml');
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^c\.yaml: not valid YAML: .+ \(line 4, column \d+\)$/m);
    expect(await storedIds()).not.toContain('cli-yaml-neighbour');
  });

  it('prints each validation problem once, and every bad file in one pass', async () => {
    await file(
      'a.json',
      JSON.stringify({
        id: 'cli-twice',
        tasks: [
          { id: 'x', type: 'noop', dependsOn: ['ghost'] },
          { id: 'x', type: 'noop' },
        ],
      }),
    );
    await file('b.json', '[1, 2,]');
    const res = await cli('apply', 'a.json', 'b.json');
    expect(res.code).toBe(1);
    const issueLines = res.stderr.split('\n').filter((line) => line.startsWith('  - '));
    expect(issueLines.length).toBeGreaterThanOrEqual(2);
    for (const line of issueLines) expect(linesWith(res.stderr, line.slice(4))).toBe(1);
    expect(res.stderr).toMatch(new RegExp(`^a\\.json: INVALID_DAG: DAG "cli-twice" has ${issueLines.length} problems$`, 'm'));
    expect(res.stderr).toMatch(/^b\.json: not valid JSON: a trailing comma before '\]' is not allowed in JSON \(line 1, column 7\)$/m);
    expect(res.stderr).toContain('nothing stored: 2 of 2 files have problems');
  });

  it('refuses two files that define the same DAG', async () => {
    await file('a.json', spec('cli-dup'));
    await file('b.json', spec('cli-dup'));
    const res = await cli('apply', 'a.json', 'b.json');
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^b\.json: DAG "cli-dup" is also defined in a\.json/m);
    expect(await storedIds()).not.toContain('cli-dup');
  });
});

describe('fenceline ids', () => {
  it('refuses a run or DAG id that cannot name one, naming the argument, and reads nothing under it', async () => {
    await store.initCluster(4);
    await store.putDag({ id: 'cli-ids', tasks: [{ id: 'only', type: 'noop' }] }, 4);
    const run = await store.triggerRun(parseDagId('cli-ids'));
    const outOfRange = 'INVALID_INPUT: RUN_ID: must be a numeric id from 1 to 9223372036854775807';
    expect(await cli('jobs', 'abc')).toMatchObject({ code: 1, stderr: 'INVALID_INPUT: RUN_ID: must be a numeric id\n' });
    // '0' + id is the same bigint to PostgreSQL; it must not print the run under a second name.
    expect(await cli('jobs', `0${run.id}`)).toMatchObject({ code: 1, stdout: '', stderr: `${outOfRange}\n` });
    expect(await cli('jobs', '1'.repeat(20))).toMatchObject({ code: 1, stderr: `${outOfRange}\n` });
    expect(await cli('jobs', '9223372036854775807')).toMatchObject({ code: 1, stderr: 'NOT_FOUND: run 9223372036854775807 does not exist\n' });
    expect((await cli('jobs', run.id)).stdout).toContain(`run ${run.id} of cli-ids@1: queued`);
    const badDag = await cli('trigger', 'cli/ids');
    expect(badDag).toMatchObject({ code: 1, stderr: 'INVALID_INPUT: DAG: may contain only letters, digits, "_", "." and "-", and must start with a letter or digit\n' });
    expect(await store.listRuns({ dagId: parseDagId('cli-ids') })).toHaveLength(1);
  });
});

describe('fenceline runs', () => {
  it('pages runs by the cursor it prints, filtered, and refuses a bad filter naming it', async () => {
    await store.initCluster(4);
    await store.putDag({ id: 'cli-runs', tasks: [{ id: 'only', type: 'noop' }] }, 4);
    const runs = [];
    for (let i = 0; i < 3; i++) runs.push(await store.triggerRun(parseDagId('cli-runs')));
    const first = await cli('runs', 'cli-runs', '--state', 'queued', '--trigger', 'manual', '--from', '2000-01-01T00:00:00Z', '--limit', '2');
    expect(first.code).toBe(0);
    // console.table quotes each id: '12'.
    const shown = (out: string, id: string) => out.includes(`'${id}'`);
    expect(shown(first.stdout, runs[2]!.id) && shown(first.stdout, runs[1]!.id) && !shown(first.stdout, runs[0]!.id)).toBe(true);
    const cursor = /next page: --cursor (\S+)/.exec(first.stdout)?.[1];
    expect(cursor).toBeDefined();
    const second = await cli('runs', 'cli-runs', '--limit', '2', '--cursor', cursor!);
    expect(second.code).toBe(0);
    expect(shown(second.stdout, runs[0]!.id) && !shown(second.stdout, runs[1]!.id)).toBe(true);
    expect(second.stdout).not.toContain('next page');
    const oldest = await cli('runs', 'cli-runs', '--oldest', '--limit', '1');
    expect(shown(oldest.stdout, runs[0]!.id) && !shown(oldest.stdout, runs[1]!.id)).toBe(true);
    expect(await cli('runs', '--state', 'done')).toMatchObject({ code: 1, stderr: 'INVALID_INPUT: state: must be one of queued, running, succeeded, failed, cancelled\n' });
    expect(await cli('runs', '--from', 'yesterday')).toMatchObject({ code: 1, stderr: 'INVALID_INPUT: --from: must be an instant such as 2026-01-31T09:00:00Z\n' });
    expect(await cli('runs', '--cursor', 'nope')).toMatchObject({ code: 1, stderr: 'INVALID_INPUT: cursor: is not a cursor this list gave out\n' });
  });
});

describe('fenceline apply: text the store cannot keep', () => {
  it('refuses a spec with a NUL, a lone surrogate or deep nesting, naming where, and prints no statement', async () => {
    await file('nul.yaml', 'id: cli-nul\nname: "bad\\0name"\ntasks:\n  - id: one\n    type: noop\n');
    await file('lone.json', JSON.stringify({ id: 'cli-lone', tasks: [{ id: 'one', type: 'my-handler', config: { note: 'half \ud800' } }] }));
    await file(
      'deep.json',
      JSON.stringify({ id: 'cli-deep', tasks: [{ id: 'one', type: 'my-handler', config: { d: '__deep__' } }] }).replace('"__deep__"', '['.repeat(5_000) + ']'.repeat(5_000)),
    );
    const res = await cli('apply', 'nul.yaml', 'lone.json', 'deep.json');
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^ {2}- name: Must not contain a NUL character/m);
    expect(res.stderr).toMatch(/^ {2}- tasks\.0\.config\.note: Must not contain a lone UTF-16 surrogate/m);
    expect(res.stderr).toMatch(/^ {2}- tasks\.0\.config\.d(\.0)+: Must not be nested more than 64 levels deep/m);
    expect(res.stderr).toContain('nothing stored: 3 of 3 files have problems');
    expect(res.stderr).not.toMatch(/Failed query|params:|insert into|\n\s+at /);
    expect(await storedIds()).not.toEqual(expect.arrayContaining(['cli-nul']));
  });
});
