import { describe, expect, it } from 'vitest';
import { Simulation } from '../src/engine/simulation';

/**
 * A small world of events whose promise continuations run several awaits deep and
 * schedule further events, some at the same instant: what each continuation saw is
 * logged, so running it stepped on ticks and stepped on macrotasks can be compared.
 */
async function story(macrotaskPerStep: boolean): Promise<{ log: string[]; hash: string }> {
  const sim = new Simulation(0, 50);
  sim.stepOptions = { macrotaskPerStep };
  const log: string[] = [];
  let counter = 0;
  const deep = async (depth: number, name: string): Promise<void> => {
    for (let k = 0; k < depth; k++) await Promise.resolve();
    counter++;
    log.push(`${sim.nowMs} ${name} saw ${counter}`);
  };
  for (let i = 0; i < 20; i++) {
    sim.after(i % 3, `e${i}`, () => {
      void deep(1 + (i % 7) * 9, `e${i}`).then(() => sim.post(0, `e${i}+`, () => void deep(40, `e${i}+`)));
      log.push(`${sim.nowMs} e${i} ran at ${counter}`);
    });
  }
  sim.afterEvent = () => log.push(`after ${sim.eventCount} at ${counter}`);
  await sim.runUntil(10);
  return { log, hash: sim.trace.hash() };
}

describe('Simulation: stepping', () => {
  it('runs every continuation of an event before the next event, the same on ticks as on macrotasks', async () => {
    const ticks = await story(false);
    const messages = await story(true);
    expect(ticks.log).toEqual(messages.log);
    expect(ticks.hash).toBe(messages.hash);
    // Each event's continuations (up to 55 awaits deep) finished before the checker's turn.
    for (let i = 0; i < ticks.log.length; i++) {
      const ran = /^\d+ (e\d+) ran/.exec(ticks.log[i]!);
      if (ran) expect(ticks.log[i + 1]).toMatch(new RegExp(`^\\d+ ${ran[1]} saw`));
    }
  });
});
