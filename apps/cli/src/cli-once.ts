import { randomBytes } from 'node:crypto';
import { FencelineError } from '@fenceline/core';
import { UsageError } from './cli-args';
import { osUser } from './cli-people';

/**
 * A CLI write that must happen once (trigger, cancel, clear, retry, mark) always carries a
 * request key: the one given with --idempotency-key, else a new random one. A request that
 * gets no answer, or an answer that says the server could not finish it, is sent again with
 * the same key, so a retry never queues a second run; and when it still fails the CLI prints
 * the key, so the operator's own retry of the command can say it too.
 */

/** How many times a request is sent in all before the CLI gives up. */
export const SEND_TRIES = 3;
/** The wait before the second try; it doubles for each try after. */
export const FIRST_RETRY_DELAY_MS = 500;

/**
 * Who holds the keys the CLI sends straight to the store: its OS user, as the run actions
 * and backfills it requests name it. Over the HTTP API the key is the token owner's instead.
 */
export function cliKeyOwner(): string {
  return `cli:${osUser()}`;
}

/** The key given on the command line, or a new one when none was. */
export function requestKeyOf(given: string | undefined): string {
  return given ?? `cli-${randomBytes(12).toString('hex')}`;
}

export interface SendOnceOptions<T> {
  key: string;
  /** Sends the request with `key`. */
  send: (key: string) => Promise<T>;
  /** Whether a failure may have left the request unanswered or unfinished, so sending it again with the key is safe and may succeed. */
  transient: (err: unknown) => boolean;
  /** The command line an operator would repeat, for the hint printed when every try failed. */
  command: string;
  tries?: number;
  firstDelayMs?: number;
  sleep?: (ms: number) => Promise<void>;
  warn?: (line: string) => void;
}

/** Sends a keyed request, again with the same key after a transient failure; the last failure is thrown after the hint is printed. */
export async function sendOnce<T>(o: SendOnceOptions<T>): Promise<T> {
  const tries = o.tries ?? SEND_TRIES;
  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const warn = o.warn ?? ((line: string) => console.error(line));
  let delayMs = o.firstDelayMs ?? FIRST_RETRY_DELAY_MS;
  for (let attempt = 1; ; attempt++) {
    try {
      return await o.send(o.key);
    } catch (err) {
      if (!o.transient(err)) throw err;
      if (attempt >= tries) {
        warn(`sent ${tries} times with idempotency key ${o.key} and not answered; it may have been applied. To repeat it without doing it twice:`);
        warn(`  ${withKey(o.command, o.key)}`);
        throw err;
      }
      await sleep(delayMs);
      delayMs *= 2;
    }
  }
}

/** The command line with `--idempotency-key KEY`, added unless it is there already. */
export function withKey(command: string, key: string): string {
  return command.includes('--idempotency-key') ? command : `${command} --idempotency-key ${key}`;
}

/**
 * Whether a keyed write against the store failed on the way (the connection, the server)
 * rather than being refused: a typed refusal or a usage error is final, anything else may
 * have left the write unanswered, and the key makes sending it again safe.
 */
export function lostInTransit(err: unknown): boolean {
  return !(err instanceof FencelineError) && !(err instanceof UsageError);
}

/** The command as an operator would type it again (with the same --url and token, which stay out of it). */
export function commandLine(command: string, args: string[]): string {
  return ['npm run fenceline --', command, ...args.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`))].join(' ');
}
