import { isTraceparent } from '@fenceline/core';
import { type Assignment, type PollItem } from '@fenceline/core/engine';

/**
 * A lease's trace context is optional (a node that does not trace sends none) and only
 * carried on when it is a well-formed traceparent: the worker forwards it to the services
 * its HTTP tasks call, so nothing else may pass as one.
 */
export function checkedTraceparents(items: PollItem[]): PollItem[] {
  for (const item of items) {
    const job = item as Partial<Assignment>;
    if (job.traceparent !== undefined && !isTraceparent(job.traceparent)) delete job.traceparent;
  }
  return items;
}
