import net from 'node:net';

/** Listens on `port` (0: one the kernel picks) at 127.0.0.1, or gives null when the port is taken. */
function hold(port: number): Promise<net.Server | null> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(null));
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

function release(servers: (net.Server | null)[]): Promise<void> {
  return Promise.all(servers.map((s) => (s ? new Promise<void>((resolve) => s.close(() => resolve())) : undefined))).then(() => undefined);
}

/** A port nothing listens on at 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
  const server = await hold(0);
  if (!server) throw new Error('no free port on 127.0.0.1');
  const { port } = server.address() as net.AddressInfo;
  await release([server]);
  return port;
}

/**
 * The first of `count` consecutive free ports, for a cluster whose schedulers listen on
 * basePort, basePort + 1, ...: a port the kernel calls free says nothing of the next one,
 * which may be some connection's local port. The ports of a candidate are held together
 * while they are checked. `candidate` gives the base ports to try (by default, free ports).
 */
export async function freePortRun(count: number, candidate: () => Promise<number> = freePort, attempts = 50): Promise<number> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    const base = await candidate();
    if (base + count - 1 > 65_535) continue;
    const held = await Promise.all(Array.from({ length: count }, (_, i) => hold(base + i)));
    await release(held);
    if (held.every((s) => s !== null)) return base;
  }
  throw new Error(`no ${count} consecutive free ports on 127.0.0.1 after ${attempts} tries`);
}
