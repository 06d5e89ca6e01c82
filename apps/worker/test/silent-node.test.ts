import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseJobId, parseWorkerId, type Timers } from '@fenceline/core';
import { type SchedulerNode } from '@fenceline/core/engine';
import { type NoticeStore, type WorkerCredentialStore } from '@fenceline/core/store';
import { ResultQueue } from '@fenceline/core/worker';
import { createSchedulerServer, WorkerAuth } from '@fenceline/scheduler';
import { HttpTransport } from '../src/transport';

const TOKEN = 'token-for-silent-node-tests';

const timers: Timers = {
  after: (ms, fn) => {
    const t = setTimeout(fn, ms);
    return () => clearTimeout(t);
  },
};

/** A node that accepts connections and never answers a byte, as one whose store call hangs does. */
function silentNode(): { server: TcpServer; sockets: Set<Socket> } {
  const sockets = new Set<Socket>();
  const server = createTcpServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
  });
  return { server, sockets };
}

/** The other node: the real HTTP server and worker router, over a node that records the results it is given and accepts them. */
function recordingNode(written: { workerId: string; jobIds: string[] }[]): SchedulerNode {
  return {
    nodeId: 'healthy-node',
    metrics: { inc: () => undefined },
    protocol: {
      completeMany: async (input: { workerId: string; results: { jobId: string; fence: number }[] }) => {
        written.push({ workerId: input.workerId, jobIds: input.results.map((r) => r.jobId) });
        return input.results.map((r) => ({ jobId: r.jobId, ok: true, row: { state: 'succeeded', fence: r.fence } }));
      },
    },
  } as unknown as SchedulerNode;
}

function listen(server: TcpServer): Promise<string> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
}

describe('worker: a node that never answers a result request', () => {
  const silent = silentNode();
  const written: { workerId: string; jobIds: string[] }[] = [];
  const auth = new WorkerAuth({ mode: 'dev', devToken: TOKEN, store: {} as WorkerCredentialStore & NoticeStore, nowMs: () => 0 });
  const healthy = createSchedulerServer(recordingNode(written), auth);
  let urls: string[] = [];
  beforeAll(async () => {
    urls = [await listen(silent.server), await listen(healthy)];
  });
  afterAll(async () => {
    for (const s of silent.sockets) s.destroy();
    await new Promise((resolve) => silent.server.close(resolve));
    healthy.closeAllConnections();
    await new Promise((resolve) => healthy.close(resolve));
  });

  it('abandons the request at its deadline and has the results written through the other node', async () => {
    const transport = new HttpTransport(urls, TOKEN, () => ({}), 1_000);
    const logged: string[] = [];
    const queue = new ResultQueue({
      workerId: parseWorkerId('worker-silent-test'),
      transport,
      timers,
      defer: (fn) => setImmediate(fn),
      halted: () => false,
      log: (level, msg) => logged.push(`${level}: ${msg}`),
    });
    const started = Date.now();
    // Both leases came from the silent node, so their results go there first.
    const sent = [
      queue.send(0, { jobId: parseJobId('11'), fence: 3, output: { n: 1 }, logs: null }),
      queue.send(0, { jobId: parseJobId('12'), fence: 4, output: null, logs: 'done' }),
    ];
    // The request reached the silent node and waits there.
    await new Promise<void>((resolve) => {
      const poll = setInterval(() => {
        if (silent.sockets.size > 0) {
          clearInterval(poll);
          resolve();
        }
      }, 10);
    });
    await Promise.all(sent);
    const tookMs = Date.now() - started;
    expect(written).toEqual([{ workerId: 'worker-silent-test', jobIds: ['11', '12'] }]);
    // Past the 1 s request deadline, and not much more: the other node was asked at once.
    expect(tookMs).toBeGreaterThanOrEqual(1_000);
    expect(tookMs).toBeLessThan(5_000);
    expect(queue.pending).toBe(0);
    // The silent node's connection was given up, not left to wait.
    expect(logged).toEqual([]);
  }, 30_000);
});
