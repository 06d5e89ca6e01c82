import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { parseDagId } from '@fenceline/core';
import { registerSecret } from '../test/support/run-logs';
import { ADMIN, fillSignIn, OPERATOR, VIEWER, screenshot, signedInPage, startHarness, until, type E2eUser, type Harness } from './src/env';

/**
 * Signing in to the console in real Chromium: a wrong password refused with its code, the
 * headers that keep other sites from framing it, a viewer's session cookie and its refused
 * write, sign-out ending the session on the server, and the admin's Users and Audit pages.
 * Selectors are data-testid, never text or CSS structure.
 */

let h: Harness;

before(async () => {
  h = await startHarness();
  await h.store.putDag({ id: 'audited', tasks: [{ id: 'one', type: 'noop' }] }, 4);
});

after(async () => {
  await h?.stop();
});

/** The session cookie of a signed-in page, as another browser could copy it. */
async function sessionCookieOf(page: Page): Promise<{ name: string; value: string; domain: string; path: string }> {
  const session = (await page.context().cookies()).find((c) => c.name === 'fenceline_session');
  assert.ok(session, 'a session cookie is set');
  return { name: session.name, value: session.value, domain: session.domain, path: session.path };
}

/** What the tRPC API answers to a request that carries only this cookie. */
async function apiStatusWith(cookie: { name: string; value: string }): Promise<number> {
  const res = await fetch(`${h.consoleUrl}/api/trpc/cluster.overview`, { headers: { cookie: `${cookie.name}=${cookie.value}` } });
  return res.status;
}

async function signInFresh(user: E2eUser): Promise<Page> {
  return signedInPage(h, user);
}

describe('sign-in', () => {
  test('sign-in: a wrong password is refused with its code, a viewer may read but not save, the operator gets in', async () => {
    const context = await h.browser.newContext({ viewport: { width: 1440, height: 900 }, colorScheme: 'dark' });
    const p = await context.newPage();
    await p.goto(`${h.consoleUrl}/dags`);
    await p.waitForURL(/\/signin/);
    await fillSignIn(p, { name: OPERATOR.name, password: 'not-the-password' });
    const error = p.getByTestId('api-error');
    await error.waitFor();
    assert.equal(await error.getAttribute('data-code'), 'UNAUTHORIZED');
    await screenshot(p, '01-signin-refused');

    // The tRPC API refuses a request without a session, whatever the page does.
    const anonymous = await fetch(`${h.consoleUrl}/api/trpc/cluster.overview`);
    assert.equal(anonymous.status, 401);
    // No other site may frame the console or load its pages into its own.
    const signinPage = await fetch(`${h.consoleUrl}/signin`);
    assert.match(signinPage.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
    assert.equal(signinPage.headers.get('x-frame-options'), 'DENY');
    assert.equal(signinPage.headers.get('x-content-type-options'), 'nosniff');
    await context.close();

    const viewer = await signInFresh(VIEWER);
    assert.equal(await viewer.getByTestId('role').textContent(), 'viewer');
    assert.equal(await viewer.getByTestId('user-name').textContent(), VIEWER.name);
    const cookies = await viewer.context().cookies();
    const session = cookies.find((c) => c.name === 'fenceline_session');
    assert.ok(session, 'a session cookie is set');
    assert.equal(session.httpOnly, true);
    assert.equal(session.sameSite, 'Strict');
    assert.ok(!session.value.includes(VIEWER.password), 'the cookie never carries the password');
    // A viewer's save is refused by the server with FORBIDDEN.
    const refused = await viewer.evaluate(async () => {
      const res = await fetch('/api/trpc/dags.save', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ json: { spec: { id: 'x', tasks: [] } } }),
      });
      return { status: res.status, body: await res.text() };
    });
    assert.equal(refused.status, 403, refused.body);
    await viewer.context().close();

    const page = await signInFresh(OPERATOR);
    assert.equal(await page.getByTestId('role').textContent(), 'operator');
    await page.context().close();
  });

  test('sign-out: ends the session on the server, so a copied cookie stops working', async () => {
    const page = await signInFresh(OPERATOR);
    const copied = await sessionCookieOf(page);
    // Another browser with a copy of the cookie is signed in as well.
    const other = await h.browser.newContext({ viewport: { width: 1440, height: 900 } });
    await other.addCookies([copied]);
    const otherPage = await other.newPage();
    await otherPage.goto(`${h.consoleUrl}/dags`);
    assert.equal(await otherPage.getByTestId('role').textContent(), 'operator');
    assert.equal(await apiStatusWith(copied), 200);

    await page.getByTestId('sign-out').click();
    await page.waitForURL(/\/signin/);
    assert.equal(await apiStatusWith(copied), 401);
    await otherPage.goto(`${h.consoleUrl}/dags`);
    await otherPage.waitForURL(/\/signin/);
    await screenshot(otherPage, '01-signin-copied-cookie-after-sign-out');
    await other.close();
    await page.context().close();
  });

  test('users page: an admin creates a user who signs in with the shown password, then signs them out everywhere', async () => {
    const admin = await signInFresh(ADMIN);
    await admin.getByTestId('nav-users').click();
    await admin.getByTestId('user-table').waitFor();
    await admin.getByTestId('new-user-name').fill('nina');
    await admin.getByTestId('new-user-role').selectOption('operator');
    await admin.getByTestId('new-user-submit').click();
    const password = (await admin.getByTestId('created-password').textContent()) ?? '';
    assert.match(password, /^[A-Za-z0-9_-]{24}$/);
    registerSecret('a password the users page made', password);
    await admin.getByTestId('user-row-nina').waitFor();
    await screenshot(admin, '01-users-page');

    const nina = await signInFresh({ name: 'nina', password });
    assert.equal(await nina.getByTestId('role').textContent(), 'operator');
    const ninaCookie = await sessionCookieOf(nina);
    assert.equal(await apiStatusWith(ninaCookie), 200);

    await admin.getByTestId('user-revoke-nina').click();
    await admin.getByTestId('sessions-revoked').waitFor();
    assert.equal(await apiStatusWith(ninaCookie), 401);
    await nina.reload();
    await nina.waitForURL(/\/signin/);

    // Users is an admin's page: an operator is not shown it, and its procedures refuse one.
    const operator = await signInFresh(OPERATOR);
    assert.equal(await operator.getByTestId('nav-users').count(), 0);
    const listed = await operator.evaluate(async () => (await fetch('/api/trpc/users.list')).status);
    assert.equal(listed, 403);
    await Promise.all([admin.context().close(), nina.context().close(), operator.context().close()]);
  });

  test('tokens page: a viewer makes a token shown once, a script uses it as Bearer, and revoking it stops it', async () => {
    const viewer = await signInFresh(VIEWER);
    await viewer.getByTestId('nav-tokens').click();
    await viewer.getByTestId('new-token-name').fill('nightly report');
    // A viewer is offered no role above their own.
    assert.deepEqual(await viewer.getByTestId('new-token-role').locator('option').allTextContents(), ['viewer']);
    await viewer.getByTestId('new-token-submit').click();
    const secret = (await viewer.getByTestId('token-secret').textContent()) ?? '';
    assert.match(secret, /^flt_[A-Za-z0-9_-]{43}$/);
    registerSecret('an API token the tokens page made', secret);
    const bearer = { authorization: `Bearer ${secret}` };
    assert.equal((await fetch(`${h.consoleUrl}/api/trpc/cluster.overview`, { headers: bearer })).status, 200);
    await screenshot(viewer, '01-tokens-page');

    const [token] = await h.store.listApiTokens({});
    assert.ok(token);
    await viewer.getByTestId(`token-revoke-${token.id}`).click();
    await until('the token to show as revoked', async () => (await viewer.getByTestId(`token-state-${token.id}`).textContent()) === 'revoked');
    assert.equal((await fetch(`${h.consoleUrl}/api/trpc/cluster.overview`, { headers: bearer })).status, 401);
    await viewer.context().close();
  });

  test('audit page: an operator’s trigger and pause are recorded with who and from where, globally and on the DAG page', async () => {
    const operator = await signInFresh(OPERATOR);
    await operator.goto(`${h.consoleUrl}/dags/audited`);
    await operator.getByTestId('trigger-run').click();
    await until('the run to be queued', async () => (await h.store.listRuns({ dagId: parseDagId('audited'), limit: 5 })).length > 0);
    await operator.getByTestId('toggle-pause').click();
    await until('the DAG to be paused', async () => (await h.store.getDag(parseDagId('audited'))).paused);

    // The DAG page lists its own changes.
    const dagAudit = operator.getByTestId('dag-audit');
    await until('the DAG page to show its changes', async () => (await dagAudit.getByTestId('audit-row').count()) >= 2);
    assert.deepEqual(await dagAudit.getByTestId('audit-row').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-action'))), ['dag.paused', 'dag.triggered']);

    // The global page, filtered by who and what, seen by a viewer.
    const viewer = await signInFresh(VIEWER);
    await viewer.getByTestId('nav-audit').click();
    await viewer.getByTestId('audit-filter-actor').fill(OPERATOR.name);
    await viewer.getByTestId('audit-filter-action').selectOption('dag.triggered');
    await until('the filtered audit log', async () => {
      const rows = await viewer.getByTestId('audit-row').evaluateAll((els) => els.map((r) => `${r.getAttribute('data-actor')} ${r.getAttribute('data-action')}`));
      return rows.length === 1 && rows[0] === `${OPERATOR.name} dag.triggered`;
    });
    const row = viewer.getByTestId('audit-row').first();
    assert.match((await row.textContent()) ?? '', /audited/);
    assert.match((await row.textContent()) ?? '', /127\.0\.0\.1/);
    await screenshot(viewer, '01-audit-page');
    // The log cannot be changed through the product: there is no procedure that would.
    const entry = (await h.store.listAudit({ actor: OPERATOR.name, action: 'dag.triggered' }))[0];
    assert.ok(entry);
    assert.equal(entry.source, '127.0.0.1');
    assert.match(entry.userAgent ?? '', /Chrome/);
    await Promise.all([operator.context().close(), viewer.context().close()]);
  });
});
