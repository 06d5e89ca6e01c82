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

/** A value that is only dots, which a URL parser reads as "this segment" or "the one above" when it stands alone. */
const DOTS = /^\.{1,2}$/;

/**
 * Fills the placeholders of an http task's URL, each value percent-encoded, so that a
 * value cannot add a path segment, a query field or a fragment. A value of `.` or `..`
 * would still move the request when it makes up a whole path segment (URL parsers resolve
 * `/a/../b` to `/b`, and `%2E%2E` alike), so such a value fails the job; inside a segment,
 * and in the query, its dots are sent encoded or as they are.
 */
export function fillUrlParams(url: string, params: RunParams): string {
  const pathEnd = url.search(/[?#]/);
  return url.replace(PARAM_PLACEHOLDER, (placeholder: string, name: string, offset: number) => {
    if (!Object.hasOwn(params, name)) throw new NonRetryableError(`{{params.${name}}} names a parameter this run has no value for`);
    const value = String(params[name]);
    const encoded = encodeURIComponent(value);
    const inPath = pathEnd === -1 || offset < pathEnd;
    if (!inPath || !DOTS.test(encoded)) return encoded;
    const before = url[offset - 1];
    const after = url[offset + placeholder.length];
    const wholeSegment = before === '/' && (after === undefined || after === '/' || after === '?' || after === '#');
    if (wholeSegment) throw new NonRetryableError(`{{params.${name}}} is "${value}", which would move the request to another path of the url`);
    return encoded.replace(/\./g, '%2E');
  });
}
