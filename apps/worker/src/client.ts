import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import { errorFromJSON, type FencelineError } from '@fenceline/core';
import type { WorkerRouter } from '@fenceline/scheduler/wire';

export type SchedulerClient = ReturnType<typeof schedulerClient>;

/** A typed client for one scheduler node's worker protocol. */
export function schedulerClient(baseUrl: string, token: string) {
  return createTRPCClient<WorkerRouter>({
    links: [httpLink({ url: `${baseUrl.replace(/\/$/, '')}/trpc`, headers: () => ({ authorization: `Bearer ${token}` }) })],
  });
}

/** The typed refusal inside a tRPC client error, or null for transport failures. */
export function typedRefusal(err: unknown): FencelineError | null {
  if (err instanceof TRPCClientError) {
    const data = err.data as { fenceline?: { code: string; message: string; details?: Record<string, unknown> } } | undefined;
    if (data?.fenceline) return errorFromJSON(data.fenceline);
  }
  return null;
}

/** True when the request never got an answer from the node (down, unreachable, reset). */
export function isUnreachable(err: unknown): boolean {
  return err instanceof TRPCClientError && err.data == null && !(err.shape && typeof err.shape === 'object');
}

/** The wait in ms a node asked for in its answer's Retry-After (whole seconds), or null. */
export function retryAfterOf(err: unknown): number | null {
  if (!(err instanceof TRPCClientError)) return null;
  const response = (err.meta as { response?: { headers?: { get(name: string): string | null } } } | undefined)?.response;
  const raw = response?.headers?.get('retry-after');
  return raw && /^\d+$/.test(raw.trim()) ? Number(raw) * 1000 : null;
}
