import path from 'node:path';
import { defineConfig } from 'drizzle-kit';

// Paths are resolved from this file so `drizzle-kit generate` works from the repository
// root (npm run db:generate) and from packages/db alike.
const here = path.resolve(process.cwd(), process.cwd().endsWith(path.join('packages', 'db')) ? '.' : 'packages/db');
const tables = ['dags', 'runs', 'results', 'shards', 'workers', 'events'];

export default defineConfig({
  dialect: 'postgresql',
  schema: tables.map((name) => path.join(here, 'src', 'schema', `${name}.ts`)),
  out: path.join(here, 'migrations'),
  dbCredentials: { url: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
  strict: true,
  verbose: true,
});
