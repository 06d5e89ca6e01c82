import { errorFromJSON, type JobId, type WorkerId, type WorkerOffer } from '@fenceline/core';
import { type SchedulerNode } from '@fenceline/core/engine';
import { type RenewOutcome, type UpstreamOutput } from '@fenceline/core/store';
import { type FailureToSend, type OpenPoll, type ReleaseToSend, type ResultOutcome, type ResultToSend, type WorkerTransport } from '@fenceline/core/worker';
import type { SimProcess } from '../engine/process';
import { callLabels, callOver, holdOver, LinkError, type CallLabels, type Link } from './link';
import { onNode } from './on-node';
import type { SchedulerHost } from './scheduler-host';

/**
 * How long a node holds a simulated worker's poll before answering it empty. The workers'
 * polls are held open until answered (see `holdOver` in link.ts), so the nodes of a
 * simulation are configured with this wait instead of the production 25 s; the worker
 * still behaves as if its polls were answered every `pollWaitMs`.
 */
export const HELD_POLL_WAIT_MS = 6 * 60 * 60 * 1000;

export interface SimWorkerTransportOptions {
  id: WorkerId;
  process: SimProcess;
  hosts: SchedulerHost[];
  /** One link per scheduler node, in the order of `hosts`. */
  links: Link[];
  rpcTimeoutMs: number;
  /**
   * The session key this worker process presents on every call, as the HTTP transport
   * presents the hash of its session secret: one per process, so a restarted worker's
   * writes for its old leases are refused.
   */
  session: string;
  /** Told when a node renewed leases but its answer never reached the worker. */
  onRenewReplyLost?: (leases: { jobId: string; fence: number }[]) => void;
}

interface Labels {
  register: CallLabels;
  poll: CallLabels;
  renew: CallLabels;
  write: CallLabels;
  complete: CallLabels;
  release: CallLabels;
}

/**
 * The worker protocol over the simulated links: each call crosses the worker's link to
 * the node (latency, slow periods, cuts, lost replies, timeouts) and is answered by
 * whatever SchedulerNode runs there when it arrives. Polls are held open (`holdOver`),
 * and a change of free slots plays out the production poll's next empty answer.
 */
export class SimWorkerTransport implements WorkerTransport {
  /** Call names per node (`w-1>node-0.poll`), built once: they label every event of a call. */
  private readonly labels: Labels[];

  constructor(private readonly o: SimWorkerTransportOptions) {
    this.labels = o.hosts.map((h) => {
      const base = `${o.id}>${h.nodeId}`;
      return {
        register: callLabels(`${base}.register`),
        poll: callLabels(`${base}.poll`),
        renew: callLabels(`${base}.renew`),
        write: callLabels(`${base}.write`),
        complete: callLabels(`${base}.complete`),
        release: callLabels(`${base}.release`),
      };
    });
  }

  get nodeCount(): number {
    return this.o.hosts.length;
  }

  register(i: number, req: { workerId: WorkerId; slots: number; offer?: WorkerOffer }) {
    return this.call(i, this.labels[i]!.register, (node) =>
      node.protocol.register({ workerId: req.workerId, slots: req.slots, ...(req.offer ? { offer: req.offer } : {}), session: this.o.session, credentialId: null }),
    );
  }

  poll(i: number, req: { workerId: WorkerId; slots: number; free: number; waitMs: number; offer?: WorkerOffer }): OpenPoll {
    const host = this.o.hosts[i]!;
    const held = holdOver(this.o.links[i]!, this.o.process, host.process, this.labels[i]!.poll, { cycleMs: req.waitMs, timeoutMs: this.o.rpcTimeoutMs }, (hangUp) =>
      onNode(host, (node) =>
        node.protocol.poll(
          { workerId: req.workerId, session: this.o.session, slots: req.slots, freeSlots: req.free, waitMs: HELD_POLL_WAIT_MS, ...(req.offer ? { offer: req.offer } : {}) },
          hangUp,
        ),
      ),
    );
    return {
      answer: held.promise,
      hangUp: (reason) => held.abort(reason),
      // The production poll is answered empty at its next cycle and sent again with the new count.
      offerChanged: (free) => {
        if (free !== req.free) held.refresh();
      },
    };
  }

  async renew(i: number, req: { workerId: WorkerId; leases: { jobId: JobId; fence: number; log?: string }[] }): Promise<RenewOutcome[]> {
    let renewed = false;
    try {
      return await this.call(i, this.labels[i]!.renew, async (node) => {
        const outcomes = await node.protocol.renew({ workerId: req.workerId, session: this.o.session, leases: req.leases });
        renewed = true;
        return outcomes;
      });
    } catch (err) {
      if (renewed && err instanceof LinkError) this.o.onRenewReplyLost?.(req.leases);
      throw err;
    }
  }

  completeMany(i: number, req: { workerId: WorkerId; results: ResultToSend[] }): Promise<ResultOutcome[]> {
    return this.call(i, this.labels[i]!.complete, async (node) => {
      // Each refusal crosses the wire as {code, message, details}, as the router sends it.
      const answers = await node.protocol.completeMany({ workerId: req.workerId, session: this.o.session, results: req.results });
      return answers.map((a) => (a.ok ? { ok: true as const } : { ok: false as const, error: errorFromJSON(a.error.toJSON()) }));
    });
  }

  failMany(i: number, req: { workerId: WorkerId; failures: FailureToSend[] }): Promise<ResultOutcome[]> {
    return this.call(i, this.labels[i]!.write, async (node) => {
      const answers = await node.protocol.failMany({ workerId: req.workerId, session: this.o.session, failures: req.failures });
      return answers.map((a) => (a.ok ? { ok: true as const } : { ok: false as const, error: errorFromJSON(a.error.toJSON()) }));
    });
  }

  releaseMany(i: number, req: { workerId: WorkerId; releases: ReleaseToSend[] }): Promise<ResultOutcome[]> {
    return this.call(i, this.labels[i]!.release, async (node) => {
      const answers = await node.protocol.releaseMany({ workerId: req.workerId, session: this.o.session, releases: req.releases });
      return answers.map((a) => (a.ok ? { ok: true as const } : { ok: false as const, error: errorFromJSON(a.error.toJSON()) }));
    });
  }

  upstream(i: number, req: { workerId: WorkerId; jobId: JobId; fence: number; taskIds: string[] }): Promise<UpstreamOutput[]> {
    return this.call(i, this.labels[i]!.write, (node) => node.protocol.upstream({ ...req, session: this.o.session }));
  }

  /** One request to node `i`, answered by whatever SchedulerNode runs there when it arrives. */
  private call<T>(i: number, labels: CallLabels, fn: (node: SchedulerNode) => Promise<T>): Promise<T> {
    const host = this.o.hosts[i]!;
    return callOver(this.o.links[i]!, this.o.process, host.process, labels, this.o.rpcTimeoutMs, () => onNode(host, fn));
  }
}
