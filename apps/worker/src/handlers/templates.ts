import { PARAM_PLACEHOLDER, type RunParams } from '@fenceline/core';
import { NonRetryableError } from '../task';

/**
 * Fills `{{params.NAME}}` placeholders with the run's parameters. `escape` is applied to
 * each value (a URL's parts get encodeURIComponent, so a value cannot add a path segment or
 * a query field); a placeholder naming a parameter the run has no value for fails the job
 * without retrying, since another attempt would get the same params.
 */
export function fillParams(text: string, params: RunParams, escape: (value: string) => string = (v) => v): string {
  return text.replace(PARAM_PLACEHOLDER, (_, name: string) => {
    if (!Object.hasOwn(params, name)) throw new NonRetryableError(`{{params.${name}}} names a parameter this run has no value for`);
    return escape(String(params[name]));
  });
}

/** The scheme and authority of an absolute URL, which come before its path. */
const ORIGIN = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/;

/** A path segment a URL parser reads as "this segment" or "the one above", in any mix of plain and encoded dots. */
const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;

/**
 * Fills the placeholders of an http task's URL, each value percent-encoded, so that a
 * value cannot add a path segment, a query field or a fragment. A segment that decodes to
 * `.` or `..` would still move the request (URL parsers resolve `/a/../b` to `/b`, and
 * `%2E%2E` alike), and such a segment can be made of several placeholders and literal dots
 * together (`{{params.a}}{{params.b}}`, `{{params.a}}.`), so each filled path segment that
 * holds substituted text is judged whole, after filling: one that is only dots fails the
 * job, naming the placeholders in it. The filled URL therefore keeps the template's fixed
 * prefix and its number of path segments.
 */
export function fillUrlParams(url: string, params: RunParams): string {
  const origin = ORIGIN.exec(url)?.[0] ?? '';
  const pathEnd = url.slice(origin.length).search(/[?#]/);
  const split = pathEnd === -1 ? url.length : origin.length + pathEnd;
  const encode = encodeURIComponent;
  const path = url
    .slice(origin.length, split)
    .split('/')
    .map((segment) => {
      const filled = fillParams(segment, params, encode);
      if (segment.search(PARAM_PLACEHOLDER) === -1 || !DOT_SEGMENT.test(filled)) return filled;
      const names = [...segment.matchAll(PARAM_PLACEHOLDER)].map((m) => `{{params.${m[1]}}}`).join('');
      throw new NonRetryableError(`url: the path segment filled from ${names} is "${decodeURIComponent(filled)}", which would move the request to another path`);
    })
    .join('/');
  return fillParams(origin, params, encode) + path + fillParams(url.slice(split), params, encode);
}
