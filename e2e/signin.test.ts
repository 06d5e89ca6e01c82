import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { OPERATOR_TOKEN, VIEWER_TOKEN, screenshot, signedInPage, startHarness, type Harness } from './src/env';

/**
 * Signing in to the console in real Chromium: a wrong token refused with its code, the
 * headers that keep other sites from framing it, a viewer's session cookie and its refused
 * write, and the operator let in. Selectors are data-testid, never text or CSS structure.
 */

let h: Harness;

before(async () => {
  h = await startHarness();
});

after(async () => {
  await h?.stop();
});

describe('sign-in', () => {
  test('sign-in: a wrong token is refused with its code, a viewer may read but not save, the operator gets in', async () => {
    const context = await h.browser.newContext({ viewport: { width: 1440, height: 900 }, colorScheme: 'dark' });
    const p = await context.newPage();
    await p.goto(`${h.consoleUrl}/dags`);
    await p.waitForURL(/\/signin/);
    await p.getByTestId('signin-token').fill('not-the-token');
    await p.getByTestId('signin-submit').click();
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

    const viewer = await signedInPage(h, VIEWER_TOKEN);
    assert.equal(await viewer.getByTestId('role').textContent(), 'viewer');
    const cookies = await viewer.context().cookies();
    const session = cookies.find((c) => c.name === 'fenceline_session');
    assert.ok(session, 'a session cookie is set');
    assert.equal(session.httpOnly, true);
    assert.equal(session.sameSite, 'Strict');
    assert.ok(!session.value.includes(VIEWER_TOKEN), 'the cookie never carries the raw token');
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

    const page = await signedInPage(h, OPERATOR_TOKEN);
    assert.equal(await page.getByTestId('role').textContent(), 'operator');
  });
});
