import { describe, expect, it } from 'vitest';
import { AssertionError, assert, InvalidInputError } from '../src';
import { checkNodeConfig, DEFAULT_NODE_CONFIG } from '../src/engine';

describe('node configuration', () => {
  it('accepts the defaults as they are', () => {
    expect(checkNodeConfig({ ...DEFAULT_NODE_CONFIG })).toEqual(DEFAULT_NODE_CONFIG);
  });

  it('names every wrong field at once', () => {
    try {
      checkNodeConfig({ ...DEFAULT_NODE_CONFIG, tickIntervalMs: 0, dueBatch: 2.5, outboxHoldMs: -1, capFraction: 0 });
      expect.unreachable('the configuration should have been refused');
    } catch (err) {
      expect(err).toBeInstanceOf(InvalidInputError);
      const problems = (err as InvalidInputError).details.problems as string[];
      expect(problems).toEqual([
        'tickIntervalMs must be a whole number of at least 1, got 0',
        'dueBatch must be a whole number of at least 1, got 2.5',
        'outboxHoldMs must be a whole number of at least 0, got -1',
        'capFraction must be in (0, 1], got 0',
      ]);
    }
  });

  it('refuses a renewal that would come after its lease expired', () => {
    expect(() => checkNodeConfig({ ...DEFAULT_NODE_CONFIG, renewIntervalMs: 90_000, leaseTtlMs: 90_000 })).toThrow(
      'renewIntervalMs (90000) must be shorter than leaseTtlMs (90000)',
    );
  });
});

describe('assert', () => {
  it('passes when the condition holds and throws an AssertionError naming it when not', () => {
    expect(() => assert(1 < 2, 'one is less than two')).not.toThrow();
    expect(() => assert(false, 'the queue is empty here')).toThrow(new AssertionError('the queue is empty here'));
    expect(() => assert(false, 'the queue is empty here')).toThrow('assertion failed: the queue is empty here');
  });
});
