/**
 * The store contract, one file per role: each holds its role's interface and the values
 * its operations take and give back, and shared.ts the few every role uses (the store's
 * clock, the leader token and the lease reference). `Store` (store.ts) is every role at
 * once; NodeStore (node-store.ts) is what a scheduler node uses.
 */
export * from './shared';
export * from './cluster';
export * from './catalogue';
export * from './run-actions';
export * from './run-reads';
export * from './leader';
export * from './worker-protocol';
export * from './worker-credentials';
export * from './event-log';
export * from './notices';
export * from './people';
export * from './audit';
export * from './audit-entry';
export * from './resource-limits';
export * from './notifications';
export * from './notification-leader';
export * from './store';
export * from './node-store';
