/**
 * A count with its noun in the right number: "1 job", "2 jobs", "1 active run". The noun
 * is given in the singular; `many` is for the few that do not just take an s. The count is
 * written with thousands separators, as the console writes every count.
 */
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count.toLocaleString('en-US')} ${count === 1 ? one : many}`;
}
