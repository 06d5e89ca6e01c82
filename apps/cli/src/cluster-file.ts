import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root, where `npm start` keeps its data unless FENCELINE_DATA_DIR says otherwise. */
const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** What `npm start` records about the running embedded cluster, so the CLI can find it. */
export interface ClusterFile {
  databaseUrl: string;
  workerToken: string;
  schedulerUrls: string[];
  consoleUrl?: string;
  pid: number;
}

export const DATA_DIR = process.env.FENCELINE_DATA_DIR ?? join(REPO_ROOT, '.data');
const FILE = join(DATA_DIR, 'cluster.json');

export async function readClusterFile(): Promise<ClusterFile | null> {
  try {
    return JSON.parse(await readFile(FILE, 'utf8')) as ClusterFile;
  } catch {
    return null;
  }
}

export async function writeClusterFile(value: ClusterFile): Promise<void> {
  await mkdir(DATA_DIR, { recursive: true });
  await writeFile(FILE, JSON.stringify(value, null, 2) + '\n', { mode: 0o600 });
}

/** Secrets survive restarts so workers and bookmarks keep working. */
export async function readSecrets(): Promise<Record<string, string>> {
  try {
    return JSON.parse(await readFile(join(DATA_DIR, 'secrets.json'), 'utf8')) as Record<string, string>;
  } catch {
    return {};
  }
}

export async function writeSecrets(value: Record<string, string>): Promise<void> {
  await mkdir(DATA_DIR, { recursive: true });
  await writeFile(join(DATA_DIR, 'secrets.json'), JSON.stringify(value, null, 2) + '\n', { mode: 0o600 });
}
