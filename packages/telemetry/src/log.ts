import { randomBytes } from 'node:crypto';
import { logSafeError, type TraceSpan } from '@fenceline/core';

/**
 * Structured JSON logs, one object per line, so they can be shipped and queried as they
 * are. The scheduler, the worker and the console all write through jsonLogger, so every
 * line of every process has the same shape: time, level, msg, then the logger's fields.
 * This module loads no OpenTelemetry code, so the console can import it alone
 * (`@fenceline/telemetry/log`).
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  log(level: LogLevel, msg: string, fields?: Record<string, unknown>): void;
  /** Whether a line of this level would be written, so a caller can skip building its fields. */
  enabled(level: LogLevel): boolean;
  child(fields: Record<string, unknown>): Logger;
}

const LEVELS: LogLevel[] = ['debug', 'info', 'warn', 'error'];

/** The level FENCELINE_LOG_LEVEL names, info when it names none. */
export function logLevelFromEnv(env: NodeJS.ProcessEnv = process.env): LogLevel {
  const named = env.FENCELINE_LOG_LEVEL as LogLevel | undefined;
  return named !== undefined && LEVELS.includes(named) ? named : 'info';
}

const toStdout = (line: string): void => void process.stdout.write(`${line}\n`);

/** The wall clock a process logs by; the logger takes it as a parameter, so a test or the simulator can pass its own. */
const wallClockMs = (): number => Date.now();

/** A logger that writes `base` on every line at `minLevel` and above, to stdout unless given `write`, stamped by `nowMs`. */
export function jsonLogger(
  base: Record<string, unknown>,
  minLevel: LogLevel = logLevelFromEnv(),
  write: (line: string) => void = toStdout,
  nowMs: () => number = wallClockMs,
): Logger {
  const min = LEVELS.indexOf(minLevel);
  return {
    log(level, msg, fields = {}) {
      if (LEVELS.indexOf(level) < min) return;
      write(JSON.stringify({ time: new Date(nowMs()).toISOString(), level, msg, ...base, ...fields }));
    },
    enabled(level) {
      return LEVELS.indexOf(level) >= min;
    },
    child(fields) {
      return jsonLogger({ ...base, ...fields }, minLevel, write, nowMs);
    },
  };
}

/** An error's fields for a log line: never a statement's parameters, a credential or a whole URL (logSafeError). */
export function errorFields(err: unknown): Record<string, unknown> {
  return logSafeError(err);
}

/**
 * The ids a log line about a job or run carries at its top level, named as the worker's
 * lines name them, so one query finds a job's lines in every process: its job and run
 * ids, and the trace and span ids of its span when tracing is on.
 */
export function jobLogIds(ids: { jobId?: string | null; runId?: string | null }, span?: TraceSpan): Record<string, string> {
  const out: Record<string, string> = {};
  if (ids.jobId) out.job_id = ids.jobId;
  if (ids.runId) out.run_id = ids.runId;
  if (span) {
    out.trace_id = span.traceId;
    out.span_id = span.spanId;
  }
  return out;
}

// One id per error, however many times the answer to it is built.
const opaqueIds = new WeakMap<object, string>();

/**
 * The id an error no caller may see the words of (a failed statement, a bug) is answered
 * with: its message can hold a statement and its parameters, which may be another caller's
 * data, and its stack says how the server is built. The detail is logged once, under the
 * same id, as safe fields only (errorFields), so an operator can find it from what the
 * caller saw. The scheduler's API and the console both answer unexpected errors this way.
 */
export function opaqueErrorId(error: object, log: Logger, msg: string, fields: Record<string, unknown>, detail: unknown): string {
  let id = opaqueIds.get(error);
  if (id === undefined) {
    id = randomBytes(8).toString('hex');
    opaqueIds.set(error, id);
    log.log('error', msg, { errorId: id, ...fields, ...errorFields(detail) });
  }
  return id;
}
