export { openStore, type OpenStoreOptions } from './connect';
export { sqlStore, type SqlStore } from './store/sql-store';
export type { Db } from './store/db';
export { startEmbeddedPostgres, resolveDatabaseUrl, DEFAULT_DATA_DIR, type EmbeddedPostgresOptions, type EmbeddedServer } from './embedded';
export { createDatabase, dropDatabase } from './admin';
export { acquireServer, answers, DEFAULT_SERVER_URL, type AcquiredServer, type AcquireServerOptions, type ServerSource } from './acquire-server';
export { migrateDatabase, MIGRATIONS_FOLDER } from './migrate';
export * from './schema/index';
