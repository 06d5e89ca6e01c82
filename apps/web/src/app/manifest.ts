import type { MetadataRoute } from 'next';

/** Lets the console be installed as an app in its own window (Chromium "Install app"). */
export default function manifest(): MetadataRoute.Manifest {
  return {
    name: 'fenceline console',
    short_name: 'fenceline',
    description: 'Live DAGs, runs, shard leaders, workers and fair share of a fenceline cluster',
    start_url: '/',
    scope: '/',
    display: 'standalone',
    background_color: '#0f1218',
    theme_color: '#0f1218',
    icons: [
      { src: '/icon.svg', sizes: 'any', type: 'image/svg+xml', purpose: 'any' },
      { src: '/icon-192.png', sizes: '192x192', type: 'image/png', purpose: 'any' },
      { src: '/icon-512.png', sizes: '512x512', type: 'image/png', purpose: 'maskable' },
    ],
  };
}
