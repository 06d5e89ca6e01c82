import { nameIdProblem, NotFoundError, sequenceIdProblem, type DagId, type RunId } from '@fenceline/core';

/**
 * Ids as they come from a page's URL (/runs/abc, /dags/a%2Fb). Text that no run or DAG
 * could have as its id is answered NOT_FOUND, like an id that names nothing, so the page
 * says there is no such run or DAG; the message names the field and why, and the text
 * never reaches a store query.
 */
export function runIdFromUrl(text: string): RunId {
  const problem = sequenceIdProblem(text);
  if (problem === null) return text as RunId;
  throw new NotFoundError(`run ${text} does not exist (runId: ${problem})`, { runId: text, field: 'runId', problem });
}

export function dagIdFromUrl(text: string, field = 'id'): DagId {
  const problem = nameIdProblem(text);
  if (problem === null) return text as DagId;
  throw new NotFoundError(`DAG ${text} does not exist (${field}: ${problem})`, { dagId: text, field, problem });
}
