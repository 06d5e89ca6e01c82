import path from 'node:path';
import { defineConfig } from 'drizzle-kit';

// drizzle-kit wants paths relative to the working directory, and this config is used both
// from the repository root (npm run db:generate) and from packages/db (npx drizzle-kit generate).
const here = process.cwd().endsWith(path.join('packages', 'db')) ? '.' : path.join('packages', 'db');
/** One file per aggregate; schema/index.ts only re-exports them and is left out. */
const tables = ['dags', 'runs', 'results', 'shards', 'workers', 'events', 'lineage', 'people', 'audit', 'actions', 'backfills', 'resources', 'notifications'];

export default defineConfig({
  dialect: 'postgresql',
  schema: tables.map((name) => `./${path.join(here, 'src', 'schema', `${name}.ts`)}`),
  out: `./${path.join(here, 'migrations')}`,
  dbCredentials: { url: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres' },
  strict: true,
  verbose: true,
});
