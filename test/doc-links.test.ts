import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * Every relative link in the repository's Markdown must lead somewhere: to a file or folder
 * that exists and, when it names a heading of a Markdown file (`page.md#heading`), to a
 * heading that page has. Moving or renaming a page, or rewording a heading, fails here until
 * every link to it is fixed.
 */
describe('links in the documentation', () => {
  const pages = markdownFiles();

  it('finds the Markdown pages', () => {
    expect(pages).toContain(join(REPO_ROOT, 'README.md'));
    expect(pages).toContain(join(REPO_ROOT, 'docs/architecture.md'));
  });

  it('leads every relative link to a file that exists, and every #anchor to a heading', () => {
    const anchorsOf = new Map<string, Set<string>>();
    const anchors = (path: string): Set<string> => {
      let found = anchorsOf.get(path);
      if (found === undefined) {
        found = headingAnchors(readFileSync(path, 'utf8'));
        anchorsOf.set(path, found);
      }
      return found;
    };
    const broken: string[] = [];
    let checked = 0;
    for (const page of pages) {
      for (const { target, line } of links(readFileSync(page, 'utf8'))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue; // another site
        checked++;
        const where = `${relative(REPO_ROOT, page)}:${line}: ${target}`;
        const hash = target.indexOf('#');
        const pathPart = decodeURIComponent(hash === -1 ? target : target.slice(0, hash));
        const anchor = hash === -1 ? null : decodeURIComponent(target.slice(hash + 1));
        const file = pathPart === '' ? page : resolve(dirname(page), pathPart);
        if (!existsSync(file)) {
          broken.push(`${where} (no such file)`);
          continue;
        }
        if (anchor !== null && /\.md$/i.test(file) && statSync(file).isFile() && !anchors(file).has(anchor)) {
          broken.push(`${where} (no heading #${anchor} in ${relative(REPO_ROOT, file)})`);
        }
      }
    }
    expect(checked).toBeGreaterThan(100);
    expect(broken).toEqual([]);
  });

  it('tells a missing heading from a present one', () => {
    const anchors = headingAnchors('# The CLI\n\n## `apply` and `trigger` errors\n\n## Runs\n\n## Runs\n\n```sh\n# not a heading\n```\n');
    expect([...anchors].sort()).toEqual(['apply-and-trigger-errors', 'runs', 'runs-1', 'the-cli']);
  });

  it('finds links outside code only', () => {
    const found = links('See [a](a.md) and [b](b.md#x "title") and [p](<app/(console)/page.tsx>).\n\n```md\n[c](c.md)\n```\n\nNot `[d](d.md)`.\n\n[e]: e.md\n');
    expect(found.map((l) => l.target)).toEqual(['a.md', 'b.md#x', 'app/(console)/page.tsx', 'e.md']);
  });
});

/** Every Markdown file git knows of or would add, outside installed and built folders. */
function markdownFiles(): string[] {
  const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--', '*.md'], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  return [...new Set(listed.split('\0'))]
    .filter((name) => name !== '' && !/(^|\/)(node_modules|\.next)\//.test(name))
    .map((name) => join(REPO_ROOT, name))
    .filter((path) => existsSync(path));
}

/** The lines of `text` outside fenced code blocks, with their line numbers. */
function proseLines(text: string): { text: string; line: number }[] {
  const out: { text: string; line: number }[] = [];
  let fence: string | null = null;
  text.split('\n').forEach((line, i) => {
    // A fence closes only with the character it opened with (``` or ~~~).
    const opener = /^\s*([`~])\1\1/.exec(line)?.[1];
    if (opener !== undefined) {
      if (fence === null) fence = opener;
      else if (opener === fence) fence = null;
      return;
    }
    if (fence === null) out.push({ text: line, line: i + 1 });
  });
  return out;
}

/** The targets of inline links, images and reference definitions, code spans left out. */
function links(text: string): { target: string; line: number }[] {
  const found: { target: string; line: number }[] = [];
  for (const { text: raw, line } of proseLines(text)) {
    const prose = raw.replace(/(`+)[^`]*?\1/g, '');
    // A destination is either <in angle brackets> (it may hold spaces and parentheses) or bare.
    for (const m of prose.matchAll(/\]\(\s*(?:<([^>\n]+)>|([^)\s]+))(?:\s+"[^"]*")?\s*\)/g)) found.push({ target: m[1] ?? m[2] ?? '', line });
    const definition = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/.exec(prose);
    if (definition?.[1]) found.push({ target: definition[1], line });
  }
  return found;
}

/**
 * The anchors a Markdown renderer gives a page's headings, as GitHub makes them: the
 * heading's text without markup, lower-cased, punctuation dropped, spaces turned into
 * hyphens, and `-1`, `-2` added to repeats. Explicit `<a id>` and `<a name>` anchors count too.
 */
function headingAnchors(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text: line } of proseLines(text)) {
    for (const m of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) if (m[1]) anchors.add(m[1]);
    const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const plain = heading
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/<[^>]+>/g, '')
      .toLowerCase();
    const slug = plain.replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '').replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}
