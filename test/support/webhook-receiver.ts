import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the receiver read, with whether its signature matched the body it carried. */
export interface Received {
  path: string;
  key: string;
  event: string;
  signed: boolean;
  signatureOk: boolean;
  body: Record<string, unknown>;
  /** When the request had been read (Date.now()), for tests that hold a delivery to a time bound. */
  atMs: number;
}

/**
 * A webhook receiver on 127.0.0.1: it verifies each request's signature over the exact
 * bytes it read and records it, then answers as the current test's `answer` says (a
 * status, or a promise the test settles later to hold the response open).
 */
export class Receiver {
  readonly received: Received[] = [];
  answer: (r: Received) => number | Promise<number> = () => 200;
  private server: Server | null = null;
  url = '';

  /** @param secret the channel's secret, that every signature is checked with */
  constructor(private readonly secret: string) {}

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  of(key: string): Received[] {
    return this.received.filter((r) => r.key === key);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const header = String(req.headers['x-fenceline-signature'] ?? '');
    const expected = Buffer.from(`sha256=${createHmac('sha256', this.secret).update(raw).digest('hex')}`);
    const got = Buffer.from(header);
    const r: Received = {
      path: req.url ?? '',
      key: String(req.headers['x-fenceline-idempotency-key'] ?? ''),
      event: String(req.headers['x-fenceline-event'] ?? ''),
      signed: header !== '',
      signatureOk: got.length === expected.length && timingSafeEqual(got, expected),
      body: JSON.parse(raw.toString('utf8')) as Record<string, unknown>,
      atMs: Date.now(),
    };
    this.received.push(r);
    const status = await this.answer(r);
    res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
  }
}
