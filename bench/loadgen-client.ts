import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from '../tools/start/cluster';

/** The bench's handle on a few load generator processes sharing many worker identities. */
export class LoadGenerators {
  private readonly procs: ChildProcess[] = [];
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();

  constructor(processes: number) {
    for (let i = 0; i < processes; i++) {
      const child = fork(join(REPO_ROOT, 'bench', 'loadgen.ts'), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
      child.on('message', (m: { id: number; data?: unknown; error?: string }) => {
        const p = this.pending.get(m.id);
        if (!p) return;
        this.pending.delete(m.id);
        if (m.error) p.reject(new Error(m.error));
        else p.resolve(m.data);
      });
      this.procs.push(child);
    }
  }

  get pids(): number[] {
    return this.procs.map((p) => p.pid ?? 0);
  }

  private send<T>(proc: ChildProcess, msg: Record<string, unknown>): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      proc.send({ ...msg, id });
    });
  }

  /** Sends the same command to every generator, each with its own share of `ids` for init. */
  all<T>(msg: Record<string, unknown>): Promise<T[]> {
    return Promise.all(this.procs.map((p) => this.send<T>(p, msg)));
  }

  init(ids: string[], urls: string[], token: string): Promise<unknown[]> {
    const per = Math.ceil(ids.length / this.procs.length);
    return Promise.all(this.procs.map((p, i) => this.send(p, { cmd: 'init', ids: ids.slice(i * per, (i + 1) * per), urls, token })));
  }

  async stop(): Promise<void> {
    await Promise.race([this.all({ cmd: 'stop' }).catch(() => undefined), new Promise((r) => setTimeout(r, 2000))]);
    for (const p of this.procs) if (p.exitCode == null) p.kill('SIGKILL');
  }
}
