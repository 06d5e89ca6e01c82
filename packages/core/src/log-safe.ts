import { maskUrlsIn } from './notify/mask';

/**
 * What a process may write to its log about an error or a text it did not write itself.
 * A failed statement's error quotes the statement and every parameter it was sent (a
 * channel's URL and secret, a token's hash, another caller's output), and the text of any
 * error may quote a URL or a credential. Every log line of the scheduler, the worker and
 * the console about an error goes through logSafeError, so none of them carries a secret,
 * a token or a whole channel URL.
 */

/** Credentials by their shape: API tokens, worker credentials, webhook secrets, and a Bearer header's value. */
const SECRET_SHAPES: [RegExp, string][] = [
  [/\bflt_[A-Za-z0-9_-]+/g, 'flt_[redacted]'],
  [/\bflw\.([A-Za-z0-9_-]+)\.[A-Za-z0-9_-]+/g, 'flw.$1.[redacted]'],
  [/\bwhsec_[A-Za-z0-9+/=_-]+/g, 'whsec_[redacted]'],
  [/\b(Bearer\s+)\S+/gi, '$1[redacted]'],
];

/** The text with every credential-shaped word replaced and every URL masked to its scheme, host and port. */
export function redactSecrets(text: string): string {
  let out = maskUrlsIn(text);
  for (const [shape, replacement] of SECRET_SHAPES) out = out.replace(shape, replacement);
  return out;
}

/** The marks of a statement's error that quotes its text and parameters (drizzle's DrizzleQueryError). */
const STATEMENT_ERROR = /^Failed query: /;

function causeOf(err: Error): unknown {
  return (err as { cause?: unknown }).cause;
}

/**
 * An error's message for a log: a failed statement's own reason (PostgreSQL's message,
 * which names a problem but not the values sent) instead of the statement and its
 * parameters, and credentials and URLs redacted.
 */
export function logSafeMessage(err: unknown): string {
  if (!(err instanceof Error)) return redactSecrets(String(err));
  if (STATEMENT_ERROR.test(err.message)) {
    const cause = causeOf(err);
    const reason = cause instanceof Error ? cause.message : 'no reason given';
    return redactSecrets(`a store statement failed (its text and parameters are not logged): ${reason}`);
  }
  return redactSecrets(err.message);
}

/**
 * The fields of a log line about an error: its safe message, its name, and the first
 * frames of its stack without the message line (which would repeat what is withheld).
 */
export function logSafeError(err: unknown, frames = 5): { error: string; errorName?: string; stack?: string } {
  if (!(err instanceof Error)) return { error: logSafeMessage(err) };
  const stack = err.stack
    ?.split('\n')
    .filter((line) => /^\s+at /.test(line))
    .slice(0, frames)
    .join('\n');
  return { error: logSafeMessage(err), errorName: err.name, ...(stack ? { stack: redactSecrets(stack) } : {}) };
}
