import { accessSync, constants, statSync } from 'node:fs';

/** The browser the console's tests drive: CHROMIUM_PATH, else Debian's Chromium. */
export function chromiumPath(): string {
  return process.env.CHROMIUM_PATH || '/usr/bin/chromium';
}

/**
 * Why the browser cannot run, as one line saying how to fix it; null when it can. Checked
 * before anything is built or started, so a machine without Chromium learns it at once.
 */
export function missingChromium(): string | null {
  const file = chromiumPath();
  try {
    accessSync(file, constants.X_OK);
    if (statSync(file).isFile()) return null;
  } catch {
    // Missing or not executable: said below.
  }
  const where = process.env.CHROMIUM_PATH ? `CHROMIUM_PATH=${file}` : file;
  return `e2e: no Chromium executable at ${where}; install it with \`apt-get install -y chromium\`, or set CHROMIUM_PATH to a Chromium binary`;
}
