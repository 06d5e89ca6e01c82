import { describe, expect, it } from 'vitest';
import type { NewEvent } from '../src/store';
import { EventBuffer } from '../src/engine/event-buffer';
import { asJobId } from './literal-ids';

function event(n: number): NewEvent {
  return { type: 'lease:renewed', jobId: asJobId(String(n)), at: new Date(1_700_000_000_000 + n) };
}

/** A stand-in for the store's appendEvents that refuses its first `failures` calls, as a store that is away. */
function flakyLog(failures: number): { written: NewEvent[]; calls: number; append(batch: NewEvent[]): Promise<void> } {
  const log = {
    written: [] as NewEvent[],
    calls: 0,
    async append(batch: NewEvent[]): Promise<void> {
      log.calls++;
      if (log.calls <= failures) throw new Error('connection lost');
      log.written.push(...batch);
    },
  };
  return log;
}

describe('EventBuffer', () => {
  it('keeps a batch whose write failed, in front of newer events, and loses nothing once the write succeeds', async () => {
    const drops: number[] = [];
    const buffer = new EventBuffer((n) => drops.push(n), 100);
    const log = flakyLog(2);
    for (let i = 0; i < 5; i++) buffer.push(event(i));
    await expect(buffer.flush((b) => log.append(b))).rejects.toThrow('connection lost');
    for (let i = 5; i < 8; i++) buffer.push(event(i));
    await expect(buffer.flush((b) => log.append(b))).rejects.toThrow('connection lost');
    expect(buffer.size).toBe(8);
    buffer.push(event(8));
    await buffer.flush((b) => log.append(b));
    expect(log.written.map((e) => e.jobId)).toEqual(['0', '1', '2', '3', '4', '5', '6', '7', '8']);
    expect(buffer.size).toBe(0);
    expect(drops).toEqual([]);
  });

  it('puts events emitted while a failing write was out after its batch', async () => {
    const buffer = new EventBuffer(() => undefined, 100);
    const log = flakyLog(1);
    buffer.push(event(0));
    const flushing = buffer.flush(async (b) => {
      buffer.push(event(1));
      await log.append(b);
    });
    await expect(flushing).rejects.toThrow('connection lost');
    await buffer.flush((b) => log.append(b));
    expect(log.written.map((e) => e.jobId)).toEqual(['0', '1']);
  });

  it('drops the oldest events beyond its bound and counts every one dropped', async () => {
    let dropped = 0;
    const buffer = new EventBuffer((n) => (dropped += n), 10);
    const log = flakyLog(1);
    for (let i = 0; i < 8; i++) buffer.push(event(i));
    await expect(buffer.flush((b) => log.append(b))).rejects.toThrow();
    for (let i = 8; i < 15; i++) buffer.push(event(i));
    expect(dropped).toBe(5);
    expect(buffer.size).toBe(10);
    await buffer.flush((b) => log.append(b));
    expect(log.written.map((e) => Number(e.jobId))).toEqual([5, 6, 7, 8, 9, 10, 11, 12, 13, 14]);
  });

  it('trims a failed batch put back in front of newer events to the bound, dropping the oldest', async () => {
    let dropped = 0;
    const buffer = new EventBuffer((n) => (dropped += n), 10);
    for (let i = 0; i < 8; i++) buffer.push(event(i));
    await expect(
      buffer.flush(async () => {
        for (let i = 8; i < 14; i++) buffer.push(event(i));
        throw new Error('connection lost');
      }),
    ).rejects.toThrow();
    expect(dropped).toBe(4);
    const log = flakyLog(0);
    await buffer.flush((b) => log.append(b));
    expect(log.written.map((e) => Number(e.jobId))).toEqual([4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
  });

  it('writes nothing when nothing is buffered', async () => {
    const log = flakyLog(0);
    await new EventBuffer(() => undefined, 10).flush((b) => log.append(b));
    expect(log.calls).toBe(0);
  });

  it('makes every event storable as it is pushed: no NUL, no lone surrogate, no nesting past the limit', async () => {
    const buffer = new EventBuffer(() => undefined, 100);
    let deep: unknown = 'bottom';
    for (let i = 0; i < 200; i++) deep = [deep];
    buffer.push({ type: 'job:failed', data: { error: `${'x'.repeat(3)}\ud83d`, ['k\u0000']: 'a\u0000b', list: ['\udc00', 1, null], deep, fine: 'ü \ud83d\ude00' } });
    buffer.push(event(1));
    const log = flakyLog(0);
    await buffer.flush((b) => log.append(b));
    const [failed, plain] = log.written;
    expect(failed!.data).toMatchObject({ error: 'xxx\ufffd', ['k\ufffd']: 'a\ufffdb', list: ['\ufffd', 1, null], fine: 'ü \ud83d\ude00' });
    expect(JSON.stringify(failed!.data)).toContain('[nested too deep to store]');
    expect(plain).toEqual(event(1));
  });

  it('sends a failed batch again under the same key, and newer events under a new one', async () => {
    const buffer = new EventBuffer(() => undefined, 100, 'node-a@1:');
    const sent: { key: string; ids: string[] }[] = [];
    let fail = true;
    const write = async (batch: NewEvent[], key: string): Promise<void> => {
      sent.push({ key, ids: batch.map((e) => String(e.jobId)) });
      if (fail) throw new Error('answer lost');
    };
    buffer.push(event(0));
    buffer.push(event(1));
    await expect(buffer.flush(write)).rejects.toThrow('answer lost');
    buffer.push(event(2));
    fail = false;
    await buffer.flush(write);
    buffer.push(event(3));
    await buffer.flush(write);
    expect(sent).toEqual([
      { key: 'node-a@1:0', ids: ['0', '1'] },
      { key: 'node-a@1:0', ids: ['0', '1'] },
      { key: 'node-a@1:1', ids: ['2'] },
      { key: 'node-a@1:2', ids: ['3'] },
    ]);
    expect(buffer.size).toBe(0);
  });

  it('counts a batch on its way to the store out of the bound, and drops from a failed one first', async () => {
    let dropped = 0;
    const buffer = new EventBuffer((n) => (dropped += n), 4);
    const keys: string[] = [];
    for (let i = 0; i < 4; i++) buffer.push(event(i));
    await expect(
      buffer.flush(async (_b, key) => {
        keys.push(key);
        for (let i = 4; i < 8; i++) buffer.push(event(i));
        expect(dropped).toBe(0);
        throw new Error('connection lost');
      }),
    ).rejects.toThrow();
    // Eight held against a bound of four: the failed batch's four go, its key with them.
    expect(dropped).toBe(4);
    const log = flakyLog(0);
    await buffer.flush(async (b, key) => {
      keys.push(key);
      await log.append(b);
    });
    expect(log.written.map((e) => Number(e.jobId))).toEqual([4, 5, 6, 7]);
    expect(keys).toEqual(['0', '1']);
  });
});
