import { NextRequest } from 'next/server';
import { describe, expect, it } from 'vitest';
import { proxy } from '../src/proxy';
import { MAX_PATH_SEGMENT_LENGTH, NOT_FOUND_PAGE } from '../src/server/path-check';
import { appRoutes } from './support/app-routes';

/**
 * Hostile bytes in every segment of every page and route the console has, listed from
 * apps/web/src/app itself (so a page or route added later is swept the day it is added),
 * sent through the console's proxy as `next start` runs it before any route. An /api/ path
 * must get 400 in the API's error shape; any other path the not-found page, with a 404.
 */

/** Segments that are no percent-encoding of UTF-8, decode to what no id has, or are too long; sent as they are. */
const HOSTILE_SEGMENTS = ['%FF', '%ED%A0%80', '%ED%BF%BF', '%', '%E0%A4%A', '%C0%AF', '%00', 'a%00b', 'x'.repeat(10 * 1024)];

/** Every path of one route with one hostile segment: in place of each segment in turn, glued to it, and after the last. */
function hostilePaths(path: string): string[] {
  const segments = path.split('/').slice(1);
  const benign = (s: string) => (s.startsWith('[') ? 'sweep' : s);
  const paths: string[] = [];
  for (const raw of HOSTILE_SEGMENTS) {
    segments.forEach((_, i) => {
      const around = (replace: string) => `/${segments.map((s, j) => (j === i ? replace : benign(s))).join('/')}`;
      paths.push(around(raw), around(`${benign(segments[i]!)}${raw}`));
    });
    paths.push(`/${[...segments.map(benign), raw].filter((s) => s !== '').join('/')}`);
  }
  return paths;
}

const ORIGIN = 'http://console.test';

describe('console paths: hostile bytes in every segment of every page and route', () => {
  const all = appRoutes();

  it('lists every page and route, the refused-path page among them', () => {
    expect(all.length).toBeGreaterThanOrEqual(40);
    expect(all.map((r) => r.path)).toEqual(expect.arrayContaining(['/', '/runs/[id]', '/api/trpc/[trpc]', '/api/jobs/[jobId]/attempts/[fence]/logs', '/api/v1/dags/[id]']));
    // The proxy rewrites to a route that exists, and that route renders the not-found page.
    expect(all.filter((r) => r.kind === 'page').map((r) => r.path)).toContain(NOT_FOUND_PAGE);
  });

  it('sends every page and route through unchanged with ordinary segments', () => {
    for (const { path } of all) {
      const res = proxy(new NextRequest(`${ORIGIN}${path.replace(/\[[^\]]+\]/g, 'sweep')}`));
      expect(res.headers.get('x-middleware-next'), path).toBe('1');
    }
    const longest = `/runs/${'7'.repeat(MAX_PATH_SEGMENT_LENGTH)}`;
    expect(proxy(new NextRequest(`${ORIGIN}${longest}`)).headers.get('x-middleware-next')).toBe('1');
  });

  it('answers 400 in the error shape under /api/, and the not-found page with a 404 elsewhere', async () => {
    const faults: string[] = [];
    let sent = 0;
    for (const { path } of all) {
      for (const hostile of hostilePaths(path)) {
        sent++;
        const res = proxy(new NextRequest(`${ORIGIN}${hostile}`));
        const what = `${path} as ${hostile.slice(0, 60)}`;
        if (res.headers.get('x-middleware-next') === '1') {
          faults.push(`${what}: passed on to the route`);
          continue;
        }
        if (hostile.startsWith('/api/')) {
          const body = (await res.json()) as Record<string, unknown>;
          const shape = Object.keys(body).sort().join(',') === 'code,issues,message' && body.code === 'INVALID_INPUT' && typeof body.message === 'string';
          if (res.status !== 400 || !shape) faults.push(`${what}: ${res.status} ${JSON.stringify(body).slice(0, 120)}`);
          if (!String(body.message).startsWith('path: ')) faults.push(`${what}: does not name the path: ${String(body.message)}`);
          if (res.headers.get('cache-control') !== 'no-store') faults.push(`${what}: may be cached`);
        } else {
          const target = res.headers.get('x-middleware-rewrite');
          if (res.status !== 404 || target === null || new URL(target).pathname !== NOT_FOUND_PAGE) faults.push(`${what}: ${res.status} to ${target}`);
        }
      }
    }
    expect(faults).toEqual([]);
    expect(sent).toBeGreaterThan(all.length * HOSTILE_SEGMENTS.length * 2);
  });

  it('renders the not-found page from the refused-path route, which is a 404 to Next', async () => {
    const page = (await import('../src/app/not-found-page/page')) as { default: () => unknown };
    let thrown: unknown;
    try {
      page.default();
    } catch (err) {
      thrown = err;
    }
    // Next's notFound() throws an error whose digest Next answers with the not-found page and a 404.
    expect(String((thrown as { digest?: unknown }).digest)).toMatch(/404$/);
  });
});
