import { createHash, randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * Passwords and secrets, shared by the console, the CLI and `npm start`. A password is kept
 * only as a salted scrypt hash with its parameters; a session or API token secret is kept
 * only as its SHA-256 (the secret has 256 random bits, so a fast hash cannot be reversed).
 */

/** scrypt cost: 2^15 × 8 × 128 bytes = 32 MiB of memory per hash, some tens of milliseconds. */
const SCRYPT = { N: 2 ** 15, r: 8, p: 1 } as const;
const KEY_BYTES = 32;
/** Room above the 32 MiB the parameters need (Node's default cap is exactly 32 MiB). */
const MAX_MEM = 96 * 1024 * 1024;

export const MIN_PASSWORD_LENGTH = 12;
export const MAX_PASSWORD_LENGTH = 1024;

function derive(password: string, salt: Buffer, params: { N: number; r: number; p: number }): Promise<Buffer> {
  const options: ScryptOptions = { N: params.N, r: params.r, p: params.p, maxmem: MAX_MEM };
  return new Promise((resolve, reject) => scrypt(password.normalize('NFC'), salt, KEY_BYTES, options, (err, key) => (err ? reject(err) : resolve(key))));
}

/** `scrypt$N$r$p$salt$hash`, salt and hash in base64url. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, SCRYPT);
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/**
 * Whether the password matches the stored hash, compared in constant time. A malformed or
 * foreign hash matches nothing. With `stored` null (no such user) it still spends one hash,
 * so the time taken does not tell whether the name exists.
 */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const parts = (stored ?? '').split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') {
    await derive(password, Buffer.alloc(16), SCRYPT);
    return false;
  }
  const [N, r, p] = parts.slice(1, 4).map(Number) as [number, number, number];
  if (![N, r, p].every((n) => Number.isSafeInteger(n) && n > 0) || N > 2 ** 20 || r > 32 || p > 16) return false;
  const expected = Buffer.from(parts[5]!, 'base64url');
  const key = await derive(password, Buffer.from(parts[4]!, 'base64url'), { N, r, p });
  return expected.length === key.length && timingSafeEqual(expected, key);
}

/** Why a new password is refused, or null. */
export function passwordProblem(password: string): string | null {
  if (password.length < MIN_PASSWORD_LENGTH) return `must be at least ${MIN_PASSWORD_LENGTH} characters`;
  if (password.length > MAX_PASSWORD_LENGTH) return `must be at most ${MAX_PASSWORD_LENGTH} characters`;
  return null;
}

/** A fresh random secret: 32 bytes in base64url, with a prefix that says what it is. */
export function newSecret(prefix: 'fls' | 'flt' | 'flp'): string {
  return `${prefix}_${randomBytes(32).toString('base64url')}`;
}

/** What the store keeps of a secret (a session, an API token, a worker credential): its hex SHA-256. */
export function secretHash(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}
