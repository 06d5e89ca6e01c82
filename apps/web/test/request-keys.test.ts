import { describe, expect, test } from 'vitest';
import { fingerprintOf, KEY_KEPT_MS, RequestKeys } from '@/lib/request-keys';

/** A RequestKeys on a clock the test moves, with numbered keys so a new one is easy to tell. */
function keysAt() {
  const clock = { ms: 1_000_000 };
  let n = 0;
  const keys = new RequestKeys({ now: () => clock.ms, newKey: () => `k${++n}` });
  return { keys, clock };
}

describe('request keys of a console control', () => {
  test('a click while the first is out repeats its key (a double click)', () => {
    const { keys } = keysAt();
    const fp = fingerprintOf({ id: 'etl' });
    expect(keys.keyFor(fp)).toBe('k1');
    expect(keys.keyFor(fp)).toBe('k1');
  });

  test('a click after the answer repeats the key for the whole window, and not after it', () => {
    const { keys, clock } = keysAt();
    const fp = fingerprintOf({ id: 'etl' });
    const first = keys.keyFor(fp);
    clock.ms += 80;
    keys.answered(first);
    for (const gap of [0, 130, 400, 1_500, KEY_KEPT_MS - 1]) {
      clock.ms += gap;
      const again = keys.keyFor(fp);
      expect(again, `a click ${gap} ms after the last answer`).toBe(first);
      keys.answered(again);
    }
    expect(keys.keptUntil(fp)).toBe(clock.ms + KEY_KEPT_MS);
    clock.ms += KEY_KEPT_MS;
    expect(keys.keptUntil(fp)).toBeNull();
    expect(keys.keyFor(fp)).toBe('k2');
  });

  test('a refused or unanswered request keeps its key too, so sending it again does it once', () => {
    const { keys, clock } = keysAt();
    const fp = fingerprintOf({ runId: '7', kind: 'retry_failed' });
    const key = keys.keyFor(fp);
    keys.answered(key);
    clock.ms += 3_000;
    expect(keys.keyFor(fp)).toBe(key);
  });

  test('a different request (other params, other action) gets its own key at once', () => {
    const { keys } = keysAt();
    const a = keys.keyFor(fingerprintOf({ id: 'etl', params: { day: '2026-12-01' } }));
    keys.answered(a);
    const b = keys.keyFor(fingerprintOf({ id: 'etl', params: { day: '2026-12-02' } }));
    expect(b).not.toBe(a);
    // Going back to the first request is a new request again, not a repeat of the old one.
    expect(keys.keyFor(fingerprintOf({ id: 'etl', params: { day: '2026-12-01' } }))).not.toBe(a);
  });

  test('the answer of an older key does not start the window of a newer one', () => {
    const { keys, clock } = keysAt();
    const old = keys.keyFor(fingerprintOf({ id: 'a' }));
    const fp = fingerprintOf({ id: 'b' });
    const current = keys.keyFor(fp);
    keys.answered(old);
    clock.ms += KEY_KEPT_MS * 2;
    // Still out, so still the same request.
    expect(keys.keyFor(fp)).toBe(current);
  });

  test('fingerprints ignore the order of object keys but not of arrays', () => {
    expect(fingerprintOf({ a: 1, b: { c: 2, d: 3 } })).toBe(fingerprintOf({ b: { d: 3, c: 2 }, a: 1 }));
    expect(fingerprintOf({ taskIds: ['x', 'y'] })).not.toBe(fingerprintOf({ taskIds: ['y', 'x'] }));
  });

  test('the default key is 32 hex digits and new each time', () => {
    const keys = new RequestKeys();
    const a = keys.keyFor('a');
    const b = keys.keyFor('b');
    expect(a).toMatch(/^[0-9a-f]{32}$/);
    expect(b).not.toBe(a);
  });
});
