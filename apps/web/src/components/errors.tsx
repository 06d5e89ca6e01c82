'use client';

import { TRPCClientError } from '@trpc/client';
import type { AppRouter } from '@/server/routers/app';

export interface ShownError {
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

/**
 * The store's typed refusal as it came (code and message), or the transport's error code
 * when the failure happened before the store (not signed in, bad input, network).
 */
export function describeError(error: unknown): ShownError {
  if (error instanceof TRPCClientError) {
    const e = error as TRPCClientError<AppRouter>;
    const fenceline = e.data?.fenceline;
    if (fenceline) return { code: fenceline.code, message: fenceline.message, details: fenceline.details };
    const code = e.data?.code ?? 'ERROR';
    const message = e.message.startsWith(`${code}: `) ? e.message.slice(code.length + 2) : e.message;
    return { code, message };
  }
  if (error instanceof Error) return { code: 'ERROR', message: error.message };
  return { code: 'ERROR', message: String(error) };
}

export function ErrorBox({ error, what }: { error: unknown; what?: string }) {
  if (!error) return null;
  const shown = describeError(error);
  const cleaned = shown.message.startsWith(`${shown.code}: `) ? shown.message.slice(shown.code.length + 2) : shown.message;
  return (
    <div className="error-box" role="alert" data-testid="api-error" data-code={shown.code}>
      <span className="error-code">{shown.code}</span>
      <span className="error-message">
        {what ? <strong>{what}: </strong> : null}
        {cleaned}
      </span>
    </div>
  );
}
