import { SchedulerNode, type NodeConfig } from '@fenceline/core/engine';
import { type NewEvent, type NodeStore } from '@fenceline/core/store';
import type { Simulation } from '../engine/simulation';
import { SimProcess } from '../engine/process';
import type { Link } from './link';
import { linkedStore } from './linked-store';

export interface SchedulerHostOptions {
  sim: Simulation;
  nodeId: string;
  store: NodeStore;
  /** This node's link to the store. */
  link: Link;
  storeTimeoutMs: number;
  config: Partial<NodeConfig>;
  onEvent: (event: Omit<NewEvent, 'at'> & { at: number }, host: SchedulerHost) => void;
  onError: (where: string, err: unknown, host: SchedulerHost) => void;
  onStoreCall?: (method: string) => void;
  /** Every store answer the node received, for the checker's record of what was acknowledged. */
  onStoreReply?: (method: string, value: unknown) => void;
  /** Around the store applying each of the node's calls: when it left the node (null once applied). */
  onStoreApply?: (method: string, sentAtMs: number | null) => void;
  /** How long a supervisor waits before starting a node whose start failed. */
  restartDelayMs: number;
}

/**
 * A scheduler process: the production SchedulerNode, unchanged, bound to this process's
 * drifting clock and timers and to the store through this process's link. A crash drops
 * the node object with everything in its memory; a restart builds a new one under the
 * same node id, as a supervisor restarting the process would.
 */
export class SchedulerHost {
  readonly process: SimProcess;
  node: SchedulerNode | null = null;
  starts = 0;
  /** Kept down by a fault; the supervisor does not restart it until the fault ends. */
  heldDown = false;

  constructor(private readonly options: SchedulerHostOptions) {
    this.process = new SimProcess(options.sim, options.nodeId);
    this.process.onError = (err) => options.onError('process', err, this);
  }

  get nodeId(): string {
    return this.options.nodeId;
  }

  get link(): Link {
    return this.options.link;
  }

  /** Up, running and able to reach the store. */
  get healthy(): boolean {
    return this.node !== null && this.process.state === 'running' && !this.options.link.cut;
  }

  start(): void {
    const o = this.options;
    this.starts++;
    const incarnation = this.process.incarnation;
    const node = new SchedulerNode({
      nodeId: o.nodeId,
      store: linkedStore(o.store, o.link, this.process, o.storeTimeoutMs, o.onStoreCall, o.onStoreReply, o.onStoreApply),
      clock: this.process.clock,
      timers: this.process.timers,
      config: { ...o.config },
      onEvent: (event) => o.onEvent(event, this),
      onError: (where, err) => o.onError(where, err, this),
    });
    this.node = node;
    this.process.deliver(incarnation, () => {
      node.start().catch((err: unknown) => {
        // A node that cannot start (its store unreachable) exits; its supervisor starts it again.
        if (this.process.incarnation !== incarnation) return;
        o.onError('start', err, this);
        this.crash();
        o.sim.after(o.restartDelayMs, `${o.nodeId} supervisor restart`, () => {
          if (this.process.state === 'crashed' && this.node === null && !this.heldDown) this.restart();
        });
      });
    });
  }

  crash(): void {
    this.process.crash();
    this.node = null;
  }

  restart(): void {
    this.process.restart();
    this.start();
  }
}
