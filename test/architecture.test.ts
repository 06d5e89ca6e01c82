import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../scripts/cluster';

function files(dir: string, exts = ['.ts', '.tsx']): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === '.next') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...files(path, exts));
    else if (exts.some((e) => name.endsWith(e))) out.push(path);
  }
  return out;
}

function offenders(paths: string[], pattern: RegExp): string[] {
  const hits: string[] = [];
  for (const path of paths) {
    readFileSync(path, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        const code = line.replace(/\/\/.*$/, '');
        if (pattern.test(code)) hits.push(`${relative(REPO_ROOT, path)}:${i + 1}: ${line.trim()}`);
      });
  }
  return hits;
}

describe('architecture', () => {
  const core = files(join(REPO_ROOT, 'packages/core/src')).filter((p) => !p.includes('/testing/'));

  it('keeps the scheduling core free of ambient time and randomness', () => {
    expect(offenders(core, /Date\.now\(|new Date\(\)|Math\.random\(|performance\.now\(|\bsetTimeout\(|\bsetInterval\(/)).toEqual([]);
  });

  it('keeps the scheduling core free of IO and of the store implementation', () => {
    expect(offenders(core, /from ['"](node:|fs|net|http|child_process|postgres|drizzle-orm|@fenceline\/db)/)).toEqual([]);
  });

  it('keeps every SQL statement in packages/db', () => {
    const outside = [
      ...files(join(REPO_ROOT, 'apps/scheduler/src')),
      ...files(join(REPO_ROOT, 'apps/worker/src')),
      ...files(join(REPO_ROOT, 'packages/core/src')),
      ...files(join(REPO_ROOT, 'scripts')),
    ];
    expect(offenders(outside, /\bsql`|\b(db|tx|sql|client)\.execute\(|from ['"](postgres|drizzle-orm)/)).toEqual([]);
  });

  it('lets the worker reach the scheduler only through its API', () => {
    expect(offenders(files(join(REPO_ROOT, 'apps/worker/src')), /from ['"]@fenceline\/db/)).toEqual([]);
  });
});
