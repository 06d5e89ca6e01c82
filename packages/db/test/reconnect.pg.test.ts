import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../src/client';
import { TcpRelay } from '../src/testing';

/**
 * A failover cuts every connection of a pool at once. The pool must connect again within
 * about a second of the database answering, however many connections were cut: the
 * driver's own backoff grows with every connection of the pool that closed with an error
 * (up to 20 s), so a pool of ten cut connections used to wait 10 to 20 s before trying
 * the promoted standby.
 */
const target = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');

let relay: TcpRelay;
let url: string;

beforeAll(async () => {
  relay = new TcpRelay(target);
  url = await relay.listen();
});
afterAll(async () => {
  await relay?.close();
});

describe('a pool whose connections were all cut', () => {
  it('connects again and answers within a couple of seconds, twice in a row', async () => {
    const sql = connect(url, { max: 10, connect_timeout: 5 });
    try {
      for (let cut = 0; cut < 2; cut++) {
        // Ten statements at once open all ten connections of the pool.
        await Promise.all(Array.from({ length: 10 }, () => sql`select pg_sleep(0.2)`));
        relay.resetAll();
        // The cut is seen by every connection before the next statements are sent.
        await new Promise((resolve) => setTimeout(resolve, 200));
        const started = Date.now();
        const answers = await Promise.all(Array.from({ length: 10 }, async () => (await sql`select 1 as one`)[0]!.one as number));
        const tookMs = Date.now() - started;
        expect(answers).toEqual(Array.from({ length: 10 }, () => 1));
        expect(tookMs).toBeLessThan(3000);
      }
    } finally {
      await sql.end({ timeout: 1 });
    }
  });
});
