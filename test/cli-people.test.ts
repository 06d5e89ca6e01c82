import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseUserName } from '@fenceline/core';
import { createDatabase, dropDatabase, openStore, type SqlStore } from '@fenceline/db';
import { secretHash, verifyPassword } from '@fenceline/db/people';
import { REPO_ROOT } from '../tools/start/cluster';
import { ADMIN_URL } from './support/cluster-fixture';

/**
 * `fenceline user`, `sessions` and `api-token` as an operator runs them: the real CLI
 * process against a database of its own, checked through the store it wrote.
 */

const TSX_LOADER = pathToFileURL(join(REPO_ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
const CLI = join(REPO_ROOT, 'apps/cli/src/cli.ts');

let databaseName: string;
let databaseUrl: string;
let store: SqlStore;

beforeAll(async () => {
  databaseName = `fenceline_cli_people_${randomBytes(4).toString('hex')}`;
  databaseUrl = await createDatabase(ADMIN_URL, databaseName);
  store = await openStore({ databaseUrl, applicationName: 'fenceline-test', max: 2 });
});
afterAll(async () => {
  await store?.close();
  if (databaseName) await dropDatabase(ADMIN_URL, databaseName).catch(() => undefined);
});

async function cli(opts: { stdin?: string }, ...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', TSX_LOADER, CLI, ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(opts.stdin ?? '');
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', resolve);
  });
  return { code, stdout, stderr };
}

describe('fenceline user, sessions and api-token', () => {
  it('creates a user with a password from stdin, stored only as its scrypt hash, and audits it as the CLI', async () => {
    const made = await cli({ stdin: 'a long enough password\n' }, 'user', 'create', '--name', 'carol', '--role', 'operator', '--password-stdin');
    expect(made.stderr).toBe('');
    expect(made.code).toBe(0);
    expect(made.stdout).toBe('user carol created (operator)\n');
    const stored = await store.userCredentials({ name: parseUserName('carol') });
    expect(stored?.passwordHash).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(await verifyPassword('a long enough password', stored!.passwordHash)).toBe(true);
    const [entry] = await store.listAudit({ action: 'user.created' });
    expect(entry).toMatchObject({ actorKind: 'cli', source: 'cli', target: 'carol', details: { role: 'operator' } });
  });

  it('generates and prints a password once when none is given', async () => {
    const made = await cli({}, 'user', 'create', '--name', 'dave', '--role', 'viewer');
    expect(made.code).toBe(0);
    const password = /password \(shown once\): (\S+)/.exec(made.stdout)?.[1];
    expect(password).toMatch(/^[A-Za-z0-9_-]{24}$/);
    expect(await verifyPassword(password!, (await store.userCredentials({ name: parseUserName('dave') }))!.passwordHash)).toBe(true);
  });

  it('refuses bad input naming the field, and writes nothing', async () => {
    const before = (await store.listUsers()).length;
    const badName = await cli({}, 'user', 'create', '--name', 'Bad Name', '--role', 'viewer');
    expect(badName.code).toBe(1);
    expect(badName.stderr).toMatch(/^INVALID_INPUT: --name: may contain only lower-case letters/);
    const badRole = await cli({}, 'user', 'create', '--name', 'erin', '--role', 'root');
    expect(badRole.stderr).toMatch(/^INVALID_INPUT: --role: must be one of viewer, operator, admin/);
    const shortPassword = await cli({ stdin: 'short' }, 'user', 'create', '--name', 'erin', '--role', 'viewer', '--password-stdin');
    expect(shortPassword.code).toBe(2);
    expect(shortPassword.stderr).toMatch(/^password: must be at least 12 characters/);
    const taken = await cli({}, 'user', 'create', '--name', 'carol', '--role', 'viewer');
    expect(taken.stderr).toMatch(/^INVALID_INPUT: name: a user named "carol" exists already/);
    expect((await store.listUsers()).length).toBe(before);
  });

  it('revokes a user’s sessions, changes roles, and makes, lists and revokes API tokens', async () => {
    const carol = (await store.userCredentials({ name: parseUserName('carol') }))!;
    await store.createSession({ secretHash: 'cli-test-session', userId: carol.id, ttlMs: 60_000 });
    const revoked = await cli({}, 'sessions', 'revoke', '--name', 'carol');
    expect(revoked.stdout).toBe('1 session of carol revoked\n');
    expect(await store.sessionPrincipal({ secretHash: 'cli-test-session' })).toBeNull();

    const tooHigh = await cli({}, 'api-token', 'create', '--user', 'carol', '--name', 'ci', '--role', 'admin');
    expect(tooHigh.code).toBe(1);
    expect(tooHigh.stderr).toMatch(/^FORBIDDEN: role: a token may not have a role above its owner's \(operator\)/);
    const made = await cli({}, 'api-token', 'create', '--user', 'carol', '--name', 'ci', '--role', 'viewer', '--days', '2');
    expect(made.code).toBe(0);
    const secret = /secret \(shown once; send it as Authorization: Bearer\): (flt_\S+)/.exec(made.stdout)?.[1];
    expect(secret).toBeDefined();
    const principal = await store.apiTokenPrincipal({ secretHash: secretHash(secret!) });
    expect(principal).toMatchObject({ role: 'viewer', user: { name: 'carol' } });
    const listed = await cli({}, 'api-token', 'list', '--user', 'carol');
    expect(listed.stdout).toContain('ci');
    expect(listed.stdout).not.toContain(secret!.slice(4));
    expect((await cli({}, 'api-token', 'revoke', principal!.tokenId!)).code).toBe(0);
    expect(await store.apiTokenPrincipal({ secretHash: secretHash(secret!) })).toBeNull();

    expect((await cli({}, 'user', 'set-role', '--name', 'carol', '--role', 'admin')).stdout).toBe('carol is now admin; their sessions were ended\n');
    expect((await cli({}, 'user', 'disable', '--name', 'carol')).code).toBe(0);
    expect((await store.getUser({ userId: carol.id })).disabled).toBe(true);
    const actions = (await store.listAudit({ limit: 50 })).map((e) => e.action);
    expect(actions).toEqual(expect.arrayContaining(['sessions.revoked', 'token.created', 'token.revoked', 'user.role_changed', 'user.disabled']));
  });
});
