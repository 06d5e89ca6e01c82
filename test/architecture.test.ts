import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { INVARIANTS } from '@fenceline/sim';
import { REPO_ROOT } from '../tools/start/cluster';

/**
 * The import boundaries and the core's freedom from ambient time are ESLint rules now
 * (eslint.config.js, checked by test/lint-rules.test.ts). What stays here is what a lint
 * rule over one file's imports cannot say: that no SQL text is written outside packages/db.
 */
/**
 * Where SQL that is not the scheduler's may be written: the scheduler's own statements live
 * in packages/db; these paths hold code that runs as the user's task code and writes to the
 * user's database, never the scheduler's store. @fenceline/effects is the library tasks
 * import to fence those writes (its ledger lives next to the user's data, so an effect and
 * its ledger row commit together); the examples and the chaos soak's effects workload are
 * user code built on it, with tables of their own in a database of their own, and so are
 * the browser test's effect tasks and the checks that read their tables.
 */
const USER_DATABASE_CODE = ['packages/db/', 'packages/effects/', 'examples/', 'tools/chaos/effects/', 'e2e/run-effects.test.ts', 'e2e/src/effect-tasks.ts'];

describe('architecture', () => {
  it("keeps every SQL statement in packages/db, apart from user code writing to the user's own database", () => {
    const outside = trackedFiles().filter((path) => /\.tsx?$/.test(path) && !USER_DATABASE_CODE.some((dir) => relative(REPO_ROOT, path).startsWith(dir)));
    expect(outside.length).toBeGreaterThan(100);
    // A tagged sql template, a driver call that runs a query string, or a string that opens
    // with a statement. Written with escapes so that this file does not match itself.
    const sqlText =
      /\bsql\x60|\b(db|tx|sql|client)\.(execute|unsafe)\(|['"\x60]\s*(SELECT\s+[\w*]|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|(CREATE|DROP|ALTER)\s+(TABLE|INDEX|DATABASE)\b)/;
    expect(mentions(outside, sqlText, { skipComments: true })).toEqual([]);
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

/**
 * Lines of `paths` that match `pattern`, comments included unless `skipComments` (a
 * citation is usually in a comment; a mention of SQL in prose is not SQL).
 */
function mentions(paths: string[], pattern: RegExp, options: { skipComments?: boolean } = {}): string[] {
  const hits: string[] = [];
  for (const path of paths) {
    const text = readFileSync(path, 'utf8');
    if (text.includes('\0')) continue; // binary
    text.split('\n').forEach((line, i) => {
      const code = options.skipComments ? line.replace(/^\s*(\/\/|\*|\/\*).*$/, '') : line;
      if (pattern.test(code)) hits.push(`${relative(REPO_ROOT, path)}:${i + 1}: ${line.trim()}`);
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

  it("lists every invariant the simulator's checker judges, in the checker's own words", () => {
    // The checker's INVARIANTS is the list: an invariant added there fails this test until
    // docs/architecture.md has a row for it, and a row for one it dropped fails it too.
    const rows = invariantRows(architecture, /^\| \*\*(I\d+)\*\* \| (.+?) \|/gm);
    expect(Object.keys(INVARIANTS).length).toBeGreaterThanOrEqual(12);
    expect([...rows.keys()]).toEqual(Object.keys(INVARIANTS));
    for (const [id, { text }] of Object.entries(INVARIANTS)) expect(sameWords(rows.get(id)), id).toBe(sameWords(text));
  });

  it("gives the README's short list of invariants the checker's words too", () => {
    const rows = invariantRows(readFileSync(join(REPO_ROOT, 'README.md'), 'utf8'), /^\| (I\d+) \| (.+?) \|$/gm);
    expect([...rows.keys()]).toEqual(Object.keys(INVARIANTS));
    for (const [id, { text }] of Object.entries(INVARIANTS)) expect(sameWords(rows.get(id)), id).toBe(sameWords(text));
  });
});

/** A table's invariant rows, id to text, in the order the table lists them. */
function invariantRows(markdown: string, row: RegExp): Map<string, string> {
  return new Map([...markdown.matchAll(row)].map((m) => [m[1]!, m[2]!]));
}

/** A sentence as words: case, a closing full stop and runs of spaces do not count. */
function sameWords(text: string | undefined): string {
  return (text ?? '')
    .toLowerCase()
    .replace(/\.\s*$/, '')
    .replace(/\s+/g, ' ')
    .trim();
}
