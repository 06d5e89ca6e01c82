import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { validateDag, type DagIssue, type DagSpec } from '@fenceline/core';
import { findJsonSyntaxError } from './json-syntax';

/**
 * Reads, parses and validates the spec files `fenceline apply` is given, all of them
 * before anything is stored, so one bad file stops the whole apply and every problem in
 * every file is reported in one pass. Each problem names its file.
 */

export interface SpecFile {
  file: string;
  spec: DagSpec;
}

export interface FileProblem {
  file: string;
  /** One line: what is wrong with the file, with the line to look at where there is one. */
  message: string;
  /** A spec's validation issues, each printed once under the message. */
  issues: DagIssue[];
}

export async function readSpecFiles(files: string[]): Promise<{ specs: SpecFile[]; problems: FileProblem[] }> {
  const specs: SpecFile[] = [];
  const problems: FileProblem[] = [];
  const firstFileOf = new Map<string, string>();
  for (const file of files) {
    const loaded = await loadSpec(file);
    if ('message' in loaded) {
      problems.push(loaded);
      continue;
    }
    // Two files with one id would store two versions in one apply, the later silently
    // replacing the earlier; that is almost always a copy that was meant to be renamed.
    const earlier = firstFileOf.get(loaded.spec.id);
    if (earlier !== undefined) {
      problems.push({ file, message: `DAG "${loaded.spec.id}" is also defined in ${earlier}; give each DAG one file`, issues: [] });
      continue;
    }
    firstFileOf.set(loaded.spec.id, file);
    specs.push(loaded);
  }
  return { specs, problems };
}

/**
 * `npm run fenceline` runs the CLI from the repository root, wherever npm was started; npm
 * records the directory it was started in as INIT_CWD, and a relative path on the command
 * line means a path from there.
 */
export function fromCallerDir(file: string, env: NodeJS.ProcessEnv = process.env): string {
  return resolve(env.INIT_CWD || process.cwd(), file);
}

async function loadSpec(file: string): Promise<SpecFile | FileProblem> {
  const problem = (message: string, issues: DagIssue[] = []): FileProblem => ({ file, message, issues });
  let text: string;
  try {
    text = await readFile(fromCallerDir(file), 'utf8');
  } catch (err) {
    return problem(readFailure(err));
  }
  // An editor's byte-order mark is not part of the spec, and JSON.parse refuses it.
  if (text.startsWith('\uFEFF')) text = text.slice(1);
  const parsed = /\.ya?ml$/i.test(file) ? parseYamlText(text) : parseJsonText(text);
  if ('error' in parsed) return problem(parsed.error);
  const validation = validateDag(parsed.value);
  if (!validation.ok) {
    const id = (parsed.value as { id?: unknown } | null)?.id;
    const name = typeof id === 'string' && id !== '' ? `DAG "${id}"` : 'the spec';
    const count = validation.issues.length;
    return problem(`INVALID_DAG: ${name} has ${count} ${count === 1 ? 'problem' : 'problems'}`, validation.issues);
  }
  return { file, spec: validation.spec };
}

function readFailure(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EISDIR') return 'is a directory, not a spec file';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  return `cannot be read (${code ?? (err instanceof Error ? err.message : String(err))})`;
}

function parseJsonText(text: string): { value: unknown } | { error: string } {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (err) {
    const found = findJsonSyntaxError(text);
    if (found) return { error: `not valid JSON: ${found.message} (line ${found.line}, column ${found.column})` };
    return { error: `not valid JSON: ${err instanceof Error ? err.message : String(err)}` };
  }
}

function parseYamlText(text: string): { value: unknown } | { error: string } {
  try {
    return { value: parseYaml(text) as unknown };
  } catch (err) {
    if (!(err instanceof YAMLParseError)) return { error: `not valid YAML: ${err instanceof Error ? err.message : String(err)}` };
    // The library appends the location and a quote of the text to its message; the
    // location is kept as a short suffix and the quote dropped, to keep one line a file.
    const reason = err.message.replace(/ at line \d+, column \d+:[\s\S]*$/, '');
    const where = err.linePos?.[0];
    return { error: `not valid YAML: ${reason}${where ? ` (line ${where.line}, column ${where.col})` : ''}` };
  }
}
