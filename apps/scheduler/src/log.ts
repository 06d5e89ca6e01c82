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

export function errorFields(err: unknown): Record<string, unknown> {
  if (err instanceof Error) return { error: err.message, errorName: err.name, stack: err.stack?.split('\n').slice(0, 5).join('\n') };
  return { error: String(err) };
}
