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
