import { readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The console's app folder, whose page.tsx and route.ts files are its pages and routes. */
export const APP_DIR = fileURLToPath(new URL('../../src/app', import.meta.url));

export interface AppRoute {
  /** The file, relative to APP_DIR. */
  file: string;
  /** Its absolute path, to import. */
  absolute: string;
  kind: 'page' | 'route';
  /** The address Next serves it at: route groups left out, dynamic segments as `[name]`. */
  path: string;
  /** The names of its dynamic segments, in order. */
  params: string[];
  /** Matches a request path to it, capturing each dynamic segment. */
  pattern: RegExp;
}

/**
 * Every page and route of the console, read from the folders under app/ as Next's App
 * Router reads them, so a test that walks this list covers a page or route the day it is
 * added.
 */
export function appRoutes(dir = APP_DIR): AppRoute[] {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => {
      const absolute = join(dir, entry.name);
      if (entry.isDirectory()) return appRoutes(absolute);
      if (entry.name !== 'page.tsx' && entry.name !== 'route.ts') return [];
      const segments = relative(APP_DIR, dir)
        .split(sep)
        .filter((s) => s !== '' && !/^\(.*\)$/.test(s));
      const params = segments.filter((s) => s.startsWith('[')).map((s) => s.slice(1, -1));
      const source = segments.map((s) => (s.startsWith('[') ? '([^/]+)' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/');
      return [
        {
          file: relative(APP_DIR, absolute),
          absolute,
          kind: entry.name === 'page.tsx' ? 'page' : 'route',
          path: `/${segments.join('/')}`,
          params,
          pattern: new RegExp(`^/${source}$`),
        },
      ];
    });
}
