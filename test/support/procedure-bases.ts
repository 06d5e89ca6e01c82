/** A tRPC procedure as a router lists it: the parsers of its input, none when it takes none. */
interface Procedure {
  _def: { inputs?: unknown[] };
}

/**
 * What is wrong with a sweep's table of valid inputs (console-bases.ts, worker-bases.ts):
 * a procedure that takes input but has no base would be swept at its input's root only, so
 * its fields would never get a hostile value; a base naming no procedure is left over from
 * one renamed or removed. Each is one line of the answer.
 */
export function basesProblems(procedures: Record<string, Procedure>, bases: Record<string, unknown>): string[] {
  const problems: string[] = [];
  for (const [name, procedure] of Object.entries(procedures))
    if ((procedure._def.inputs?.length ?? 0) > 0 && !Object.hasOwn(bases, name)) problems.push(`${name} takes input but has no base`);
  for (const name of Object.keys(bases)) if (!Object.hasOwn(procedures, name)) problems.push(`${name} has a base but is no procedure`);
  return problems;
}
