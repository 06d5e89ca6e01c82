'use client';

import { useSyncExternalStore } from 'react';

const DARK = '(prefers-color-scheme: dark)';

function subscribe(onChange: () => void): () => void {
  const query = window.matchMedia(DARK);
  query.addEventListener('change', onChange);
  return () => query.removeEventListener('change', onChange);
}

/**
 * The system's colour scheme, for React Flow's colorMode. React Flow's own "system" mode
 * picks light on the server and dark in the browser's first render, and that class
 * mismatch is never repaired after hydration, so a dark page kept light controls and a
 * light minimap. Here the first render matches the server's and the browser's answer
 * follows as an ordinary update.
 */
export function useColorMode(): 'light' | 'dark' {
  return useSyncExternalStore(
    subscribe,
    () => (window.matchMedia(DARK).matches ? 'dark' : 'light'),
    () => 'light',
  );
}
