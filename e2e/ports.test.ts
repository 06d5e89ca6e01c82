import assert from 'node:assert/strict';
import net from 'node:net';
import { describe, test } from 'node:test';
import { freePort, freePortRun } from './src/ports';

/**
 * The browser tests' cluster listens on a base port and the ports above it; a base whose
 * neighbour was taken made the second scheduler fail to start with EADDRINUSE.
 */

function listenAnywhere(): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

describe('free ports for a cluster', () => {
  test('a base port whose next port is taken is passed over', async () => {
    const blocker = await listenAnywhere();
    try {
      const taken = (blocker.address() as net.AddressInfo).port;
      const offered: number[] = [];
      const candidates = [taken - 1];
      const base = await freePortRun(2, async () => {
        const next = candidates.shift() ?? (await freePort());
        offered.push(next);
        return next;
      });
      assert.equal(offered[0], taken - 1, 'the blocked candidate was offered first');
      assert.notEqual(base, taken - 1);
      assert.ok(offered.length >= 2, 'another candidate was tried');
      assert.equal(await canListen(base), true);
      assert.equal(await canListen(base + 1), true);
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });

  test('gives up with a clear error when no candidate has room', async () => {
    const blocker = await listenAnywhere();
    try {
      const taken = (blocker.address() as net.AddressInfo).port;
      await assert.rejects(
        freePortRun(2, async () => taken - 1, 3),
        /no 2 consecutive free ports on 127\.0\.0\.1 after 3 tries/,
      );
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });
});
