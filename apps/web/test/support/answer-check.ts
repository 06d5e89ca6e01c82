import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { openApiDocument } from '../../src/server/api/openapi';

type Json = Record<string, unknown>;
interface Operation {
  operationId: string;
  responses: Record<string, { content?: { 'application/json'?: { schema?: { $ref?: string } } } }>;
}

/**
 * Checks every answer the API gives in a test against the OpenAPI document, as a client
 * generated from the document would read it: the status must be one the operation lists,
 * and the body must match that status's schema (every field typed, no field the document
 * does not name). An answer that does not is recorded, and the test file fails on it.
 */
export class AnswerCheck {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly operations: { pattern: RegExp; method: string; path: string; op: Operation }[] = [];
  readonly offSchema: string[] = [];
  checked = 0;
  /** The operations (by id) with at least one 2xx answer that matched its schema. */
  readonly answered2xx = new Set<string>();

  constructor() {
    addFormats.default(this.ajv);
    const doc = openApiDocument() as Json & { paths: Record<string, Record<string, Operation>>; servers: { url: string }[] };
    // The document is one schema resource, so each answer's $ref resolves inside it.
    this.ajv.addSchema({ ...doc, $id: 'openapi.json' });
    const prefix = doc.servers[0]!.url;
    for (const [path, item] of Object.entries(doc.paths)) {
      const pattern = new RegExp(`^${prefix}${path.replace(/\{\w+\}/g, '[^/]+')}$`);
      for (const [method, op] of Object.entries(item)) this.operations.push({ pattern, method: method.toUpperCase(), path, op });
    }
  }

  /** Checks one answer; a request to no operation of the document (a route file alone, an unknown path) is left out. */
  async check(method: string, pathname: string, res: Response): Promise<void> {
    const found = this.operations.find((o) => o.method === method && o.pattern.test(pathname));
    if (!found) return;
    this.checked++;
    const where = `${method} ${found.path} answered ${res.status}`;
    const answer = found.op.responses[String(res.status)];
    if (!answer) {
      this.offSchema.push(`${where}: the document lists no such status (${Object.keys(found.op.responses).join(', ')})`);
      return;
    }
    const ref = answer.content?.['application/json']?.schema?.$ref;
    if (!ref) {
      this.offSchema.push(`${where}: the document gives no JSON schema`);
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(await res.clone().text());
    } catch {
      this.offSchema.push(`${where}: the body is not JSON`);
      return;
    }
    const validate = this.ajv.getSchema(`openapi.json${ref}`);
    if (!validate) throw new Error(`the document's ${ref} does not resolve`);
    if (!validate(body)) this.offSchema.push(`${where}: ${this.ajv.errorsText(validate.errors, { separator: '; ' })} in ${JSON.stringify(body).slice(0, 500)}`);
    else if (res.status >= 200 && res.status < 300) this.answered2xx.add(found.op.operationId);
  }

  /** Every operation id in the document. */
  operationIds(): string[] {
    return this.operations.map((o) => o.op.operationId);
  }
}
