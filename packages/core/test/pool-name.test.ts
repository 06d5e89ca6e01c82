import { describe, expect, it } from 'vitest';
import { checkRuleInput } from '../src/notify/notifications';
import { MAX_POOL_NAME_LENGTH, poolNameSchema, poolProblem, workerOfferSchema, workerTokenPool } from '../src/routing/offer';

const longest = `g${'p'.repeat(MAX_POOL_NAME_LENGTH - 1)}`;
const tooLong = `${longest}u`;
const secret = 'a'.repeat(43);

describe('the pool name rule', () => {
  it('accepts names of 1 to 63 lower-case letters, digits and "-", starting with a letter or digit', () => {
    expect(longest).toHaveLength(63);
    for (const name of ['a', '7', 'gpu-east', longest]) expect(poolProblem(name)).toBeNull();
    for (const name of ['', '-gpu', 'GPU', 'gpu_east', 'gpu.east', 'gpu east', tooLong]) expect(poolProblem(name)).toMatch(/^must be lower-case/);
  });

  it('is the rule of the worker protocol, notification rules and issued tokens alike', () => {
    expect(poolNameSchema.safeParse(longest).success).toBe(true);
    expect(poolNameSchema.safeParse(tooLong).success).toBe(false);
    expect(workerOfferSchema.safeParse({ pool: longest }).success).toBe(true);
    expect(workerOfferSchema.safeParse({ pool: tooLong }).success).toBe(false);
    const rule = { channelId: '1', event: 'pool_no_worker' as const, afterSeconds: 60 };
    expect(checkRuleInput({ ...rule, pool: longest }).pool).toBe(longest);
    expect(() => checkRuleInput({ ...rule, pool: tooLong })).toThrow(/^pool must be lower-case/);
    expect(workerTokenPool(`flw.${longest}.${secret}`)).toBe(longest);
    expect(workerTokenPool(`flw.${tooLong}.${secret}`)).toBeNull();
    expect(workerTokenPool(`flw.GPU.${secret}`)).toBeNull();
    expect(workerTokenPool(`flw.gpu.${secret}x`)).toBeNull();
    expect(workerTokenPool('a-worker-token-of-some-length')).toBeNull();
  });
});
