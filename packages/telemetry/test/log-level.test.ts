import { describe, expect, it } from 'vitest';
import { jsonLogger } from '../src/log';

describe('jsonLogger levels', () => {
  it('writes the lines at or above its level, and says which levels it writes', () => {
    const lines: string[] = [];
    const log = jsonLogger(
      { service: 'test' },
      'info',
      (l) => lines.push(l),
      () => 0,
    );
    expect([log.enabled('debug'), log.enabled('info'), log.enabled('warn'), log.enabled('error')]).toEqual([false, true, true, true]);
    log.log('debug', 'hidden', { a: 1 });
    log.log('warn', 'shown', { a: 2 });
    expect(lines.map((l) => JSON.parse(l) as Record<string, unknown>)).toEqual([{ time: '1970-01-01T00:00:00.000Z', level: 'warn', msg: 'shown', service: 'test', a: 2 }]);
    // A child keeps its parent's level.
    const child = log.child({ component: 'c' });
    expect(child.enabled('debug')).toBe(false);
    expect(jsonLogger({}, 'debug', () => undefined).enabled('debug')).toBe(true);
  });
});
