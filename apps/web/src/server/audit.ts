import type { AuditAction, AuditRow } from '@fenceline/core/store';
import type { Context } from './context';
import type { ConsoleStore } from './store';

/**
 * Records a change the caller just made: who (the user, and the token if one was used),
 * from where (client address and user agent), what. Store time stamps it. Called after the
 * change succeeded, so a refused change leaves no entry.
 */
export function auditChange(
  store: ConsoleStore,
  ctx: Pick<Context, 'principal' | 'source' | 'userAgent'>,
  change: { action: AuditAction; dagId?: string | null; target?: string | null; details?: Record<string, unknown> },
): Promise<AuditRow> {
  const principal = ctx.principal;
  const details = principal?.tokenId ? { ...change.details, tokenId: principal.tokenId } : (change.details ?? {});
  return store.appendAudit({
    actorKind: principal === null ? 'system' : principal.tokenId ? 'token' : 'user',
    actor: principal?.user.name ?? 'anonymous',
    action: change.action,
    dagId: change.dagId ?? null,
    target: change.target ?? null,
    details,
    source: ctx.source,
    userAgent: ctx.userAgent,
  });
}
