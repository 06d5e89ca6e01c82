import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One request the receiver read, with whether a Standard Webhooks library verified it. */
export interface Received {
  path: string;
  key: string;
  event: string;
  signed: boolean;
  /** The standardwebhooks package accepted its id, timestamp (within 5 minutes) and signature over the exact bytes read. */
  signatureOk: boolean;
  /** The webhook-timestamp header, in seconds. */
  timestamp: number;
  body: Record<string, unknown>;
  /** When the request had been read (Date.now()), for tests that hold a delivery to a time bound. */
  atMs: number;
}

/**
 * A webhook receiver on 127.0.0.1: it verifies each request with the `standardwebhooks`
 * package, as a receiver of the product would, over the exact bytes it read and records it, then answers as the current test's `answer` says (a
 * status, or a promise the test settles later to hold the response open).
 */
export class Receiver {
  readonly received: Received[] = [];
  answer: (r: Received) => number | Promise<number> = () => 200;
  private server: Server | null = null;
  url = '';

  private readonly verifier: Webhook;

  /** @param secret the channel's secret, that every signature is checked with: a `whsec_` secret as it is, any other as its UTF-8 bytes */
  constructor(secret: string) {
    this.verifier = secret.startsWith('whsec_') ? new Webhook(secret) : new Webhook(new TextEncoder().encode(secret), { format: 'raw' });
  }

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
    const header = String(req.headers['webhook-signature'] ?? '');
    let signatureOk = false;
    try {
      this.verifier.verify(raw.toString('utf8'), req.headers as Record<string, string>);
      signatureOk = true;
    } catch {
      signatureOk = false;
    }
    const r: Received = {
      path: req.url ?? '',
      key: String(req.headers['webhook-id'] ?? ''),
      event: String(req.headers['x-fenceline-event'] ?? ''),
      signed: header !== '',
      signatureOk,
      timestamp: Number(req.headers['webhook-timestamp']),
      body: JSON.parse(raw.toString('utf8')) as Record<string, unknown>,
      atMs: Date.now(),
    };
    this.received.push(r);
    const status = await this.answer(r);
    res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
  }
}
