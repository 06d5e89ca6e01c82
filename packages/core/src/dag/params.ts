import { InvalidInputError } from '../errors';
import { LIMITS } from '../limits';
import { fitsParamType, type ParamSpec, type ParamType, type ParamValue } from '../spec';
import { characterProblem } from '../input/free-form';
import { utf8ByteLength } from './limit-checks';

/**
 * A `{{params.NAME}}` placeholder in an HTTP task's url, header values or body (spaces
 * inside the braces allowed). The worker fills them, and applying a spec checks that each
 * names a declared parameter; both use this one pattern.
 */
export const PARAM_PLACEHOLDER = /\{\{\s*params\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/** A run's resolved parameters: every declared parameter that has a value, by name. */
export type RunParams = Record<string, ParamValue>;

/** One bad trigger value, named by its path (`params.NAME`) so a form can show it beside its field. */
export interface ParamIssue {
  field: string;
  message: string;
}

/**
 * The values a run of a DAG gets: the trigger's values, checked against the declaration,
 * and the defaults of the parameters it left out. Every problem is collected (a wrong
 * type, a value outside the enum, a required parameter with no value, a name the DAG does
 * not declare), and the trigger is refused with all of them at once, so an operator fixes
 * a form in one pass. A parameter with neither a value nor a default is left out.
 *
 * Parameters are taken in name order (paramNames), and so are the issues and the resolved
 * values: PostgreSQL's jsonb keeps an object's keys in an order of its own, and every store
 * must answer alike.
 */
export function resolveRunParams(declared: Readonly<Record<string, ParamSpec>>, given: unknown = {}): RunParams {
  const issues: ParamIssue[] = [];
  if (typeof given !== 'object' || given === null || Array.isArray(given)) {
    throw new InvalidInputError('params must be an object of parameter names to values', { field: 'params', issues: [{ field: 'params', message: 'must be an object' }] });
  }
  const values = given as Record<string, unknown>;
  const resolved: RunParams = {};
  for (const name of Object.keys(values).sort()) {
    if (!Object.hasOwn(declared, name)) issues.push({ field: `params.${name}`, message: 'is not a parameter of this DAG' });
  }
  for (const name of paramNames(declared)) {
    const param = declared[name]!;
    const value = Object.hasOwn(values, name) ? values[name] : undefined;
    if (value === undefined) {
      if (param.default !== undefined) resolved[name] = param.default;
      else if (param.required) issues.push({ field: `params.${name}`, message: 'is required' });
      continue;
    }
    const problem = valueProblem(param, value);
    if (problem) issues.push({ field: `params.${name}`, message: problem });
    else resolved[name] = value as ParamValue;
  }
  if (issues.length === 0 && utf8ByteLength(JSON.stringify(resolved)) > LIMITS.maxRunParamsBytes) {
    issues.push({ field: 'params', message: `must be at most ${LIMITS.maxRunParamsBytes} bytes of JSON` });
  }
  if (issues.length > 0) {
    const shown = issues.map((i) => `${i.field} ${i.message}`).join('; ');
    throw new InvalidInputError(`run params refused: ${shown}`, { field: issues[0]!.field, issues });
  }
  return resolved;
}

/** The defaults of a DAG's parameters: what a scheduled run gets. */
export function defaultRunParams(declared: Readonly<Record<string, ParamSpec>>): RunParams {
  const resolved: RunParams = {};
  for (const name of paramNames(declared)) if (declared[name]!.default !== undefined) resolved[name] = declared[name]!.default;
  return resolved;
}

/** A DAG's parameter names in the one order every store, form and listing uses: by name, in code-unit order. */
export function paramNames(declared: Readonly<Record<string, ParamSpec>>): string[] {
  return Object.keys(declared).sort();
}

function valueProblem(param: ParamSpec, value: unknown): string | null {
  if (!fitsParamType(param.type, value)) return `must be ${ARTICLE[param.type]}, got ${describe(value)}`;
  if (typeof value === 'string' && value.length > LIMITS.maxParamValueLength) return `must be at most ${LIMITS.maxParamValueLength} characters`;
  // Text the store cannot keep (a NUL, a lone surrogate) is refused here, not by the statement.
  const characters = typeof value === 'string' ? characterProblem(value) : null;
  if (characters !== null) return characters;
  if (param.enum && !param.enum.includes(value)) return `must be one of ${param.enum.map((v) => JSON.stringify(v)).join(', ')}`;
  return null;
}

const ARTICLE: Record<ParamType, string> = { string: 'a string', number: 'a number', integer: 'an integer', boolean: 'a boolean' };

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `"${value.length > 40 ? `${value.slice(0, 40)}…` : value}"`;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return `a${typeof value === 'object' ? 'n object' : ` ${typeof value}`}`;
}

/**
 * A value typed as text (a CLI `--param NAME=VALUE`, a form field) read as the declared
 * type; text that is not a number or boolean is kept as it is, and the validator names it.
 */
export function paramFromText(type: ParamType | undefined, text: string): unknown {
  if (type === 'number' || type === 'integer') {
    const trimmed = text.trim();
    return trimmed !== '' && Number.isFinite(Number(trimmed)) ? Number(trimmed) : text;
  }
  if (type === 'boolean') return text === 'true' ? true : text === 'false' ? false : text;
  return text;
}
