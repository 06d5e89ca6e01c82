import { openApiDocument } from './openapi';

/**
 * The HTTP API's reference, read out of the OpenAPI document the API serves, so the
 * console's reference page shows exactly what /api/v1/openapi.json says and keeps no list
 * of endpoints of its own.
 */

type JsonSchema = Record<string, unknown>;

export interface ReferenceField {
  name: string;
  type: string;
  required: boolean;
  description: string | null;
}

export interface ReferenceParameter extends ReferenceField {
  in: 'path' | 'query' | 'header';
}

export interface ReferenceOperation {
  operationId: string;
  method: string;
  path: string;
  summary: string;
  role: string;
  parameters: ReferenceParameter[];
  body: { required: boolean; description: string | null; fields: ReferenceField[] } | null;
  responses: { status: string; description: string }[];
  idempotent: boolean;
}

export interface ApiReference {
  title: string;
  version: string;
  baseUrl: string;
  auth: { scheme: string; description: string };
  errorFields: ReferenceField[];
  operations: ReferenceOperation[];
}

interface Document {
  info: { title: string; version: string };
  servers: { url: string }[];
  paths: Record<string, Record<string, JsonSchema>>;
  components: { schemas: Record<string, JsonSchema>; securitySchemes: Record<string, { scheme: string; description: string }> };
}

/** A schema with its `$ref` followed, since the document keeps bodies and answers under components. */
function resolve(doc: Document, schema: JsonSchema | undefined): JsonSchema {
  const ref = schema?.$ref;
  if (typeof ref === 'string') return doc.components.schemas[ref.replace('#/components/schemas/', '')] ?? {};
  return schema ?? {};
}

/** A short reading of a JSON Schema's type, such as `string`, `"eu" | "us"` or `array of string`. */
export function typeOf(schema: JsonSchema): string {
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => JSON.stringify(v)).join(' | ');
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  const union = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (Array.isArray(union)) return union.map(typeOf).join(' | ');
  const type = Array.isArray(schema.type) ? schema.type.join(' | ') : typeof schema.type === 'string' ? schema.type : 'any';
  if (type === 'array') return `array of ${typeOf((schema.items as JsonSchema | undefined) ?? {})}`;
  if (type === 'object' && schema.properties) return `{ ${Object.keys(schema.properties).join(', ')} }`;
  if (type === 'object' && schema.additionalProperties) return 'object (any keys)';
  if (typeof schema.format === 'string') return `${type} (${schema.format})`;
  if (typeof schema.pattern === 'string') return `${type} matching ${schema.pattern}`;
  return type;
}

function fieldsOf(schema: JsonSchema): ReferenceField[] {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = (schema.required ?? []) as string[];
  return Object.entries(properties).map(([name, property]) => ({
    name,
    type: typeOf(property),
    required: required.includes(name),
    description: typeof property.description === 'string' ? property.description : null,
  }));
}

/** The role an operation needs, as its description in the document states it. */
function roleOf(operation: JsonSchema): string {
  return /Needs the (\w+) role/.exec(String(operation.description ?? ''))?.[1] ?? 'none';
}

export function apiReference(): ApiReference {
  const doc = openApiDocument() as unknown as Document;
  const operations: ReferenceOperation[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      const parameters = ((operation.parameters ?? []) as JsonSchema[]).map((p) => ({
        name: String(p.name),
        in: p.in as ReferenceParameter['in'],
        type: typeOf((p.schema as JsonSchema | undefined) ?? {}),
        required: p.required === true,
        description: typeof p.description === 'string' ? p.description : null,
      }));
      const requestBody = operation.requestBody as { required?: boolean; content: Record<string, { schema: JsonSchema }> } | undefined;
      const bodySchema = requestBody ? resolve(doc, requestBody.content['application/json']?.schema) : null;
      operations.push({
        operationId: String(operation.operationId),
        method: method.toUpperCase(),
        path,
        summary: String(operation.summary ?? ''),
        role: roleOf(operation),
        parameters,
        body: bodySchema
          ? { required: requestBody?.required === true, description: typeof bodySchema.description === 'string' ? bodySchema.description : null, fields: fieldsOf(bodySchema) }
          : null,
        responses: Object.entries((operation.responses ?? {}) as Record<string, { description?: string }>).map(([status, r]) => ({ status, description: r.description ?? '' })),
        idempotent: parameters.some((p) => p.in === 'header' && p.name === 'Idempotency-Key'),
      });
    }
  }
  const bearer = doc.components.securitySchemes.bearerToken;
  return {
    title: doc.info.title,
    version: doc.info.version,
    baseUrl: doc.servers[0]?.url ?? '/api/v1',
    auth: { scheme: bearer?.scheme ?? 'bearer', description: bearer?.description ?? '' },
    errorFields: fieldsOf(resolve(doc, { $ref: '#/components/schemas/Error' })),
    operations,
  };
}
