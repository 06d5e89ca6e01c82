import { InvalidInputError, nameIdProblem, parseInstant, type DagId, type RunRow } from '@fenceline/core';
import { type RunPageQuery } from '@fenceline/core/store';

/** Every state a run may have, for the state filter. */
const RUN_STATES: readonly RunRow['state'][] = ['queued', 'running', 'succeeded', 'failed', 'cancelled'];

/** The runs list's parameters as they come from the page's URL, every one text. */
export interface RunFilterText {
  dag?: string;
  state?: string;
  trigger?: string;
  from?: string;
  to?: string;
  order?: string;
  cursor?: string;
  limit?: string;
}

/**
 * The store's page query from the URL's text. An empty parameter is no filter; anything
 * else that is not a value of its filter is INVALID_INPUT naming the parameter. The
 * trigger and the cursor are checked by the store itself.
 */
export function runPageQueryFromUrl(text: RunFilterText): RunPageQuery {
  const query: RunPageQuery = {};
  const given = (value: string | undefined) => (value === undefined || value === '' ? undefined : value);
  const limit = given(text.limit);
  if (limit !== undefined) {
    // The store checks the range; a number is all that is asked here.
    if (!/^\d{1,6}$/.test(limit)) throw new InvalidInputError('limit: must be a whole number of runs per page', { field: 'limit' });
    query.limit = Number(limit);
  }
  const dag = given(text.dag);
  if (dag !== undefined) {
    const problem = nameIdProblem(dag);
    if (problem !== null) throw new InvalidInputError(`dag: ${problem}`, { field: 'dag' });
    query.dagId = dag as DagId;
  }
  const state = given(text.state);
  if (state !== undefined) {
    if (!(RUN_STATES as readonly string[]).includes(state)) throw new InvalidInputError(`state: must be one of ${RUN_STATES.join(', ')}`, { field: 'state' });
    query.state = state as RunRow['state'];
  }
  const order = given(text.order);
  if (order !== undefined) {
    if (order !== 'newest' && order !== 'oldest') throw new InvalidInputError('order: must be newest or oldest', { field: 'order' });
    query.order = order;
  }
  const from = given(text.from);
  if (from !== undefined) query.scheduledFrom = parseInstant(from, 'from');
  const to = given(text.to);
  if (to !== undefined) query.scheduledBefore = parseInstant(to, 'to');
  query.trigger = given(text.trigger);
  query.cursor = given(text.cursor);
  return query;
}
