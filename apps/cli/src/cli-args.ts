import { parseInstant } from '@fenceline/core';

/** Argument helpers shared by the CLI's command files. */

/** A usage mistake: the CLI prints it with its help and exits 2. */
export class UsageError extends Error {}

export function flag(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

export function hasFlag(args: string[], name: string): boolean {
  return args.includes(name);
}

/** Flags that take no value, so `positional` does not swallow the word after them. */
const BARE_FLAGS = new Set(['--password-stdin', '--all', '--downstream', '--success', '--failed', '--yes', '--no-wait', '--oldest']);

export function positional(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i]!.startsWith('--')) {
      if (!BARE_FLAGS.has(args[i]!)) i++;
    } else out.push(args[i]!);
  }
  return out;
}

export function need(value: string | undefined, what: string): string {
  if (!value) throw new UsageError(`missing ${what}`);
  return value;
}

export function fmt(d: Date | null | undefined): string {
  return d ? d.toISOString().replace('.000Z', 'Z') : '-';
}

/** A flag's instant (ISO 8601 with a zone), or INVALID_INPUT naming the flag. */
export function instantFlag(args: string[], name: string): Date | undefined {
  const text = flag(args, name);
  if (text === undefined) return undefined;
  return parseInstant(text, name);
}
