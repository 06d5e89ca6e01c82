import { z } from 'zod';
import { checkBoundary, jsonTextDepth, LIMITS, roleAtLeast, type Role } from '@fenceline/core';
import { secretHash } from '@fenceline/db/people';
import { readBodyWithin } from '../body-limit';
import type { Context } from '../context';
import { requestKeySchema } from '../request-key';
import { appRouter } from '../routers/app';
import { clientAddress, servedOverHttps } from '../session';
import { consoleStore, type ConsoleStore } from '../store';
import { answerForError, ApiRefusal, keyInFlight, zodIssues } from './errors';

/** The largest body the API reads: a DAG spec at its limit plus room for the rest. */
export const MAX_API_BODY_BYTES = LIMITS.maxSpecBytes + 64 * 1024;

/** Input nested deeper than this is refused from its text, before it is parsed, as the console's endpoint does. */
const MAX_TEXT_DEPTH = 2 * LIMITS.maxJsonDepth;

type Caller = ReturnType<typeof appRouter.createCaller>;

export interface ApiCall<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  /** The request's Idempotency-Key, checked as the console's request keys are; undefined when it sent none. */
  idempotencyKey: string | undefined;
  ctx: Context;
  /** The console's own procedures, called as this caller, so the API checks and audits exactly what the console does. */
  caller: Caller;
  store: ConsoleStore;
}

export interface Endpoint<P, Q, B> {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** The path as the OpenAPI document writes it, `{id}` for a path parameter. */
  path: string;
  operationId: string;
  summary: string;
  /** The least role that may call it: reads need a viewer, writes an operator. */
  role: Role;
  params?: z.ZodType<P>;
  query?: z.ZodType<Q>;
  body?: z.ZodType<B>;
  /** Whether the document marks its body required (a PUT's always is). */
  bodyRequired?: boolean;
  /** Whether its body names something that may not exist (a DAG, a channel), answered 404 NOT_FOUND. */
  bodyNamesStored?: boolean;
  /** Whether it takes an Idempotency-Key header. */
  idempotent?: boolean;
  /**
   * The answer's schema and status, for the document; `alsoStatus` is a second success
   * status with the same body (an apply that changed nothing answers 200, not 201).
   */
  answer: { status: number; schema: z.ZodType; description: string; alsoStatus?: { status: number; description: string } };
  run(call: ApiCall<P, Q, B>): Promise<{ status: number; body: unknown }>;
}

export type RouteHandler = (req: Request, context: { params: Promise<Record<string, string | string[] | undefined>> }) => Promise<Response>;

/** An API token as the console issues them; the API takes no session cookie, so no other site can make a browser call it. */
const BEARER = /^Bearer\s+(flt_[A-Za-z0-9_-]{43})\s*$/;

async function contextOf(req: Request): Promise<Context> {
  const header = req.headers.get('authorization');
  if (header === null) throw new ApiRefusal('UNAUTHORIZED', 'send an API token as Authorization: Bearer');
  const match = BEARER.exec(header);
  const principal = match ? await (await consoleStore()).apiTokenPrincipal({ secretHash: secretHash(match[1]!) }) : null;
  if (principal === null) throw new ApiRefusal('UNAUTHORIZED', 'the API token is not valid: unknown, expired or revoked');
  return {
    principal,
    role: principal.role,
    sessionHash: null,
    resHeaders: new Headers(),
    secure: servedOverHttps(req),
    source: clientAddress(req.headers),
    userAgent: req.headers.get('user-agent'),
  };
}

function parse<T>(schema: z.ZodType<T> | undefined, value: unknown, where: string): T {
  if (schema === undefined) return undefined as T;
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issues = zodIssues(result.error, where);
  throw new ApiRefusal('INVALID_INPUT', issues.map((i) => `${i.field}: ${i.message}`).join('; '), issues);
}

/** Whether a Content-Type header names JSON: `application/json`, with parameters (a charset) or none. */
export function isJsonContentType(header: string | null): boolean {
  return header !== null && /^application\/json\s*(;.*)?$/i.test(header.trim());
}

/**
 * The query's parameters, each decoded strictly: URLSearchParams turns a malformed
 * percent-encoding (`%FF`, a bare `%`) into U+FFFD, which would pass for text the caller
 * never sent, so such a parameter is refused naming it.
 */
function queryOf(url: string): Record<string, string> {
  const search = new URL(url).search.slice(1);
  const out: Record<string, string> = {};
  for (const part of search === '' ? [] : search.split('&')) {
    const at = part.indexOf('=');
    const [rawName, rawValue] = at === -1 ? [part, ''] : [part.slice(0, at), part.slice(at + 1)];
    const decode = (text: string): string | null => {
      try {
        return decodeURIComponent(text.replace(/\+/g, ' '));
      } catch {
        return null;
      }
    };
    const name = decode(rawName);
    const value = decode(rawValue);
    const field = name ?? 'query';
    if (name === null || value === null) throw new ApiRefusal('INVALID_INPUT', `${field}: is not percent-encoded UTF-8`, [{ field, message: 'is not percent-encoded UTF-8' }]);
    out[name] = value;
  }
  return out;
}

function unsupportedMediaType(): ApiRefusal {
  return new ApiRefusal('UNSUPPORTED_MEDIA_TYPE', 'send the body as JSON, with Content-Type: application/json', [{ field: 'Content-Type', message: 'must be application/json' }]);
}

async function bodyOf(req: Request): Promise<unknown> {
  const declared = req.headers.get('content-type');
  // A body declared as anything else is refused unread: a form or text body was never meant for the API.
  if (declared !== null && !isJsonContentType(declared)) throw unsupportedMediaType();
  const bytes = await readBodyWithin(req, MAX_API_BODY_BYTES);
  if (bytes === null) throw new ApiRefusal('TOO_LARGE', `request body is over the limit of ${MAX_API_BODY_BYTES} bytes`);
  if (bytes.byteLength === 0) return {};
  // A body with no type at all is refused too: only an empty body may come without one.
  if (declared === null) throw unsupportedMediaType();
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new ApiRefusal('INVALID_INPUT', 'body: must be UTF-8 text', [{ field: 'body', message: 'must be UTF-8 text' }]);
  }
  if (jsonTextDepth(text) > MAX_TEXT_DEPTH) {
    const message = `must not be nested more than ${LIMITS.maxJsonDepth} levels deep`;
    throw new ApiRefusal('INVALID_INPUT', `body: ${message}`, [{ field: 'body', message }]);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ApiRefusal('INVALID_INPUT', 'body: must be JSON', [{ field: 'body', message: 'must be JSON' }]);
  }
}

/**
 * The keyed requests this process is answering, by caller, method, path and key. A repeat
 * that arrives while its first is still being answered is refused 409 at once (the
 * Idempotency-Key draft's answer), rather than left to wait on the first's write; the
 * store's unique keys are what keep two processes from both writing it.
 */
const inFlight = new Set<string>();

async function once<T>(slot: string, call: () => Promise<T>): Promise<T> {
  if (inFlight.has(slot)) throw keyInFlight();
  inFlight.add(slot);
  try {
    return await call();
  } finally {
    inFlight.delete(slot);
  }
}

/**
 * The route handler of one endpoint. In order: the caller's token and role (so a refused
 * caller costs no body read), the body within its limit, every input against its schema,
 * then the endpoint itself. Any refusal is answered in the one error shape (errors.ts).
 */
export function routeHandler<P, Q, B>(endpoint: Endpoint<P, Q, B>): RouteHandler {
  return async (req, context) => {
    try {
      const ctx = await contextOf(req);
      if (!roleAtLeast(ctx.role!, endpoint.role)) throw new ApiRefusal('FORBIDDEN', `this needs the ${endpoint.role} role; the token has ${ctx.role}`);
      const raw = endpoint.body ? await bodyOf(req) : undefined;
      const rawParams = await context.params;
      const rawQuery = queryOf(req.url);
      const keyHeader = endpoint.idempotent ? req.headers.get('idempotency-key') : null;
      // The one boundary check of every string, key and nesting, before any schema (input/boundary.ts).
      checkBoundary(rawParams, 'path');
      checkBoundary(rawQuery, 'query');
      checkBoundary(raw, 'body');
      checkBoundary(keyHeader, 'Idempotency-Key');
      const params = parse(endpoint.params, rawParams, 'path');
      const query = parse(endpoint.query, rawQuery, 'query');
      const body = parse(endpoint.body, raw, 'body');
      const idempotencyKey = keyHeader === null ? undefined : parse(requestKeySchema, keyHeader, 'Idempotency-Key');
      const store = await consoleStore();
      const call = () => endpoint.run({ params, query, body, idempotencyKey, ctx, caller: appRouter.createCaller(ctx), store });
      const answer =
        idempotencyKey === undefined ? await call() : await once(`${ctx.principal!.user.id}\u0000${endpoint.method} ${new URL(req.url).pathname}\u0000${idempotencyKey}`, call);
      return Response.json(answer.body, { status: answer.status, headers: { 'cache-control': 'no-store' } });
    } catch (err) {
      return answerForError(err, endpoint.operationId);
    }
  };
}
