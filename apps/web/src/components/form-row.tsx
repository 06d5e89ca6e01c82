'use client';

import type { ReactNode } from 'react';

/**
 * The console's one-line form: its fields and button side by side, wrapping on a narrow
 * screen. Submitting it (the button or Enter) calls `onSubmit` and never reloads the page.
 */
export function FormRow({ onSubmit, testId, className, children }: { onSubmit: () => void; testId?: string; className?: string; children: ReactNode }) {
  return (
    <form
      className={className ? `field-row ${className}` : 'field-row'}
      data-testid={testId}
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit();
      }}
    >
      {children}
    </form>
  );
}
