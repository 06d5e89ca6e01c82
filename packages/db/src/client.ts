import postgres from 'postgres';

/**
 * Every connection to the store is made here, so that a multi-host URL of a highly
 * available PostgreSQL means the same thing to every process. A libpq URL such as
 * `postgres://h1:5432,h2:5432/db?target_session_attrs=read-write` asks for the node that
 * accepts writes. postgres.js reads `read-write` as "default_transaction_read_only is
 * off", which a hot standby also says, so after a failover a pool could settle on the
 * standby and have every write refused. The server's own `in_hot_standby` tells a
 * primary from a standby: `read-write` is passed to the driver as `primary`.
 */
export function connect(url: string, options: postgres.Options<Record<string, postgres.PostgresType>> = {}): postgres.Sql {
  return postgres(url, { onnotice: () => {}, backoff: reconnectDelayS, ...options, ...sessionAttrsOf(url) });
}

/**
 * How long, in seconds, a pool connection lost with an error waits before it connects
 * again; `errors` counts the pool's connections lost that way since one last connected.
 * postgres.js's own wait grows as 3^errors / 100 s up to 20 s, and a failover loses every
 * connection of a pool at once: a pool of ten then waited 10 to 20 s before it even tried
 * the promoted standby, and a node's calls waited with it. Here the wait doubles from 50 ms
 * and stops at 1 s, so a pool finds the new primary within a second of its promotion. A
 * host that is down refuses at once, so trying once a second costs next to nothing.
 */
export function reconnectDelayS(errors: number): number {
  return Math.min(0.05 * 2 ** Math.max(errors, 0), 1);
}

function sessionAttrsOf(url: string): { target_session_attrs?: 'primary' } {
  const query = url.includes('?') ? url.slice(url.indexOf('?') + 1) : '';
  const wanted = new URLSearchParams(query).get('target_session_attrs');
  return wanted === 'read-write' ? { target_session_attrs: 'primary' } : {};
}

/**
 * The same server list, credentials and options with another database: `new URL` cannot
 * parse a host list, so the path is replaced in the text.
 */
export function withDatabase(url: string, name: string): string {
  const match = /^(postgres(?:ql)?:\/\/[^/?#]*)(\/[^?#]*)?(.*)$/.exec(url);
  if (!match) throw new Error('the database URL must start with postgres:// or postgresql://');
  return `${match[1]}/${encodeURIComponent(name)}${match[3] ?? ''}`;
}

/** The database a URL names (`postgres` when it names none). */
export function databaseOf(url: string): string {
  const match = /^postgres(?:ql)?:\/\/[^/?#]*\/([^?#]*)/.exec(url);
  return match?.[1] ? decodeURIComponent(match[1]) : 'postgres';
}
