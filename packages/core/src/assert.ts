/**
 * A broken assumption of the code itself, not a refusal of input: it names what the code
 * relied on so the failure is found where it happens, not several steps later.
 */
export class AssertionError extends Error {
  constructor(message: string) {
    super(`assertion failed: ${message}`);
    this.name = 'AssertionError';
  }
}

/** Throws an AssertionError saying `message` unless `condition` holds. */
export function assert(condition: unknown, message: string): asserts condition {
  if (!condition) throw new AssertionError(message);
}
