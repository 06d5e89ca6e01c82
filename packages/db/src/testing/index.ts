/**
 * Test support: bulk inserts that fill a database for the console's load and layout tests,
 * in one statement per batch instead of one Store call per row, and a TCP relay that breaks
 * connections as a lost server does. Nothing in the product imports this entry; the
 * console reads through @fenceline/db/console, which only reads.
 */
export { seedDags, seedRunGrid } from './seed';
export { TcpRelay } from './tcp-relay';
