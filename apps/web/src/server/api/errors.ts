import { TRPCError } from '@trpc/server';
import { isFencelineError } from '@fenceline/core';
import { z } from 'zod';
import { opaqueMessage } from '../opaque-errors';

/** One problem of a refused request, naming the field it is about (`params.batch`, `tasks.0.id`, `Idempotency-Key`). */
export const apiIssueSchema = z.object({ field: z.string(), message: z.string() });
export type ApiIssue = z.infer<typeof apiIssueSchema>;

/** The codes an answer of the HTTP API may carry: the store's typed refusals, and INTERNAL for anything else. */
export const API_ERROR_CODES = [
  'INVALID_INPUT',
  'INVALID_DAG',
  'UNAUTHORIZED',
  'FORBIDDEN',
  'NOT_FOUND',
  'TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'KEY_REUSED',
  'CONFLICT',
  'STALE_FENCE',
  'FORGED_FENCE',
  'LEASE_LOST',
  'DEPOSED_LEADER',
  'INTERNAL',
] as const;
export type ApiErrorCode = (typeof API_ERROR_CODES)[number];

/** The one shape every refusal of the HTTP API has. */
export const apiErrorSchema = z.object({
  code: z.enum(API_ERROR_CODES),
  message: z.string(),
  issues: z.array(apiIssueSchema).optional(),
});
export type ApiErrorBody = z.infer<typeof apiErrorSchema>;

const STATUS: Record<ApiErrorCode, number> = {
  INVALID_INPUT: 400,
  INVALID_DAG: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  KEY_REUSED: 422,
  CONFLICT: 409,
  STALE_FENCE: 409,
  FORGED_FENCE: 409,
  LEASE_LOST: 409,
  DEPOSED_LEADER: 409,
  INTERNAL: 500,
};

/** A refusal the API makes itself, before any procedure or store call. */
export class ApiRefusal extends Error {
  constructor(
    readonly code: ApiErrorCode,
    message: string,
    readonly issues?: ApiIssue[],
  ) {
    super(message);
  }
}

export function errorResponse(body: ApiErrorBody): Response {
  return Response.json(body, { status: STATUS[body.code], headers: { 'cache-control': 'no-store' } });
}

/**
 * The issues of a refusal, whichever layer listed them: a schema's (`path`), a DAG spec's
 * (`path` and `message`), a param check's (`field` and `message`) or a run action's check
 * (`field` and `problem`). A refusal that names one field and lists nothing names that field.
 */
function issuesOf(details: Record<string, unknown>, message: string): ApiIssue[] | undefined {
  const listed = details.issues;
  if (Array.isArray(listed) && listed.length > 0) {
    return listed.map((raw: Record<string, unknown>) => {
      const path = raw.path;
      const field = typeof raw.field === 'string' ? raw.field : Array.isArray(path) ? path.map(String).join('.') : typeof path === 'string' ? path : '';
      const text = typeof raw.message === 'string' ? raw.message : typeof raw.problem === 'string' ? raw.problem : 'invalid';
      return { field: field === '' ? 'body' : field, message: text };
    });
  }
  if (typeof details.field === 'string') return [{ field: details.field, message }];
  return undefined;
}

/**
 * A schema's issues as the API names them: the field's dotted path, or `where` (`body`,
 * `query`, `Idempotency-Key`) for the input as a whole; a key no schema knows is named itself.
 */
export function zodIssues(error: z.ZodError, where = 'body'): ApiIssue[] {
  return error.issues.flatMap((i) => {
    const path = i.path.map(String).join('.');
    if (i.code === 'unrecognized_keys') return i.keys.map((key) => ({ field: path === '' ? key : `${path}.${key}`, message: 'is not a known field' }));
    return [{ field: path === '' ? where : path, message: i.message }];
  });
}

/**
 * Any error a handler met, as the answer the caller gets. A typed refusal keeps its code,
 * message and issues; a refusal of the console's procedures keeps its words; anything else
 * (a failed statement, a bug) is answered with an opaque id only, and its detail is logged
 * under that id, as the console does (opaque-errors.ts).
 */
export function answerForError(err: unknown, path: string): Response {
  if (err instanceof ApiRefusal) return errorResponse({ code: err.code, message: err.message, ...(err.issues ? { issues: err.issues } : {}) });
  const cause = err instanceof TRPCError ? err.cause : err;
  // The store names the key as its own field; the API's caller sent it as a header, so the answer names the header.
  if (isFencelineError(cause) && cause.code === 'KEY_REUSED') return errorResponse(keyReused());
  if (isFencelineError(cause)) {
    const issues = issuesOf(cause.details, cause.message);
    return errorResponse({ code: cause.code, message: cause.message, ...(issues ? { issues } : {}) });
  }
  if (err instanceof TRPCError) {
    if (cause instanceof z.ZodError) {
      const issues = zodIssues(cause);
      return errorResponse({ code: 'INVALID_INPUT', message: issues.map((i) => `${i.field}: ${i.message}`).join('; '), issues });
    }
    if (err.code === 'UNAUTHORIZED' || err.code === 'FORBIDDEN') return errorResponse({ code: err.code, message: err.message.replace(/^[A-Z_]+: /, '') });
    const opaque = opaqueMessage(err, path);
    if (opaque === null && err.code === 'BAD_REQUEST') return errorResponse({ code: 'INVALID_INPUT', message: err.message });
    return errorResponse({ code: 'INTERNAL', message: opaque ?? 'internal error' });
  }
  const wrapped = new TRPCError({ code: 'INTERNAL_SERVER_ERROR', cause: err });
  return errorResponse({ code: 'INTERNAL', message: opaqueMessage(wrapped, path) ?? 'internal error' });
}

/** The answer to an Idempotency-Key its caller already used for a different request. */
export function keyReused(): ApiErrorBody {
  const message = 'this key was already used by this caller for a different request (another body or target); send a new key with a new request';
  return { code: 'KEY_REUSED', message: `Idempotency-Key: ${message}`, issues: [{ field: 'Idempotency-Key', message }] };
}

/** The answer to an Idempotency-Key whose first request is still being answered. */
export function keyInFlight(): ApiRefusal {
  const message = 'a request with this key is still being answered; send it again once that one is answered';
  return new ApiRefusal('CONFLICT', `Idempotency-Key: ${message}`, [{ field: 'Idempotency-Key', message }]);
}
