import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { screenshot, signedInPage, startHarness, VIEWER, type Harness } from './src/env';

/**
 * The console's API reference page in real Chromium against a real cluster: reached from
 * the navigation, it lists the operations of the OpenAPI document the API itself serves,
 * each with its method, path, role, parameters, body fields and answers. Selectors are
 * data-testid, never text positions or CSS structure.
 */

let h: Harness;
let page: Page;

interface Operation {
  operationId: string;
  method: string;
  path: string;
  role: string;
  idempotent: boolean;
}

/** The operations as /api/v1/openapi.json lists them, read over HTTP as any client reads them. */
async function documentOperations(): Promise<Operation[]> {
  const res = await fetch(`${h.consoleUrl}/api/v1/openapi.json`);
  assert.equal(res.status, 200);
  const doc = (await res.json()) as { paths: Record<string, Record<string, { operationId: string; description: string; parameters: { name: string; in: string }[] }>> };
  return Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({
      operationId: op.operationId,
      method: method.toUpperCase(),
      path,
      role: /Needs the (\w+) role/.exec(op.description)?.[1] ?? 'none',
      idempotent: op.parameters.some((p) => p.in === 'header' && p.name === 'Idempotency-Key'),
    })),
  );
}

before(async () => {
  h = await startHarness();
  // A viewer reads every page, so the reference must be open to the lowest role too.
  page = await signedInPage(h, VIEWER);
});

after(async () => {
  await h?.stop();
});

describe('API reference page', () => {
  test('the navigation leads to it', async () => {
    await page.getByTestId('nav-api-reference').click();
    await page.waitForURL((url) => url.pathname === '/reference');
    await page.getByTestId('op-triggerDag').waitFor({ timeout: 60_000 });
  });

  test('every operation of the served document is there with its method, path and role', async () => {
    const operations = await documentOperations();
    assert.ok(operations.length >= 10, `the document lists the API's operations, got ${operations.length}`);
    const shown = await page.locator('[data-testid^="op-"][data-method]').count();
    assert.equal(shown, operations.length, 'one section per operation, no more');
    for (const op of operations) {
      const section = page.getByTestId(`op-${op.operationId}`);
      assert.equal(await section.getAttribute('data-method'), op.method, `${op.operationId} method`);
      assert.equal(await section.getAttribute('data-path'), op.path, `${op.operationId} path`);
      assert.equal((await page.getByTestId(`op-${op.operationId}-role`).textContent())?.trim(), op.role, `${op.operationId} role`);
      assert.equal(await page.getByTestId(`op-${op.operationId}-idempotency`).count(), op.idempotent ? 1 : 0, `${op.operationId} Idempotency-Key note`);
    }
  });

  test('the trigger endpoint shows its path parameter, Idempotency-Key, body and answers', async () => {
    const id = 'op-triggerDag';
    assert.equal((await page.getByTestId(`${id}-method`).textContent())?.trim(), 'POST');
    assert.equal((await page.getByTestId(`${id}-path`).textContent())?.trim(), '/api/v1/dags/{id}/trigger');
    assert.equal((await page.getByTestId(`${id}-role`).textContent())?.trim(), 'operator');
    assert.equal(await page.getByTestId(`${id}-params-id`).count(), 1, 'the DAG id path parameter');
    const key = page.getByTestId(`${id}-params-Idempotency-Key`);
    assert.equal(await key.count(), 1, 'the Idempotency-Key header parameter');
    assert.match((await key.textContent()) ?? '', /header/);
    assert.match((await page.getByTestId(`${id}-body-params`).textContent()) ?? '', /params/);
    for (const status of ['201', '400', '401', '403', '404']) {
      assert.equal(await page.getByTestId(`${id}-response-${status}`).count(), 1, `answer ${status}`);
    }
    // A read takes no key and needs only a viewer.
    assert.equal((await page.getByTestId('op-listRuns-role').textContent())?.trim(), 'viewer');
    assert.equal(await page.getByTestId('op-listRuns-params-cursor').count(), 1, 'the runs list pages by cursor');
  });

  test('the bearer token and the error shape are described', async () => {
    assert.match((await page.getByTestId('reference-auth').textContent()) ?? '', /Authorization: Bearer/);
    for (const field of ['code', 'message', 'issues']) assert.equal(await page.getByTestId(`reference-error-${field}`).count(), 1, `error field ${field}`);
    assert.equal(await page.getByTestId('openapi-link').getAttribute('href'), '/api/v1/openapi.json');
    await screenshot(page, 'api-reference-01');
  });
});
