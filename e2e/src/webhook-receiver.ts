import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the receiver read. */
export interface ReceivedHook {
  path: string;
  /** The notification's idempotency key, from its header. */
  key: string;
  event: string;
  /** Whether the signature header matched the body under the receiver's secret. */
  signatureOk: boolean;
  body: Record<string, unknown>;
}

/**
 * A webhook receiver on 127.0.0.1 for the browser tests: it records every request and
 * answers with the status its path is set to (200 unless told), so one receiver can stand
 * for a healthy channel and a broken one, and a broken one can be fixed mid-test.
 */
export class WebhookReceiver {
  readonly received: ReceivedHook[] = [];
  private readonly statusOf = new Map<string, number>();
  private server: Server | null = null;
  url = '';

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

  /** Answers every later request to `path` with `status`. */
  answer(path: string, status: number): void {
    this.statusOf.set(path, status);
  }

  at(path: string): ReceivedHook[] {
    return this.received.filter((r) => r.path === path);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    const got = Buffer.from(String(req.headers['x-fenceline-signature'] ?? ''));
    const expected = Buffer.from(`sha256=${createHmac('sha256', this.secret).update(raw).digest('hex')}`);
    const path = req.url ?? '';
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
    } catch {
      // A body that is no JSON is recorded as empty; the test then fails on what it expected in it.
    }
    this.received.push({
      path,
      key: String(req.headers['x-fenceline-idempotency-key'] ?? ''),
      event: String(req.headers['x-fenceline-event'] ?? ''),
      signatureOk: got.length === expected.length && timingSafeEqual(got, expected),
      body,
    });
    res.writeHead(this.statusOf.get(path) ?? 200, { 'content-type': 'application/json' }).end('{}');
  }
}
