import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { screenshot, signedInPage, startHarness, until, type Harness } from './src/env';
import { dragConnect } from './src/drag';

/**
 * A DAG from the editor's canvas to a finished run, in real Chromium against a real
 * cluster: tasks drawn and connected with the mouse, a cycle refused inline, the fix, the
 * save, a trigger, every node succeeding, and the run's detail. Selectors are data-testid
 * and React Flow's data-id, never text or CSS structure.
 */

let h: Harness;
let page: Page;

before(async () => {
  h = await startHarness();
  page = await signedInPage(h);
});

after(async () => {
  await h?.stop();
});

describe('a drawn DAG', () => {
  test('editor: draw three tasks, see a cycle refused inline and Save disabled, fix it, save, trigger, watch every node succeed', async () => {
    await page.goto(`${h.consoleUrl}/editor`);
    await page.getByTestId('dag-id').fill('e2e-drawn');
    await page.getByTestId('dag-name').fill('Drawn in the editor');
    await page.getByTestId('palette-noop').click();
    await page.getByTestId('palette-sleep').click();
    await page.getByTestId('palette-noop').click();
    for (const id of ['noop-1', 'sleep-1', 'noop-2']) await page.locator(`.react-flow__node[data-id="${id}"]`).waitFor();

    await dragConnect(page, page.getByTestId('handle-out-noop-1'), page.getByTestId('handle-in-sleep-1'));
    await dragConnect(page, page.getByTestId('handle-out-sleep-1'), page.getByTestId('handle-in-noop-2'));
    await screenshot(page, '02-editor-drawn');
    // A straight edge has a zero-height box, which Playwright counts as hidden: wait for it in the DOM.
    await page.locator('.react-flow__edge[data-id="noop-1->sleep-1"]').waitFor({ state: 'attached' });
    await page.locator('.react-flow__edge[data-id="sleep-1->noop-2"]').waitFor({ state: 'attached' });
    await until('the chain to validate', async () => (await page.getByTestId('validation-ok').count()) === 1);

    // Closing the loop: noop-2 back to noop-1.
    await dragConnect(page, page.getByTestId('handle-out-noop-2'), page.getByTestId('handle-in-noop-1'));
    const cycleEdge = page.locator('.react-flow__edge[data-id="noop-2->noop-1"]');
    await cycleEdge.waitFor({ state: 'attached' });
    const cycleIssue = page.getByTestId('issue-cycle');
    await cycleIssue.waitFor();
    assert.match((await cycleIssue.textContent()) ?? '', /cycle: .*noop-1.*noop-2|cycle: .*noop-2.*noop-1/);
    for (const id of ['noop-1', 'sleep-1', 'noop-2']) {
      assert.equal(await page.getByTestId(`task-node-${id}`).getAttribute('data-problem'), 'true', `${id} is highlighted as part of the cycle`);
    }
    assert.match((await cycleEdge.getAttribute('class')) ?? '', /edge-problem/);
    await page.getByTestId('auto-layout').click();
    await screenshot(page, '02-editor-cycle');

    // A draft with issues cannot be sent to the store at all.
    assert.equal(await page.getByTestId('save-dag').isDisabled(), true);

    // Fix it from the keyboard: focus the back edge, select it, delete it.
    await cycleEdge.focus();
    await page.keyboard.press('Enter');
    await page.keyboard.press('Delete');
    await until('the cycle edge to go', async () => (await cycleEdge.count()) === 0);
    await page.getByTestId('validation-ok').waitFor();
    for (const id of ['noop-1', 'sleep-1', 'noop-2']) assert.equal(await page.getByTestId(`task-node-${id}`).getAttribute('data-problem'), 'false');

    // Undo brings the bad edge back, redo removes it again.
    await page.getByTestId('undo').click();
    await cycleEdge.waitFor({ state: 'attached' });
    await page.getByTestId('redo').click();
    await until('redo to remove the edge again', async () => (await cycleEdge.count()) === 0);

    // The JSON view says the same as the graph.
    const json = JSON.parse(await page.getByTestId('spec-json').inputValue()) as { tasks: { id: string; dependsOn: string[] }[] };
    assert.deepEqual(
      json.tasks.map((t) => [t.id, t.dependsOn]),
      [
        ['noop-1', []],
        ['sleep-1', ['noop-1']],
        ['noop-2', ['sleep-1']],
      ],
    );

    await page.getByTestId('save-dag').click();
    const saved = page.getByTestId('save-result');
    await saved.waitFor();
    assert.match((await saved.textContent()) ?? '', /version 1/);
    await screenshot(page, '03-editor-saved');

    await page.getByTestId('open-saved-dag').click();
    await page.waitForURL(/\/dags\/e2e-drawn/);
    await page.getByTestId('trigger-run').click();
    for (const id of ['noop-1', 'sleep-1', 'noop-2']) {
      await until(`${id} to succeed`, async () => (await page.getByTestId(`task-node-${id}`).getAttribute('data-state')) === 'succeeded', 45_000);
    }
    await until('the run to succeed', async () => (await page.getByTestId('graph-run-state').getAttribute('data-state')) === 'succeeded', 20_000);
    await screenshot(page, '04-dag-detail');

    // Changing catch-up is an edit: it makes version 2 once confirmed, and the history shows the diff.
    page.once('dialog', (d) => void d.accept());
    await page.getByTestId('catchup-policy').selectOption('none');
    await page.getByTestId('version-2').waitFor();
    await page.getByTestId('version-2').click();
    assert.match((await page.getByTestId('version-diff').textContent()) ?? '', /"policy": "none"/);

    const runLink = page.locator('[data-testid^="run-row-"] a').first();
    await runLink.click();
    await page.waitForURL(/\/runs\//);
    await page.getByTestId('gantt-row-sleep-1').click();
    await page.getByTestId('job-detail').waitFor();
    await page.getByTestId('job-logs').waitFor();
    await screenshot(page, '05-run-detail');
  });
});
