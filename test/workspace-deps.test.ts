import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../tools/start/cluster';

/**
 * Every workspace declares the workspaces it imports in its package.json, so its
 * manifest says what it stands on: what its sources import under dependencies, what
 * only its tests import under dependencies or devDependencies. The root package (tools/,
 * test/, bench/, examples/) holds every workspace and declares none.
 */

interface Manifest {
  name: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

const IMPORT = /(?:from\s+|import\s*\(\s*)'(@fenceline\/[a-z-]+)/g;

function workspaces(): string[] {
  const roots = ['packages', 'apps'].flatMap((parent) => readdirSync(join(REPO_ROOT, parent)).map((name) => join(parent, name)));
  return [...roots, 'e2e'].filter((dir) => statSync(join(REPO_ROOT, dir, 'package.json'), { throwIfNoEntry: false })?.isFile());
}

/** The workspaces the TypeScript files under `dir` import, itself left out. */
function importedFrom(dir: string, self: string): Set<string> {
  const found = new Set<string>();
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name === '.next') continue;
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.tsx?$/.test(entry.name)) for (const m of readFileSync(path, 'utf8').matchAll(IMPORT)) if (m[1] !== self) found.add(m[1]!);
    }
  };
  if (statSync(dir, { throwIfNoEntry: false })?.isDirectory()) walk(dir);
  return found;
}

describe('workspace manifests', () => {
  it('finds the workspaces', () => {
    expect(workspaces()).toEqual(expect.arrayContaining(['packages/core', 'packages/db', 'packages/sim', 'apps/scheduler', 'apps/worker', 'apps/web', 'apps/cli', 'e2e']));
  });

  for (const dir of workspaces()) {
    it(`${dir} declares every workspace it imports`, () => {
      const manifest = JSON.parse(readFileSync(join(REPO_ROOT, dir, 'package.json'), 'utf8')) as Manifest;
      const deps = new Set(Object.keys(manifest.dependencies ?? {}));
      const dev = new Set(Object.keys(manifest.devDependencies ?? {}));
      const root = join(REPO_ROOT, dir);
      const sources = dir === 'e2e' ? importedFrom(root, manifest.name) : importedFrom(join(root, 'src'), manifest.name);
      const tests = dir === 'e2e' ? new Set<string>() : importedFrom(join(root, 'test'), manifest.name);
      expect([...sources].filter((name) => !deps.has(name)).sort(), 'imported by its sources, missing from dependencies').toEqual([]);
      expect([...tests].filter((name) => !deps.has(name) && !dev.has(name)).sort(), 'imported by its tests, missing from its manifest').toEqual([]);
    });
  }
});
