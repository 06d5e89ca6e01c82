import { InvalidInputError, poolProblem } from '@fenceline/core';
import { type AuditStore, type WorkerCredentialStore } from '@fenceline/core/store';
import { cliAudit } from './cli-people';
import { issueWorkerToken } from '@fenceline/db/worker-credentials';

/** The `worker-token` commands' lines of the CLI's help. */
export const WORKER_TOKEN_HELP = `  worker-token create --pool NAME  issue a worker credential for pool NAME; prints its token once
                                   (its workers must be named NAME or NAME-...)
  worker-token list                the credentials: id, pool, created, last used, revoked
  worker-token revoke <ID>         revoke a credential at once (every scheduler refuses it)`;

/**
 * Worker credentials, for an operator: `create` prints the token once and stores only its
 * hash; `list` never shows a secret; `revoke` takes effect on every scheduler at once.
 * Rotation is create, restart the pool's workers with the new token, then revoke the old.
 * Creating and revoking go into the audit log, as every change the CLI makes does.
 */
export async function workerTokenCommand(store: WorkerCredentialStore & AuditStore, args: string[], flag: (name: string) => string | undefined): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'create': {
      const pool = flag('--pool');
      if (!pool) throw new InvalidInputError('pool: worker-token create needs --pool NAME', { field: 'pool' });
      const problem = poolProblem(pool);
      if (problem !== null) throw new InvalidInputError(`pool: ${problem}, got "${pool}"`, { field: 'pool', problem });
      // A credential acts as ids "P" and "P-...", so two pools one of which is the other's
      // name and a "-" would both act as the longer one's worker ids.
      const overlap = (await store.listWorkerCredentials()).find(
        (r) => r.revokedAt === null && r.pool !== pool && (pool.startsWith(`${r.pool}-`) || r.pool.startsWith(`${pool}-`)),
      );
      if (overlap) {
        throw new InvalidInputError(
          `pool: "${pool}" would share worker ids with pool "${overlap.pool}" (credential ${overlap.id}): ids "${pool.length > overlap.pool.length ? pool : overlap.pool}-..." would belong to both; choose a pool name that is not the other's name and a "-" longer or shorter`,
          { field: 'pool', conflictsWith: overlap.pool },
        );
      }
      const issued = issueWorkerToken(pool);
      const row = await store.createWorkerCredential({ id: issued.id, pool, secretHash: issued.secretHash });
      await cliAudit(store, { action: 'worker_token.created', target: row.id, details: { pool } });
      console.log(`created worker credential ${row.id} for pool ${pool}`);
      console.log(`token (shown only now): ${issued.token}`);
      console.log(`its workers set FENCELINE_WORKER_TOKEN to it and are named ${pool} or ${pool}-...`);
      return 0;
    }
    case 'list': {
      const rows = await store.listWorkerCredentials();
      const fmt = (d: Date | null) => (d ? d.toISOString().replace('.000Z', 'Z') : '-');
      console.table(rows.map((r) => ({ id: r.id, pool: r.pool, created: fmt(r.createdAt), lastUsed: fmt(r.lastUsedAt), revoked: fmt(r.revokedAt) })));
      return 0;
    }
    case 'revoke': {
      const id = rest.find((a) => !a.startsWith('--'));
      if (!id) throw new InvalidInputError('id: worker-token revoke needs the credential id (see worker-token list)', { field: 'id' });
      const row = await store.revokeWorkerCredential({ id });
      await cliAudit(store, { action: 'worker_token.revoked', target: row.id, details: { pool: row.pool } });
      console.log(`revoked worker credential ${row.id} (pool ${row.pool}) at ${row.revokedAt?.toISOString()}`);
      return 0;
    }
    default:
      throw new InvalidInputError(`command: worker-token takes create, list or revoke, got "${sub ?? ''}"`, { field: 'command' });
  }
}
