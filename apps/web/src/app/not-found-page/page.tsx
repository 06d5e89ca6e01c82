import { notFound } from 'next/navigation';

/**
 * Where the proxy sends a page path it refuses (server/path-check.ts): rewriting to a route
 * that exists lets Next render the console's not-found page with a 404, rather than depend
 * on how it answers a rewrite to nowhere.
 */
export default function RefusedPath(): never {
  notFound();
}
