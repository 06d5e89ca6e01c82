import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { LABEL_CHARACTERS, LABEL_PATTERN, MAX_LABELS, poolProblem, workerIdProblem, workerTokenPool, type WorkerId } from '@fenceline/core';
import type { ShellPolicy } from './handlers/shell';

export interface WorkerConfig {
  workerId: WorkerId;
  slots: number;
  /** The pool it serves and its labels (its job types follow from shell and the tasks module). */
  pool: string;
  labels: string[];
  schedulerUrls: string[];
  token: string;
  shell: ShellPolicy;
  /** How long a poll may wait on a node before it is asked again. */
  pollWaitMs: number;
  /**
   * How long a request to a node may go unanswered (a poll: this beyond its wait) before the
   * worker gives up on it and sends it again, to that node or another.
   */
  requestTimeoutMs: number;
  /** How long graceful shutdown lets running jobs finish before handing them back. */
  shutdownGraceMs: number;
  tasksModule: string | null;
}

/** Reads the worker's settings from the environment (see docs/configuration.md). */
export function readWorkerConfig(env: NodeJS.ProcessEnv = process.env): WorkerConfig {
  const urls = (env.FENCELINE_SCHEDULER_URLS ?? 'http://127.0.0.1:7400')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const url of urls) if (!/^https?:\/\//.test(url)) throw new Error(`FENCELINE_SCHEDULER_URLS: "${url}" is not an http(s) URL`);
  const token = env.FENCELINE_WORKER_TOKEN ?? '';
  if (token.length < 16) throw new Error("FENCELINE_WORKER_TOKEN must be set to this worker's credential (fenceline worker-token create) or, in development mode, the fleet token");
  const slots = Number(env.FENCELINE_WORKER_SLOTS ?? 4);
  if (!Number.isInteger(slots) || slots < 1 || slots > 10_000) throw new Error(`FENCELINE_WORKER_SLOTS must be an integer from 1 to 10000, got "${env.FENCELINE_WORKER_SLOTS}"`);
  // The schedulers refuse every call from an id outside the shared rule, so a bad one stops the worker here, named.
  // An issued credential (flw.<pool>.<secret>) acts only as ids of its pool, so the default id starts with it.
  const credentialPool = workerTokenPool(token);
  const workerId = env.FENCELINE_WORKER_ID || `${credentialPool ?? 'worker'}-${hostname()}-${randomUUID().slice(0, 8)}`;
  const idProblem = workerIdProblem(workerId);
  if (idProblem !== null) throw new Error(`FENCELINE_WORKER_ID ${idProblem}, got "${workerId}"`);
  // A credential serves its own pool only (the schedulers refuse any other), so that is the default.
  const servedPool = env.FENCELINE_WORKER_POOL || credentialPool || 'default';
  const poolIssue = poolProblem(servedPool);
  if (poolIssue !== null) throw new Error(`FENCELINE_WORKER_POOL ${poolIssue}, got "${servedPool}"`);
  if (credentialPool !== null && servedPool !== credentialPool) {
    throw new Error(`FENCELINE_WORKER_POOL is "${servedPool}", but this credential serves pool "${credentialPool}" only; leave it unset or use a credential of that pool`);
  }
  const labels = (env.FENCELINE_WORKER_LABELS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const label of labels) if (!LABEL_PATTERN.test(label)) throw new Error(`FENCELINE_WORKER_LABELS: "${label}" ${LABEL_CHARACTERS}`);
  if (labels.length > MAX_LABELS) throw new Error(`FENCELINE_WORKER_LABELS may hold at most ${MAX_LABELS} labels, got ${labels.length}`);
  const rawTimeout = env.FENCELINE_REQUEST_TIMEOUT_MS;
  const requestTimeoutMs = rawTimeout == null || rawTimeout === '' ? 30_000 : Number(rawTimeout);
  if (rawTimeout && (!/^\s*\d+\s*$/.test(rawTimeout) || !Number.isSafeInteger(requestTimeoutMs) || requestTimeoutMs < 1000)) {
    throw new Error(`FENCELINE_REQUEST_TIMEOUT_MS must be a whole number of milliseconds, at least 1000, got "${rawTimeout}"`);
  }
  return {
    workerId: workerId as WorkerId,
    slots,
    pool: servedPool,
    labels,
    schedulerUrls: urls,
    token,
    shell: {
      allowed: env.FENCELINE_ALLOW_SHELL === '1' || env.FENCELINE_ALLOW_SHELL === 'true',
      allowedEnv: (env.FENCELINE_SHELL_ALLOWED_ENV ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
      cwdRoot: env.FENCELINE_SHELL_CWD ?? process.cwd(),
      killGraceMs: Number(env.FENCELINE_SHELL_KILL_GRACE_MS ?? 5000),
    },
    pollWaitMs: Number(env.FENCELINE_POLL_WAIT_MS ?? 25_000),
    requestTimeoutMs,
    shutdownGraceMs: Number(env.FENCELINE_SHUTDOWN_GRACE_MS ?? 30_000),
    tasksModule: env.FENCELINE_TASKS_MODULE || null,
  };
}
