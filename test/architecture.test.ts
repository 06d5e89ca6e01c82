import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
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

/** Every file git tracks, as it is in the working tree now (deleted ones left out). */
function trackedFiles(): string[] {
  const listed = execFileSync('git', ['ls-files', '-z'], { cwd: REPO_ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return listed
    .split('\0')
    .filter((name) => name !== '')
    .map((name) => join(REPO_ROOT, name))
    .filter((path) => existsSync(path) && statSync(path).isFile());
}

/** Lines of `paths` that match `pattern`, comments included (a citation is usually in one). */
function mentions(paths: string[], pattern: RegExp): string[] {
  const hits: string[] = [];
  for (const path of paths) {
    const text = readFileSync(path, 'utf8');
    if (text.includes('\0')) continue; // binary
    text.split('\n').forEach((line, i) => {
      if (pattern.test(line)) hits.push(`${relative(REPO_ROOT, path)}:${i + 1}: ${line.trim()}`);
    });
  }
  return hits;
}

describe('the design documentation', () => {
  const tracked = trackedFiles();
  const architecture = readFileSync(join(REPO_ROOT, 'docs/architecture.md'), 'utf8');

  it('lives in the repository: nothing refers to a design folder outside it', () => {
    // Written as escaped patterns so that this file does not match itself.
    expect(mentions(tracked, /\.\.\/shared\/|DESIGN\.md/)).toEqual([]);
  });

  it('defines every rule that a citation of docs/architecture.md names', () => {
    const defined = new Set([...architecture.matchAll(/^\*\*Rule (\d+)\./gm)].map((m) => Number(m[1])));
    expect(defined.size).toBeGreaterThan(0);
    const citations = mentions(tracked, /architecture\.md, rules? \d/);
    expect(citations.length).toBeGreaterThan(0);
    const undefinedRules: string[] = [];
    for (const hit of citations) {
      for (const m of hit.matchAll(/rules? (\d+)(?:-(\d+))?/g)) {
        const from = Number(m[1]);
        const to = m[2] === undefined ? from : Number(m[2]);
        for (let n = from; n <= to; n++) if (!defined.has(n)) undefinedRules.push(`${hit} (rule ${n})`);
      }
    }
    expect(undefinedRules).toEqual([]);
  });

  it('names every invariant the simulator checks', () => {
    for (let n = 1; n <= 8; n++) expect(architecture).toMatch(new RegExp(`^\\| \\*\\*I${n}\\*\\* \\|`, 'm'));
  });
});
