import { createServer } from 'node:net';

/** Whether nothing listens on 127.0.0.1:`port` now (a listen there succeeds). */
function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * The first port of `span` consecutive ports, all free now, at a random even place in
 * [from, from + range). The machine runs other services whose ports fall in such ranges
 * (RabbitMQ's distribution port 25672, for one), and a formation whose monitor lands on one
 * never comes up; a drill that merely drew its ports at random failed that way.
 */
export async function freePortBlock(from: number, range: number, span: number, random: () => number = Math.random): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const base = from + Math.floor(random() * Math.floor(range / 2)) * 2;
    let free = true;
    for (let p = base; p < base + span && free; p++) free = await isFree(p);
    if (free) return base;
  }
  throw new Error(`no ${span} free consecutive ports found in ${from}-${from + range}`);
}
