import { SimProcess } from '../engine/process';
import type { Simulation } from '../engine/simulation';
import { SimWorker, type SimWorkerOptions } from './sim-worker';

/** A worker machine: its process, and the SimWorker running in it (rebuilt on restart). */
export class WorkerHost {
  readonly process: SimProcess;
  worker: SimWorker | null = null;

  constructor(
    sim: Simulation,
    readonly id: string,
    private readonly make: (process: SimProcess) => Omit<SimWorkerOptions, 'process'>,
    onError: (err: unknown) => void,
    /** Told when the process crashes (false) and comes back (true). */
    private readonly onUp?: (up: boolean) => void,
  ) {
    this.process = new SimProcess(sim, id);
    this.process.onError = onError;
  }

  start(): void {
    const worker = new SimWorker({ ...this.make(this.process), process: this.process });
    this.worker = worker;
    this.process.deliver(this.process.incarnation, () => void worker.start().catch(() => undefined));
  }

  /** The process dies with its jobs; their leases run out and the sweeper revokes them. */
  crash(): void {
    this.worker?.stop();
    this.worker = null;
    this.process.crash();
    this.onUp?.(false);
  }

  restart(): void {
    this.process.restart();
    this.onUp?.(true);
    this.start();
  }
}
