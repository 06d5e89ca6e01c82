import { logSafeError, type TraceSpan } from '@fenceline/core';

/** Structured JSON logs, one object per line on stdout, so they can be shipped and queried as they are. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  log(level: LogLevel, msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

export function jsonLogger(base: Record<string, unknown>, minLevel: LogLevel = (process.env.FENCELINE_LOG_LEVEL as LogLevel) || 'info'): Logger {
  const order: LogLevel[] = ['debug', 'info', 'warn', 'error'];
  const min = order.indexOf(minLevel);
  return {
    log(level, msg, fields = {}) {
      if (order.indexOf(level) < min) return;
      process.stdout.write(JSON.stringify({ time: new Date().toISOString(), level, msg, ...base, ...fields }) + '\n');
    },
    child(fields) {
      return jsonLogger({ ...base, ...fields }, minLevel);
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
