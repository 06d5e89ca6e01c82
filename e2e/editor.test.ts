import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import type { Dialog, Page } from 'playwright-core';
import { REPO_ROOT, SHARDS, screenshot, signedInPage, startHarness, until, type Harness } from './src/env';
import { chain } from './src/specs';
import { parseDagId } from '@fenceline/core';

/** The console's window after an answer in which a click repeats the last trigger (apps/web's KEY_KEPT_MS). */
const KEY_KEPT_MS = 10_000;

/**
 * The DAG editor and the DAG page's writes, in real Chromium against a real cluster: a task
 * renamed without losing focus or the task, a trigger that queues one run however often its
 * click arrives, a paused DAG shown as paused everywhere, the editor's header and leave
 * guard after a save, the palette's word on job types no live worker runs, confirmations
 * before a catch-up change, and canvas controls drawn in the dark theme.
 */

let h: Harness;
let page: Page;

const execFileAsync = promisify(execFile);

/** Collects every dialog the page opens, answering each with `accept`. */
function answerDialogs(p: Page, accept: boolean): { seen: Dialog[]; stop(): void } {
  const seen: Dialog[] = [];
  const onDialog = (d: Dialog) => {
    seen.push(d);
    void (accept ? d.accept() : d.dismiss());
  };
  p.on('dialog', onDialog);
  return { seen, stop: () => p.off('dialog', onDialog) };
}

async function runCount(dagId: string): Promise<number> {
  return (await h.store.listRuns({ dagId: parseDagId(dagId), limit: 100 })).length;
}

/** The node's drawn position, to see that nothing re-laid the canvas out. */
async function nodeTransform(p: Page, id: string): Promise<string> {
  return p.locator(`.react-flow__node[data-id="${id}"]`).evaluate((el) => (el as HTMLElement).style.transform);
}

/** Relative luminance (0 black, 1 white) of a computed `rgb(...)` colour. */
function luminance(css: string): number {
  const [r, g, b] = (css.match(/[\d.]+/g) ?? ['255', '255', '255']).map(Number) as [number, number, number];
  return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
}

before(async () => {
  h = await startHarness();
  page = await signedInPage(h);
});

after(async () => {
  await h?.stop();
});

describe('editor', () => {
  test('renaming a task keeps the focus where the author clicks and the task itself, and no shortcut acts in a field', async () => {
    await page.goto(`${h.consoleUrl}/editor`);
    await page.getByTestId('palette-sleep').click();
    await page.locator('.react-flow__node[data-id="sleep-1"]').waitFor();
    const idField = page.getByTestId('task-id');
    await idField.fill('renamed-sleep');
    const config = page.getByTestId('task-config');
    const before = await config.inputValue();
    // Clicking the config box commits the rename on blur; the focus must land in the box.
    await config.click();
    await page.locator('.react-flow__node[data-id="renamed-sleep"]').waitFor();
    const placeBefore = await nodeTransform(page, 'renamed-sleep');
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('data-testid') ?? document.activeElement?.tagName), 'task-config');
    // These keystrokes belong to the box: Backspace edits it and `l` is a letter, not a layout.
    await page.keyboard.press('Control+End');
    await page.keyboard.type('xy');
    await page.keyboard.press('Backspace');
    await page.keyboard.type('l');
    assert.equal(await config.inputValue(), `${before}xl`);
    assert.equal(await page.locator('.react-flow__node[data-id="renamed-sleep"]').count(), 1, 'the renamed task is still there');
    assert.equal(await nodeTransform(page, 'renamed-sleep'), placeBefore, 'the canvas was not laid out again');
    const spec = JSON.parse(await page.getByTestId('spec-json').inputValue()) as { tasks: { id: string }[] };
    assert.deepEqual(
      spec.tasks.map((t) => t.id),
      ['renamed-sleep'],
    );

    // The same keys in the DAG's own fields do nothing to the canvas either.
    await page.locator('.react-flow__pane').click({ position: { x: 5, y: 5 } });
    const name = page.getByTestId('dag-name');
    await name.click();
    await page.keyboard.press('End');
    await page.keyboard.press('Backspace');
    await page.keyboard.type('l');
    assert.equal(await name.inputValue(), 'New DAl');
    assert.equal(await page.locator('.react-flow__node[data-id="renamed-sleep"]').count(), 1);
    assert.equal(await nodeTransform(page, 'renamed-sleep'), placeBefore);
    await screenshot(page, 'editor-01-renamed');
  });

  test('a dependency is added with the keyboard alone: Tab to the task panel’s list, an arrow key picks the task', async () => {
    const fresh = await signedInPage(h);
    await fresh.goto(`${h.consoleUrl}/editor`);
    await fresh.getByTestId('palette-noop').waitFor();
    /** Tabs forward until the focused element has data-testid `id`; fails if Tab never gets there. */
    const tabTo = async (id: string) => {
      for (let i = 0; i < 200; i++) {
        await fresh.keyboard.press('Tab');
        if (await fresh.evaluate((t) => document.activeElement?.getAttribute('data-testid') === t, id)) return;
      }
      throw new Error(`Tab never reached [data-testid=${id}]`);
    };
    await tabTo('palette-noop');
    await fresh.keyboard.press('Enter');
    await fresh.locator('.react-flow__node[data-id="noop-1"]').waitFor();
    await fresh.keyboard.press('Enter');
    await fresh.locator('.react-flow__node[data-id="noop-2"]').waitFor();
    await until('the panel to show the task just added', async () => (await fresh.getByTestId('task-id').inputValue()) === 'noop-2');

    await fresh.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await tabTo('add-dependency');
    const ring = await fresh.evaluate(() => {
      const cs = getComputedStyle(document.activeElement!);
      return (cs.outlineStyle !== 'none' && Number.parseFloat(cs.outlineWidth) > 0) || cs.boxShadow !== 'none';
    });
    assert.ok(ring, 'the dependency list shows its focus ring');
    await fresh.keyboard.press('ArrowDown');
    await fresh.locator('.react-flow__edge[data-id="noop-1->noop-2"]').waitFor({ state: 'attached' });
    const spec = JSON.parse(await fresh.getByTestId('spec-json').inputValue()) as { tasks: { id: string; dependsOn?: string[] }[] };
    assert.deepEqual(spec.tasks.find((t) => t.id === 'noop-2')?.dependsOn, ['noop-1']);
    // The list offers only what is left to depend on, and goes back to its prompt.
    assert.equal(await fresh.getByTestId('add-dependency').inputValue(), '');
    assert.equal(await fresh.getByTestId('add-dependency').isDisabled(), true, 'no other task is left to depend on');
    await fresh.context().close();
  });

  test('Save is disabled while the draft has issues; after a save the header, address and leave guard follow the saved DAG', async () => {
    const fresh = await signedInPage(h);
    await fresh.goto(`${h.consoleUrl}/editor`);
    const save = fresh.getByTestId('save-dag');
    await fresh.getByTestId('issue-count').waitFor();
    assert.equal(await save.isDisabled(), true, 'a DAG without tasks cannot be saved');
    await fresh.getByTestId('dag-id').fill('e2e-header');
    await fresh.getByTestId('palette-noop').click();
    await fresh.getByTestId('validation-ok').waitFor();
    assert.equal(await save.isDisabled(), false);
    await fresh.getByTestId('unsaved').waitFor();

    // Following a link out of a draft with unsaved changes asks first; "stay" stays.
    const stay = answerDialogs(fresh, false);
    await fresh.locator('a[href="/dags"]').first().click();
    await until('the question', async () => stay.seen.length === 1);
    stay.stop();
    assert.match(stay.seen[0]!.message(), /unsaved changes/);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(new URL(fresh.url()).pathname, '/editor');

    await save.click();
    await fresh.getByTestId('save-result').waitFor();
    await until('the header to name the saved DAG', async () => (await fresh.getByTestId('editor-title').textContent()) === 'Edit e2e-header');
    assert.match((await fresh.getByTestId('editor-subtitle').textContent()) ?? '', /Version 1 is saved; saving a change creates version 2/);
    await until('the address to name the saved DAG', async () => new URL(fresh.url()).searchParams.get('dag') === 'e2e-header');
    assert.equal(await fresh.getByTestId('unsaved').count(), 0);

    // A second version moves the header on again.
    await fresh.getByTestId('palette-noop').click();
    await fresh.getByTestId('unsaved').waitFor();
    await save.click();
    await until('version 2 in the header', async () => /Version 2 is saved/.test((await fresh.getByTestId('editor-subtitle').textContent()) ?? ''));
    assert.equal((await h.store.getDag(parseDagId('e2e-header'))).version, 2);

    // Closing the tab with unsaved changes gets the browser's own question.
    await fresh.getByTestId('palette-noop').click();
    await fresh.getByTestId('unsaved').waitFor();
    const unload = new Promise<Dialog>((resolve) => fresh.once('dialog', resolve));
    await fresh.close({ runBeforeUnload: true });
    const dialog = await unload;
    assert.equal(dialog.type(), 'beforeunload');
    await dialog.accept();
    await fresh.context().close();
  });

  test('the palette says which job types live workers run (shell is off on the test workers)', async () => {
    await page.goto(`${h.consoleUrl}/editor`);
    const shell = page.getByTestId('palette-warning-shell');
    await shell.waitFor();
    assert.match((await shell.textContent()) ?? '', /no live worker runs shell jobs/);
    for (const type of ['noop', 'sleep', 'http']) assert.equal(await page.getByTestId(`palette-warning-${type}`).count(), 0, `${type} runs on every test worker`);
    // The test workers load the example tasks module: the palette names the types they define.
    assert.match((await page.getByTestId('palette-named-types').textContent()) ?? '', /live workers define: flaky, summarize, ticker/);
  });

  test('dark theme: the canvas controls and minimap are drawn dark', async () => {
    await page.goto(`${h.consoleUrl}/editor`);
    await page.locator('.react-flow__controls-button').first().waitFor();
    // The canvas renders light on the server and takes the system's dark scheme as an update
    // right after hydration, which may land a moment after the controls first appear. Before
    // the fix it never landed at all; a bounded wait tells the two apart.
    await page.waitForFunction(() => /\bdark\b/.test(document.querySelector('.react-flow')?.className ?? ''), null, { timeout: 5_000 }).catch(() => undefined);
    const raw = await page.evaluate(() => ({
      flowClass: document.querySelector('.react-flow')!.className,
      button: getComputedStyle(document.querySelector('.react-flow__controls-button')!).backgroundColor,
      minimap: getComputedStyle(document.querySelector('.react-flow__minimap')!).backgroundColor,
      pageBg: getComputedStyle(document.body).backgroundColor,
    }));
    const colours = { flowClass: raw.flowClass, button: luminance(raw.button), minimap: luminance(raw.minimap), pageBg: luminance(raw.pageBg) };
    assert.ok(colours.pageBg < 0.3, `the page itself is dark (${colours.pageBg.toFixed(2)})`);
    assert.match(colours.flowClass, /\bdark\b/);
    assert.ok(colours.button < 0.3, `controls are dark, luminance ${colours.button.toFixed(2)}`);
    assert.ok(colours.minimap < 0.3, `minimap is dark, luminance ${colours.minimap.toFixed(2)}`);
    await screenshot(page, 'editor-02-dark');
  });
});

describe('DAG page writes', () => {
  test('a double click on Trigger run queues one run; a paused DAG asks first', async () => {
    await h.store.putDag(chain('e2e-trigger', 50), SHARDS);
    await page.goto(`${h.consoleUrl}/dags/e2e-trigger`);
    const trigger = page.getByTestId('trigger-run');
    await trigger.dblclick();
    await until('a run', async () => (await runCount('e2e-trigger')) >= 1);
    // Both clicks' requests have been answered well within this.
    await new Promise((r) => setTimeout(r, 1_500));
    assert.equal(await runCount('e2e-trigger'), 1, 'one double click, one run');

    // A second, separate click is a second run once the first click's key has lapsed: within
    // KEY_KEPT_MS of its answer a click asks for the same run (e2e/trigger-params.test.ts).
    await until('the button to be ready again', async () => !(await trigger.isDisabled()));
    await new Promise((r) => setTimeout(r, KEY_KEPT_MS + 500));
    await trigger.click();
    await until('a second run', async () => (await runCount('e2e-trigger')) === 2);

    await h.store.setPaused(parseDagId('e2e-trigger'), true);
    await page.getByTestId('paused-badge').waitFor();
    const no = answerDialogs(page, false);
    await trigger.click();
    await until('the question', async () => no.seen.length === 1);
    no.stop();
    assert.match(no.seen[0]!.message(), /paused/);
    await new Promise((r) => setTimeout(r, 1_000));
    assert.equal(await runCount('e2e-trigger'), 2, 'declined: no run');
    const yes = answerDialogs(page, true);
    await new Promise((r) => setTimeout(r, KEY_KEPT_MS + 500));
    await trigger.click();
    await until('a run once confirmed', async () => (await runCount('e2e-trigger')) === 3);
    yes.stop();
  });

  test('a paused DAG shows "paused" for its next run (page, list, CLI) and its real state in the editor', async () => {
    await h.store.putDag({ ...chain('e2e-held', 50), schedule: { kind: 'interval', everyMs: 3_600_000 } }, SHARDS);
    await h.store.setPaused(parseDagId('e2e-held'), true);
    assert.ok((await h.store.getDag(parseDagId('e2e-held'))).nextRunAt, 'the store still has a next slot; it will not be run while paused');

    await page.goto(`${h.consoleUrl}/dags/e2e-held`);
    await page.getByTestId('next-run-paused').waitFor();
    await page.goto(`${h.consoleUrl}/dags`);
    await page.getByTestId('dag-search').fill('e2e-held');
    const cell = page.getByTestId('next-run-e2e-held');
    await until('the list to say paused', async () => ((await cell.textContent()) ?? '') === 'paused');

    const cli = await execFileAsync(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'apps', 'cli', 'src', 'cli.ts'), 'dags', '--search', 'e2e-held'], {
      cwd: REPO_ROOT,
      env: { ...process.env, DATABASE_URL: h.databaseUrl },
    });
    const row = cli.stdout.split('\n').find((l) => l.includes('e2e-held'));
    assert.ok(row, `the CLI lists the DAG: ${cli.stdout}`);
    assert.match(row, /\bpaused\b/, `the CLI's next run column says paused: ${row}`);

    await page.goto(`${h.consoleUrl}/editor?dag=e2e-held`);
    const json = page.getByTestId('spec-json');
    await until('the DAG to load', async () => (JSON.parse(await json.inputValue()) as { id: string }).id === 'e2e-held');
    assert.equal((JSON.parse(await json.inputValue()) as { paused: boolean }).paused, true);

    // Saving "paused": false resumes the DAG; a toggle alone is no new version.
    const text = await json.inputValue();
    await json.fill(text.replace('"paused": true', '"paused": false'));
    await page.getByTestId('dag-name').click();
    await page.getByTestId('save-dag').click();
    const result = page.getByTestId('save-result');
    await result.waitFor();
    assert.match((await result.textContent()) ?? '', /now resumed/);
    const dag = await h.store.getDag(parseDagId('e2e-held'));
    assert.equal(dag.paused, false);
    assert.equal(dag.version, 1);
  });

  test('the catch-up choice asks before it saves a new version', async () => {
    await h.store.putDag({ ...chain('e2e-catchup', 50), schedule: { kind: 'interval', everyMs: 3_600_000 } }, SHARDS);
    await page.goto(`${h.consoleUrl}/dags/e2e-catchup`);
    const select = page.getByTestId('catchup-policy');
    await select.waitFor();
    const no = answerDialogs(page, false);
    await select.selectOption('none');
    await until('the question', async () => no.seen.length === 1);
    no.stop();
    assert.match(no.seen[0]!.message(), /version 2/);
    await new Promise((r) => setTimeout(r, 1_000));
    assert.equal((await h.store.listDagVersions(parseDagId('e2e-catchup'))).length, 1, 'declined: no new version');
    assert.equal(await select.inputValue(), 'latest', 'the choice shows the stored policy again');

    const yes = answerDialogs(page, true);
    await select.selectOption('all');
    await page.getByTestId('version-2').waitFor();
    yes.stop();
    assert.equal((await h.store.getDag(parseDagId('e2e-catchup'))).spec.catchup.policy, 'all');
  });
});
