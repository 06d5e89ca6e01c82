import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { InvalidInputError } from '../src/errors';
import {
  actionIdSchema,
  apiTokenIdSchema,
  backfillIdSchema,
  channelIdSchema,
  dagIdSchema,
  isDagId,
  isJobId,
  isRunId,
  isWorkerId,
  jobIdSchema,
  MAX_SEQUENCE_ID,
  notificationIdSchema,
  parseActionId,
  parseApiTokenId,
  parseBackfillId,
  parseChannelId,
  parseDagId,
  parseJobId,
  parseNotificationId,
  parseRuleId,
  parseRunId,
  parseUserId,
  parseWorkerId,
  ruleIdSchema,
  runIdSchema,
  SEQUENCE_ID_SHAPE,
  userIdSchema,
  workerIdSchema,
} from '../src/index';
import { checkRuleInput } from '../src/notify/notifications';
import { validateDag } from '../src/dag/validate';

/** The field and problem an id parser refused with, or null if it accepted. */
function refusal(parse: () => unknown): { message: string; details: Record<string, unknown> } | null {
  try {
    parse();
    return null;
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidInputError);
    const e = err as InvalidInputError;
    expect(e.code).toBe('INVALID_INPUT');
    return { message: e.message, details: e.details };
  }
}

const SEQUENCE_EDGES: [string, boolean][] = [
  ['0', false],
  ['1', true],
  ['42', true],
  [MAX_SEQUENCE_ID, true],
  ['9223372036854775808', false],
  ['9999999999999999999', false],
  ['1'.repeat(18), true],
  ['1'.repeat(20), false],
  ['01', false],
  ['00', false],
  ['', false],
  [' 1', false],
  ['1 ', false],
  ['1e3', false],
  ['-1', false],
  ['+1', false],
  ['1.0', false],
  ['0x1', false],
  ['١', false],
];

describe('job and run ids', () => {
  it('accept exactly the decimal numbers from 1 to the largest bigint', () => {
    expect(MAX_SEQUENCE_ID).toBe(String(2n ** 63n - 1n));
    for (const [text, ok] of SEQUENCE_EDGES) {
      expect(isJobId(text), JSON.stringify(text)).toBe(ok);
      expect(isRunId(text), JSON.stringify(text)).toBe(ok);
      expect(refusal(() => parseJobId(text)) === null, JSON.stringify(text)).toBe(ok);
      expect(jobIdSchema.safeParse(text).success, JSON.stringify(text)).toBe(ok);
      expect(runIdSchema.safeParse(text).success, JSON.stringify(text)).toBe(ok);
    }
  });

  it('refuse values that are not strings', () => {
    for (const value of [1, 1n, null, undefined, {}, ['1']]) {
      expect(isJobId(value)).toBe(false);
      expect(refusal(() => parseRunId(value))?.message).toBe('runId: must be a string');
      expect(jobIdSchema.safeParse(value).success).toBe(false);
    }
  });

  it('name the field and the problem in a refusal', () => {
    expect(refusal(() => parseJobId('abc'))).toEqual({ message: 'jobId: must be a numeric id', details: { field: 'jobId', problem: 'must be a numeric id' } });
    expect(refusal(() => parseRunId('0'))?.message).toBe(`runId: must be a numeric id from 1 to ${MAX_SEQUENCE_ID}`);
    expect(refusal(() => parseRunId('1'.repeat(20), 'run'))?.message).toBe(`run: must be a numeric id from 1 to ${MAX_SEQUENCE_ID}`);
  });

  it('give the same problem through zod, at the field path', () => {
    const schema = z.object({ leases: z.array(z.object({ jobId: jobIdSchema })) });
    const result = schema.safeParse({ leases: [{ jobId: '1' }, { jobId: '9223372036854775808' }] });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([['leases.1.jobId', `must be a numeric id from 1 to ${MAX_SEQUENCE_ID}`]]);
    expect(schema.parse({ leases: [{ jobId: MAX_SEQUENCE_ID }] }).leases[0]!.jobId).toBe(MAX_SEQUENCE_ID);
  });
});

/** Every sequence id kind, by its parser (with its default field) and its zod schema. */
const SEQUENCE_KINDS: [string, (value: unknown) => unknown, z.ZodType][] = [
  ['jobId', parseJobId, jobIdSchema],
  ['runId', parseRunId, runIdSchema],
  ['backfillId', parseBackfillId, backfillIdSchema],
  ['actionId', parseActionId, actionIdSchema],
  ['channelId', parseChannelId, channelIdSchema],
  ['ruleId', parseRuleId, ruleIdSchema],
  ['notificationId', parseNotificationId, notificationIdSchema],
  ['userId', parseUserId, userIdSchema],
  ['tokenId', parseApiTokenId, apiTokenIdSchema],
];

describe('every sequence id kind', () => {
  it('takes the same ids: 1 to the largest bigint, in plain decimal; refuses 0 and anything larger', () => {
    for (const [field, parse, schema] of SEQUENCE_KINDS) {
      for (const [text, ok] of SEQUENCE_EDGES) {
        const why = `${field} ${JSON.stringify(text)}`;
        const refused = refusal(() => parse(text));
        expect(refused === null, why).toBe(ok);
        if (!ok) expect(refused?.details.field, why).toBe(field);
        expect(schema.safeParse(text).success, why).toBe(ok);
      }
    }
  });

  it('states the shape of a sequence id in JSON Schema, which the range check narrows', () => {
    const shape = new RegExp(SEQUENCE_ID_SHAPE);
    for (const [text, ok] of SEQUENCE_EDGES) if (ok) expect(shape.test(text), text).toBe(true);
    for (const [, , schema] of SEQUENCE_KINDS) expect(z.toJSONSchema(schema, { io: 'input' })).toMatchObject({ type: 'string', pattern: SEQUENCE_ID_SHAPE });
  });

  it("holds a notification rule's channel to the same rule", () => {
    const rule = { event: 'run_failed' as const };
    expect(checkRuleInput({ ...rule, channelId: MAX_SEQUENCE_ID }).channelId).toBe(MAX_SEQUENCE_ID);
    for (const bad of ['0', '01', '9223372036854775808', '1'.repeat(20)]) {
      expect(() => checkRuleInput({ ...rule, channelId: bad }), bad).toThrow('channelId must name an existing channel');
    }
  });
});

describe('DAG ids', () => {
  it('follow the rule of the spec', () => {
    const cases: [string, boolean][] = [
      ['etl', true],
      ['a', true],
      ['9', true],
      ['Daily.report_v2-b', true],
      ['x'.repeat(128), true],
      ['x'.repeat(129), false],
      ['', false],
      ['-lead', false],
      ['.hidden', false],
      ['has space', false],
      ['a/b', false],
      ["x'; drop table dags; --", false],
    ];
    for (const [text, ok] of cases) {
      expect(isDagId(text), text).toBe(ok);
      expect(dagIdSchema.safeParse(text).success, text).toBe(ok);
      expect(validateDag({ id: text, tasks: [{ id: 'one', type: 'noop' }] }).ok, text).toBe(ok);
    }
    expect(parseDagId('etl')).toBe('etl');
    expect(refusal(() => parseDagId('a/b'))?.message).toBe('dagId: may contain only letters, digits, "_", "." and "-", and must start with a letter or digit');
    expect(refusal(() => parseDagId('', 'DAG'))?.message).toBe('DAG: must not be empty');
  });
});

describe('worker ids', () => {
  it('take letters, digits and _ . : @ - up to 200 characters', () => {
    const cases: [string, boolean][] = [
      ['worker-1', true],
      ['host.example:7@pool_2', true],
      ['w'.repeat(200), true],
      ['w'.repeat(201), false],
      ['', false],
      ['has space', false],
      ['w/1', false],
    ];
    for (const [text, ok] of cases) {
      expect(isWorkerId(text), text).toBe(ok);
      expect(workerIdSchema.safeParse(text).success, text).toBe(ok);
      expect(refusal(() => parseWorkerId(text)) === null, text).toBe(ok);
    }
    expect(refusal(() => parseWorkerId('w/1'))?.message).toBe('workerId: may contain only letters, digits and _ . : @ -');
  });
});
