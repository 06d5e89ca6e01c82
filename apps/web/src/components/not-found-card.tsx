'use client';

import Link from 'next/link';
import type { ReactNode } from 'react';
import { describeError } from './errors';
import { Card } from './ui';

/**
 * What a detail page shows when the store answers NOT_FOUND: that the thing does not exist,
 * the store's own message, and the way back to where such things are listed. The page shows
 * this instead of its empty layout, so nothing on it suggests there is something to watch.
 */
export function NotFoundCard({ title, error, back }: { title: ReactNode; error: unknown; back: { href: string; label: string } }) {
  const shown = describeError(error);
  return (
    <Card>
      <div className="empty" role="alert" data-testid="not-found" data-code={shown.code}>
        <h2>{title}</h2>
        <p className="muted">
          <span className="error-code">{shown.code}</span> {shown.message}
        </p>
        <Link href={back.href} data-testid="not-found-back">
          ← {back.label}
        </Link>
      </div>
    </Card>
  );
}
