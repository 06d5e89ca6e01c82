import { describe, expect, it } from 'vitest';
import { defaultRunParams, paramFromText, resolveRunParams } from '../src/dag/params';
import { validateDag } from '../src/dag/validate';
import { InvalidInputError } from '../src/errors';
import { paramsSchema, type ParamSpec } from '../src/spec';

const declared: Record<string, ParamSpec> = paramsSchema.parse({
  region: { type: 'string', enum: ['eu', 'us'], default: 'eu' },
  batch: { type: 'integer', required: true },
  ratio: { type: 'number', default: 0.5 },
  dryRun: { type: 'boolean' },
});

function refusal(given: unknown): InvalidInputError {
  try {
    resolveRunParams(declared, given);
  } catch (err) {
    if (err instanceof InvalidInputError) return err;
    throw err;
  }
  throw new Error('expected the params to be refused');
}

describe('run params', () => {
  it('resolves good values and fills in the defaults of the ones left out', () => {
    expect(resolveRunParams(declared, { batch: 10, dryRun: true })).toEqual({ region: 'eu', batch: 10, ratio: 0.5, dryRun: true });
    expect(resolveRunParams(declared, { batch: 3, region: 'us', ratio: 2 })).toEqual({ region: 'us', batch: 3, ratio: 2 });
  });

  it('names every bad field at once: a wrong type, a missing required one, an unknown name', () => {
    const err = refusal({ region: 'eu', ratio: 'high', colour: 'red' });
    expect(err.details.issues).toEqual([
      { field: 'params.colour', message: 'is not a parameter of this DAG' },
      { field: 'params.batch', message: 'is required' },
      { field: 'params.ratio', message: 'must be a number, got "high"' },
    ]);
    expect(err.message).toContain('params.batch is required');
  });

  it('refuses a value outside the enum and a number with a fraction for an integer', () => {
    expect(refusal({ batch: 1.5, region: 'asia' }).details.issues).toEqual([
      { field: 'params.batch', message: 'must be an integer, got 1.5' },
      { field: 'params.region', message: 'must be one of "eu", "us"' },
    ]);
  });

  it('refuses text the store cannot keep, naming the field', () => {
    const withText = paramsSchema.parse({ note: { type: 'string' } });
    for (const bad of ['nul\u0000', 'lone\ud800']) {
      expect(() => resolveRunParams(withText, { note: bad })).toThrow(/params\.note must not contain/);
    }
  });

  it('refuses params that are not an object', () => {
    expect(refusal([1]).details.field).toBe('params');
    expect(refusal('x').details.field).toBe('params');
  });

  it('gives a scheduled run the defaults', () => {
    expect(defaultRunParams(declared)).toEqual({ region: 'eu', ratio: 0.5 });
    expect(defaultRunParams({})).toEqual({});
  });

  it('reads text as the declared type and leaves bad text for the validator to name', () => {
    expect(paramFromText('integer', '42')).toBe(42);
    expect(paramFromText('number', 'x')).toBe('x');
    expect(paramFromText('boolean', 'true')).toBe(true);
    expect(paramFromText('string', '42')).toBe('42');
    expect(refusal({ batch: paramFromText('integer', 'lots') }).details.issues).toEqual([{ field: 'params.batch', message: 'must be an integer, got "lots"' }]);
  });
});

describe('param declarations', () => {
  const tasks = [{ id: 'a', type: 'noop' }];

  it('are checked when a spec is applied: a default of the wrong type, a bad name, an enum value of the wrong type', () => {
    const result = validateDag({
      id: 'p',
      tasks,
      params: { n: { type: 'integer', default: 'ten' }, '1bad': { type: 'string' }, e: { type: 'string', enum: ['a', 2] }, d: { type: 'string', enum: ['a'], default: 'b' } },
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    const paths = result.issues.map((i) => i.path);
    expect(paths).toEqual(expect.arrayContaining(['params.n.default', 'params.1bad', 'params.e.enum.1', 'params.d.default']));
  });

  it('must cover every {{params.NAME}} an HTTP task uses', () => {
    const http = (config: Record<string, unknown>) => ({ id: 'p', params: { day: { type: 'string' } }, tasks: [{ id: 'call', type: 'http', config }] });
    expect(validateDag(http({ url: 'https://example.com/{{params.day}}', headers: { 'x-day': '{{ params.day }}' }, body: '{{params.day}}' })).ok).toBe(true);
    const result = validateDag(http({ url: 'https://example.com/{{params.dya}}', headers: { 'x-region': '{{params.region}}' } }));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.issues.map((i) => [i.kind, i.path])).toEqual([
      ['config', 'tasks.0.config.url'],
      ['config', 'tasks.0.config.headers.x-region'],
    ]);
    expect(result.issues[0]!.message).toBe('Task "call" uses {{params.dya}}, but the DAG declares no parameter "dya"; declare it under params or fix the name.');
  });

  it('are optional, and a spec without them keeps no params field', () => {
    const result = validateDag({ id: 'p', tasks });
    expect(result.ok && result.spec.params).toBe(undefined);
    const declaredOk = validateDag({ id: 'p', tasks, params: { n: { type: 'integer', default: 3, description: 'how many' } } });
    expect(declaredOk.ok && declaredOk.spec.params).toEqual({ n: { type: 'integer', default: 3, required: false, description: 'how many' } });
  });
});
