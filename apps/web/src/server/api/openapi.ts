import { z } from 'zod';
import { requestKeySchema } from '../request-key';
import { ENDPOINTS } from './endpoints';
import { apiErrorSchema } from './errors';

type JsonSchema = Record<string, unknown>;

/** A schema as JSON Schema 2020-12, the dialect OpenAPI 3.1 uses, without its `$schema` line (the document says the dialect). */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as JsonSchema;
  return rest;
}

function ref(name: string): JsonSchema {
  return { $ref: `#/components/schemas/${name}` };
}

/** Path or query parameters, one per property of the object schema. */
function parametersOf(schema: z.ZodType, where: 'path' | 'query'): JsonSchema[] {
  const object = jsonSchema(schema, 'input') as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(object.properties ?? {}).map(([name, property]) => {
    const { description, ...rest } = property;
    return { name, in: where, required: where === 'path' || (object.required ?? []).includes(name), schema: rest, ...(description ? { description } : {}) };
  });
}

const ERROR_ANSWERS: Record<string, string> = {
  '400': 'INVALID_INPUT or INVALID_DAG: the request is refused, nothing is written; `issues` names each bad field',
  '401': 'UNAUTHORIZED: no API token, or one that is unknown, expired or revoked',
  '403': "FORBIDDEN: the token's role is below what the endpoint needs",
  '404': 'NOT_FOUND: no such DAG, run, action, backfill, limit, channel, rule or notification',
  '413': 'TOO_LARGE: the body is over the limit',
  '415': 'UNSUPPORTED_MEDIA_TYPE: a body that is not sent as application/json',
  '409': 'CONFLICT: a request with this Idempotency-Key is still being answered; send it again once that one is answered',
  '422': 'KEY_REUSED: this caller already used the Idempotency-Key for a different request (another body or target); nothing is written',
  '500': 'INTERNAL: an unexpected failure; the message carries only an id the console logged it under',
};

function errorAnswer(status: string): JsonSchema {
  return { description: ERROR_ANSWERS[status], content: { 'application/json': { schema: ref('Error') } } };
}

const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);

/**
 * The OpenAPI 3.1 document of the HTTP API, made from the schemas its handlers check
 * requests with (schemas.ts), so what it says is what the handlers do.
 */
export function openApiDocument(): JsonSchema {
  const schemas: Record<string, JsonSchema> = { Error: jsonSchema(apiErrorSchema, 'output') };
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const e of ENDPOINTS) {
    const name = capitalised(e.operationId);
    const parameters: JsonSchema[] = [];
    if (e.params) parameters.push(...parametersOf(e.params, 'path'));
    if (e.query) parameters.push(...parametersOf(e.query, 'query'));
    if (e.idempotent) {
      parameters.push({
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        description:
          "The caller's own key for this request: the same request (method, path and body) sent again by the same user with it returns the first answer and creates nothing; sent with a different request it is refused 422 KEY_REUSED, and while the first is still being answered 409 CONFLICT. Another user's key of the same text is a key of its own.",
        schema: jsonSchema(requestKeySchema, 'input'),
      });
    }
    schemas[`${name}Answer`] = jsonSchema(e.answer.schema, 'output');
    const responses: Record<string, JsonSchema> = {
      [String(e.answer.status)]: { description: e.answer.description, content: { 'application/json': { schema: ref(`${name}Answer`) } } },
    };
    const also = e.answer.alsoStatus;
    if (also) responses[String(also.status)] = { description: also.description, content: { 'application/json': { schema: ref(`${name}Answer`) } } };
    const errors = ['400', '401'];
    if (e.role !== 'viewer') errors.push('403');
    if (e.params || e.bodyNamesStored) errors.push('404');
    if (e.body) errors.push('413', '415');
    if (e.idempotent) errors.push('409', '422');
    errors.push('500');
    for (const status of errors) responses[status] = errorAnswer(status);
    const operation: JsonSchema = { operationId: e.operationId, summary: e.summary, description: `Needs the ${e.role} role or above.`, parameters, responses };
    if (e.body) {
      schemas[`${name}Body`] = jsonSchema(e.body, 'input');
      operation.requestBody = {
        required: e.operationId === 'applyDag' || e.method === 'PUT' || e.bodyRequired === true,
        content: { 'application/json': { schema: ref(`${name}Body`) } },
      };
    }
    paths[e.path] ??= {};
    paths[e.path]![e.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    info: { title: 'fenceline HTTP API', version: '1' },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    servers: [{ url: '/api/v1' }],
    security: [{ bearerToken: [] }],
    paths,
    components: {
      schemas,
      securitySchemes: {
        bearerToken: { type: 'http', scheme: 'bearer', description: "A personal API token (flt_...), made on the console's Tokens page or with `fenceline api-token create`" },
      },
    },
  };
}
