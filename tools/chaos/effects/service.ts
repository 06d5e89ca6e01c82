import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Sql } from 'postgres';
import { fenceGuard, postgresFenceStore } from '@fenceline/effects';

/** One effect the service applied, in the order it applied them. */
export interface ServiceEffect {
  route: 'guarded' | 'naive';
  key: string;
  fence: number;
}

/**
 * The user's service the soak's jobs call: `/guarded` behind the receiver guard (its fences
 * kept in the user's database), `/naive` without it. Each applies its effect by appending
 * it to `applied`, which the audit counts.
 */
export async function startUserService(sql: Sql): Promise<{ url: string; applied: ServiceEffect[]; close(): Promise<void> }> {
  const applied: ServiceEffect[] = [];
  const guard = fenceGuard({ store: postgresFenceStore(sql, { table: 'service_fences' }) });
  const apply = (route: ServiceEffect['route'], req: IncomingMessage, res: ServerResponse) => {
    applied.push({ route, key: String(req.headers['x-fenceline-effect-key']), fence: Number(req.headers['x-fenceline-fence']) });
    res.end('applied');
  };
  const server: Server = createServer((req, res) => {
    if (req.method === 'POST' && req.url === '/guarded') return guard(req, res, () => apply('guarded', req, res));
    if (req.method === 'POST' && req.url === '/naive') return apply('naive', req, res);
    res.statusCode = 404;
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    applied,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
