import { connect, withDatabase } from './client';

/**
 * Creating and dropping whole databases, for tests that each want a fresh one (so test
 * files can run in parallel and CI starts from nothing every time).
 */

function quoteIdent(name: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(name)) throw new Error(`unsafe database name: ${name}`);
  return `"${name}"`;
}

/** Creates database `name` through `adminUrl` and returns a URL for it (same server and credentials). */
export async function createDatabase(adminUrl: string, name: string): Promise<string> {
  const admin = connect(adminUrl, { max: 1 });
  try {
    await admin.unsafe(`create database ${quoteIdent(name)}`);
  } finally {
    await admin.end({ timeout: 5 });
  }
  return withDatabase(adminUrl, name);
}

/** Drops database `name`, closing any connection still open to it. */
export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  const admin = connect(adminUrl, { max: 1 });
  try {
    await admin.unsafe(`drop database if exists ${quoteIdent(name)} with (force)`);
  } finally {
    await admin.end({ timeout: 5 });
  }
}
