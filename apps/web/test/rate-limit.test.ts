import { describe, expect, it } from 'vitest';
import { FailureLimiter } from '../src/server/rate-limit';

describe('sign-in failure limiter', () => {
  it('refuses a key after its failures fill the window, says for how long, and lets it go when they age out', () => {
    let now = 1_000_000;
    const limiter = new FailureLimiter(3, 60_000, () => now);
    for (let i = 0; i < 3; i++) {
      expect(limiter.retryAfterS('alice')).toBe(0);
      limiter.fail('alice');
      now += 10_000;
    }
    // The first failure was 30 s ago, so it leaves the window in 30 s.
    expect(limiter.retryAfterS('alice')).toBe(30);
    expect(limiter.retryAfterS('bob')).toBe(0);
    now += 30_001;
    expect(limiter.retryAfterS('alice')).toBe(0);
    limiter.fail('alice');
    limiter.clear('alice');
    expect(limiter.retryAfterS('alice')).toBe(0);
  });

  it('keeps a bounded number of keys, dropping the oldest first', () => {
    const limiter = new FailureLimiter(1, 60_000, () => 0, 2);
    limiter.fail('a');
    limiter.fail('b');
    limiter.fail('c');
    expect(limiter.retryAfterS('a')).toBe(0);
    expect(limiter.retryAfterS('b')).toBeGreaterThan(0);
    expect(limiter.retryAfterS('c')).toBeGreaterThan(0);
  });
});
