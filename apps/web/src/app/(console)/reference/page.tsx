import type { Metadata } from 'next';
import { Card, PageHeader } from '@/components/ui';
import { apiReference, type ReferenceField, type ReferenceOperation } from '@/server/api/reference';

export const metadata: Metadata = { title: 'API reference · fenceline' };

/** An anchor for an operation, so a link can point at one endpoint. */
const anchorOf = (op: ReferenceOperation) => `op-${op.operationId}`;

function Fields({ fields, testId, withIn }: { fields: (ReferenceField & { in?: string })[]; testId: string; withIn?: boolean }) {
  return (
    <div className="table-scroll">
      <table className="table compact" data-testid={testId}>
        <thead>
          <tr>
            <th>Name</th>
            {withIn ? <th>In</th> : null}
            <th>Type</th>
            <th>Required</th>
            <th>Description</th>
          </tr>
        </thead>
        <tbody>
          {fields.map((f) => (
            <tr key={`${f.in ?? ''}${f.name}`} data-testid={`${testId}-${f.name}`}>
              <td>
                <code>{f.name}</code>
              </td>
              {withIn ? <td>{f.in}</td> : null}
              <td>
                <code>{f.type}</code>
              </td>
              <td>{f.required ? 'yes' : 'no'}</td>
              <td>{f.description ?? ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Operation({ op }: { op: ReferenceOperation }) {
  const testId = `op-${op.operationId}`;
  return (
    <section className="card" id={anchorOf(op)} data-testid={testId} data-method={op.method} data-path={op.path} data-role={op.role}>
      <div className="card-head">
        <h2>
          <span className="badge" data-testid={`${testId}-method`}>
            {op.method}
          </span>{' '}
          <code data-testid={`${testId}-path`}>/api/v1{op.path}</code>
        </h2>
        <span className={`role role-${op.role}`} data-testid={`${testId}-role`}>
          {op.role}
        </span>
      </div>
      <p data-testid={`${testId}-summary`}>{op.summary}</p>
      {op.idempotent ? (
        <p className="small" data-testid={`${testId}-idempotency`}>
          Takes an <code>Idempotency-Key</code> header, the caller&apos;s own: the same request sent again by the same user with the key creates nothing and gets the first answer
          back; the key sent with a different request is refused (422 KEY_REUSED), and while the first is still being answered, 409 CONFLICT.
        </p>
      ) : null}
      {op.parameters.length > 0 ? (
        <>
          <h3>Parameters</h3>
          <Fields fields={op.parameters} testId={`${testId}-params`} withIn />
        </>
      ) : null}
      {op.body ? (
        <>
          <h3>Request body{op.body.required ? ' (required)' : ''}</h3>
          {op.body.description ? <p className="small">{op.body.description}</p> : null}
          {op.body.fields.length > 0 ? <Fields fields={op.body.fields} testId={`${testId}-body`} /> : null}
        </>
      ) : null}
      <h3>Responses</h3>
      <ul className="small" data-testid={`${testId}-responses`}>
        {op.responses.map((r) => (
          <li key={r.status} data-testid={`${testId}-response-${r.status}`}>
            <code>{r.status}</code> {r.description}
          </li>
        ))}
      </ul>
    </section>
  );
}

/**
 * The HTTP API's reference, rendered on the server from the same OpenAPI document that
 * /api/v1/openapi.json serves, so the page cannot say something the API does not do.
 */
export default function ReferencePage() {
  const ref = apiReference();
  return (
    <>
      <PageHeader
        title="API reference"
        subtitle={
          <>
            {ref.title}, version {ref.version}, under <code>{ref.baseUrl}</code>; the same document as JSON:{' '}
            <a href={`${ref.baseUrl}/openapi.json`} data-testid="openapi-link">
              {ref.baseUrl}/openapi.json
            </a>
          </>
        }
      />
      <Card title="Authentication">
        <p data-testid="reference-auth">
          Every endpoint but the OpenAPI document needs <code>Authorization: Bearer flt_...</code> ({ref.auth.scheme} scheme). {ref.auth.description}. The API takes no session
          cookie. Each operation below names the lowest role its token needs.
        </p>
      </Card>
      <Card title="Errors">
        <p>Every refusal is JSON of one shape; the code also sets the status.</p>
        <Fields fields={ref.errorFields} testId="reference-error" />
      </Card>
      <Card title="Operations">
        <ul data-testid="reference-index">
          {ref.operations.map((op) => (
            <li key={op.operationId}>
              <a href={`#${anchorOf(op)}`}>
                <code>
                  {op.method} {op.path}
                </code>
              </a>{' '}
              {op.summary}
            </li>
          ))}
        </ul>
      </Card>
      {ref.operations.map((op) => (
        <Operation key={op.operationId} op={op} />
      ))}
    </>
  );
}
