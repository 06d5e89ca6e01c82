import { createServer, Socket, type Server } from 'node:net';

/**
 * A TCP relay in front of PostgreSQL that a test can break the way a lost server breaks:
 * `resetAll` resets every open connection (the driver sees ECONNRESET on each), and `cutAll`
 * does that and also resets every new connection until `restore`.
 */
export class TcpRelay {
  private readonly sockets = new Set<Socket>();
  private refusing = false;
  private readonly server: Server;

  constructor(private readonly target: URL) {
    this.server = createServer((client) => {
      if (this.refusing) {
        client.resetAndDestroy();
        return;
      }
      const upstream = new Socket();
      upstream.connect(Number(this.target.port || 5432), this.target.hostname);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
    });
  }

  /** Starts listening on a free port of 127.0.0.1 and returns the target's URL through the relay. */
  listen(): Promise<string> {
    return new Promise((resolve) =>
      this.server.listen(0, '127.0.0.1', () => {
        const relayed = new URL(this.target.href);
        relayed.hostname = '127.0.0.1';
        relayed.port = String((this.server.address() as { port: number }).port);
        resolve(relayed.href);
      }),
    );
  }

  /** How many sockets (both sides of each relayed connection) are still open. */
  get openSockets(): number {
    return this.sockets.size;
  }

  resetAll(): void {
    for (const s of this.sockets) s.resetAndDestroy();
  }

  /** The database through this relay is gone until `restore`. */
  cutAll(): void {
    this.refusing = true;
    this.resetAll();
  }

  restore(): void {
    this.refusing = false;
  }

  close(): Promise<void> {
    this.cutAll();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
