import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { INVARIANTS } from '@fenceline/sim';
import { ARTIFACTS, VIEWER, screenshot, signedInPage, startHarness, until, type Harness } from './src/env';

/**
 * The simulator page in real Chromium: knobs that keep what is typed, a small fan-out run in
 * a Web Worker with its plots and replay, an unfinished long run, and a comparison of the
 * cap, no cap and lending under faults. It writes nothing to the store, so a viewer runs it.
 */

let h: Harness;

before(async () => {
  h = await startHarness();
});

after(async () => {
  await h?.stop();
});

describe('simulator', () => {
  test('simulator: a viewer runs a small fan-out in a Web Worker and sees the cap held and every invariant kept', async () => {
    // A viewer, because the simulator writes nothing to the store and so is open to every role.
    const viewer = await signedInPage(h, VIEWER);
    await viewer.getByTestId('nav-simulator').click();
    await viewer.getByTestId('sim-run').waitFor();

    // Knobs keep exactly what is typed, key by key: a bad value is shown with the range it
    // must be in, and Run refuses to start while it stands.
    const knob = (name: string) => viewer.getByTestId(`sim-knob-${name}`);
    const typeInto = async (name: string, text: string) => {
      const input = knob(name);
      await input.click();
      await input.press('Control+A');
      await input.press('Backspace');
      await input.pressSequentially(text);
    };
    await typeInto('workers', '-5');
    assert.equal(await knob('workers').inputValue(), '-5');
    assert.match((await knob('workers-error').textContent()) ?? '', /-5 is out of range: enter a whole number from 1 to 5,000/);
    await typeInto('workerPause', '1.5');
    assert.equal(await knob('workerPause').inputValue(), '1.5');
    assert.match((await knob('workerPause-error').textContent()) ?? '', /probability from 0 to 1/);
    await viewer.getByTestId('sim-run').click();
    assert.match((await viewer.getByTestId('sim-knob-refusal').textContent()) ?? '', /Not started: Workers, Worker pause need a valid value/);
    assert.equal(await viewer.getByTestId('sim-side-0').count(), 0, 'no simulation may start with invalid knobs');
    // A half-typed probability stays as typed; so does a count typed into a cleared field.
    await typeInto('workerPause', '.5');
    assert.equal(await knob('workerPause').inputValue(), '.5');
    assert.equal(await knob('workerPause-error').count(), 0);
    await typeInto('workerPause', '0');
    await typeInto('workers', '50');
    assert.equal(await knob('workers').inputValue(), '50');
    assert.equal(await viewer.getByTestId('sim-knob-refusal').count(), 0);
    // Unticking Cap off brings back the cap the user had set.
    await typeInto('cap', '45');
    await knob('cap-off').check();
    await knob('cap-off').uncheck();
    assert.equal(await knob('cap').inputValue(), '45');

    // 50 workers, a 50-job fan-out and five other DAGs: about two seconds of simulation.
    await typeInto('fanoutTasks', '50');
    await typeInto('otherDags', '5');
    await typeInto('cap', '30');
    await typeInto('seed', '1');
    assert.equal(await viewer.getByTestId('sim-liveness-notice').count(), 0, 'this fan-out fits in the ten healed minutes');
    await viewer.getByTestId('sim-run').click();
    const side = viewer.getByTestId('sim-side-0');
    await until('the simulation to finish', async () => ((await side.getAttribute('data-state')) === 'running' ? null : true), 60_000);
    assert.equal(await side.getAttribute('data-state'), 'done', (await viewer.getByTestId('sim-status-0').textContent()) ?? '');
    assert.match((await side.locator('h2').first().textContent()) ?? '', /^Simulation: cap 30%, seed 1$/);

    // The seed's arithmetic: a cap of floor(30% of 50) = 15 leases, so 50 five-minute jobs
    // take four waves, about 20 minutes give or take the jobs' 20% jitter.
    assert.equal(await viewer.getByTestId('sim-peak-0').locator('.stat-value').textContent(), '15');
    assert.match((await viewer.getByTestId('sim-peak-0').locator('.stat-hint').textContent()) ?? '', /cap 15 of 50 slots/);
    assert.equal(await viewer.getByTestId('sim-makespan-0').getAttribute('data-finished'), 'true');
    const makespan = Number.parseFloat((await viewer.getByTestId('sim-makespan-0').textContent()) ?? '');
    assert.ok(makespan >= 15 && makespan <= 30, `fan-out makespan ${makespan} min`);
    assert.match((await viewer.getByTestId('sim-fanout-progress-0').textContent()) ?? '', /^half done at [\d.]+ min, 99% at [\d.]+ min$/);

    assert.equal(await viewer.getByTestId('sim-violations-0').textContent(), '0');
    const table = viewer.getByTestId('sim-invariants-0');
    assert.equal(await table.getAttribute('data-violations'), '0');
    const rows = table.locator('tbody tr');
    // The table lists every invariant the checker knows, so adding one cannot leave it behind.
    assert.equal(await rows.count(), Object.keys(INVARIANTS).length);
    assert.match((await viewer.getByTestId('sim-invariant-0-I11').textContent()) ?? '', /reserve/);
    for (const row of await rows.all()) assert.equal(await row.getAttribute('data-violations'), '0');

    // The plots, each with labelled axes: running jobs (a line per DAG group), lease
    // expiries and refused writes (none without faults), shard leaders, start latency.
    const running = viewer.getByTestId('sim-running-chart-0');
    await running.locator('polyline').first().waitFor();
    assert.equal(await running.locator('polyline').count(), 2, 'fanout and others');
    assert.ok((await running.locator('[data-axis=x] text').count()) >= 3, 'the time axis has ticks');
    assert.match((await running.locator('[data-axis=x]').textContent()) ?? '', /virtual minutes/);
    assert.ok((await running.locator('[data-axis=y] text').count()) >= 3, 'the y axis has ticks');
    assert.equal(await viewer.getByTestId('sim-expiry-chart-0').locator('polyline').count(), 2);
    const totals0 = viewer.getByTestId('sim-expiry-totals-0');
    assert.equal(await totals0.getAttribute('data-expired'), '0');
    const leaders = viewer.getByTestId('sim-leader-chart-0');
    assert.equal(await leaders.getAttribute('data-shards'), '16');
    assert.ok(Number(await leaders.getAttribute('data-changes')) >= 16, 'every shard gets a first leader');
    assert.equal(await leaders.locator('[data-span]').count(), Number(await leaders.getAttribute('data-changes')));
    const latency = viewer.getByTestId('sim-latency-chart-0');
    assert.equal(await latency.getAttribute('data-bars'), '8');
    // The other DAGs start within milliseconds: their p50 bar is too short to see against
    // the fan-out's minutes, so it is drawn as a mark on the baseline and labelled.
    const zeroBar = latency.locator('[data-bar="others p50"]');
    assert.ok(Number(await zeroBar.getAttribute('data-value')) < 1, 'the other DAGs start at once');
    assert.equal(await zeroBar.locator('rect').count(), 1);
    assert.ok(((await zeroBar.locator('rect').boundingBox())?.height ?? 0) >= 2, 'the mark is visible');
    assert.match((await zeroBar.locator('text').first().textContent()) ?? '', /^(0 s|\d+ ms)$/);
    assert.equal(await zeroBar.locator('text').nth(1).textContent(), 'p50');

    // The replay: the fan-out DAG drawn with React Flow, its first six tasks on their own and
    // the other 44 as one group node counted by state.
    const replay = viewer.getByTestId('sim-replay-0');
    await replay.waitFor();
    assert.equal(await replay.getAttribute('data-dag'), 'fanout-0');
    const nodes = replay.locator('.react-flow__node');
    await nodes.first().waitFor();
    assert.equal(await nodes.count(), 7);
    const group = replay.getByTestId('replay-group-node');
    assert.equal(await group.getAttribute('data-total'), '44');
    // The group's label is shown whole: its count, and its first … last task on a line of their own.
    assert.equal(await group.locator('.task-node-title').textContent(), '+44 more');
    const range = group.locator('.task-node-meta').first();
    assert.equal(await range.textContent(), 't6 … t49');
    assert.ok(await range.evaluate((el) => el.scrollWidth <= el.clientWidth), 'the range fits its node');
    const legend = viewer.getByTestId('replay-legend-0');
    const legendCount = async (state: string) => Number(await legend.locator(`[data-state=${state}]`).getAttribute('data-count'));

    // Play runs virtual time forward; pause holds it.
    const time = viewer.getByTestId('replay-time-0');
    const startMs = Number(await time.getAttribute('data-at-ms'));
    await viewer.getByTestId('replay-play-0').click();
    await until('playback to advance virtual time', async () => Number(await time.getAttribute('data-at-ms')) > startMs + 5_000, 10_000);
    await viewer.getByTestId('replay-play-0').click();
    assert.equal(await viewer.getByTestId('replay-play-0').getAttribute('data-playing'), 'false');

    // Halfway through the fan-out some jobs are leased, never more than the cap, and the
    // group is a mix. The slider is set the way an input event from the browser sets it.
    const slider = viewer.getByTestId('replay-slider-0');
    const midMs = Number(await replay.getAttribute('data-start-ms')) + Math.round((makespan * 60_000) / 2);
    await slider.evaluate((el, value) => {
      Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')!.set!.call(el, value);
      el.dispatchEvent(new Event('input', { bubbles: true }));
    }, String(midMs));
    await until('the replay to show the middle of the run', async () => (await replay.getAttribute('data-run-state')) === 'running');
    const leasedMid = await legendCount('leased');
    assert.ok(leasedMid >= 1 && leasedMid <= 15, `${leasedMid} leased halfway`);
    assert.equal(await group.getAttribute('data-state'), 'mixed');
    await replay.screenshot({ path: join(ARTIFACTS, '12-simulator-replay-mid.png') });

    // The End key takes the slider to the end of the simulation: every node has succeeded.
    await slider.focus();
    await slider.press('End');
    await until('the replay to reach the end of the run', async () => (await replay.getAttribute('data-run-state')) === 'succeeded');
    const states = await replay.locator('.react-flow__node [data-state]').evaluateAll((els) => els.map((e) => e.getAttribute('data-state')));
    assert.equal(states.length, 7);
    assert.ok(
      states.every((s) => s === 'succeeded'),
      `node states at the end: ${states.join(', ')}`,
    );
    assert.equal(await group.getAttribute('data-count-succeeded'), '44');
    assert.equal(await legendCount('succeeded'), 50);
    await replay.screenshot({ path: join(ARTIFACTS, '12-simulator-replay-end.png') });
    await screenshot(viewer, '12-simulator');

    // Leaving the page and coming back finds the same knobs and the same results.
    const workersTyped = await knob('workers').inputValue();
    await viewer.getByTestId('nav-dags').click();
    await viewer.waitForURL(/\/dags/);
    await viewer.getByTestId('nav-simulator').click();
    await viewer.getByTestId('sim-side-0').waitFor();
    assert.equal(await knob('workers').inputValue(), workersTyped);
    assert.equal(await viewer.getByTestId('sim-side-0').getAttribute('data-state'), 'done');
    assert.equal(Number.parseFloat((await viewer.getByTestId('sim-makespan-0').textContent()) ?? ''), makespan);

    // One worker and no other DAGs: the 200 jobs need far longer than the page simulates.
    // The page says so before the run, and the report shows the fan-out unfinished, how far
    // it got, no makespan, and I7 violated; with no other DAGs their latency reads as none.
    await typeInto('workers', '1');
    await typeInto('fanoutTasks', '200');
    await typeInto('otherDags', '0');
    const notice = viewer.getByTestId('sim-liveness-notice');
    assert.equal(await notice.getAttribute('data-tone'), 'warn');
    assert.match((await notice.textContent()) ?? '', /Expect it to end unfinished, with I7 reporting it/);
    await viewer.getByTestId('sim-run').click();
    // The previous run's side says 'done' until the page has replaced it.
    await until('the long simulation to start', async () => (await side.getAttribute('data-state')) === 'running');
    await until('the long simulation to finish', async () => ((await side.getAttribute('data-state')) === 'running' ? null : true), 300_000);
    assert.equal(await side.getAttribute('data-state'), 'done', (await viewer.getByTestId('sim-status-0').textContent()) ?? '');
    assert.equal(await viewer.getByTestId('sim-makespan-0').getAttribute('data-finished'), 'false');
    assert.equal(await viewer.getByTestId('sim-makespan-0').textContent(), 'not finished');
    const progress = (await viewer.getByTestId('sim-fanout-progress-0').textContent()) ?? '';
    const done = Number(/^(\d+) of 200 jobs done; half done at [\d.]+ min, 99% at —$/.exec(progress)?.[1] ?? Number.NaN);
    assert.ok(done >= 100 && done < 200, progress);
    assert.ok(Number(await viewer.getByTestId('sim-invariant-0-I7').getAttribute('data-violations')) >= 1, 'I7 reports the unfinished fan-out');
    assert.equal(await viewer.getByTestId('sim-other-latency-0').textContent(), 'none');
    assert.equal(await viewer.getByTestId('sim-running-chart-0').locator('polyline').count(), 1, 'no line for other DAGs');
    await screenshot(viewer, '12-simulator-unfinished');

    // Compare runs the fanout scenario's three variants side by side (the cap, no cap, and
    // the cap lending idle slots above a reserve), with faults that expire leases and move
    // shard leaders: each side has its own replay and plots, and every plot shares one scale.
    await typeInto('workers', '50');
    await typeInto('fanoutTasks', '50');
    await typeInto('otherDags', '5');
    await typeInto('workerPause', '0.3');
    await typeInto('leaderCrash', '0.05');
    await viewer.getByTestId('sim-compare').click();
    await until(
      'every side of the comparison to finish',
      async () => {
        // The later sides exist only once the page has started the comparison.
        const states = await Promise.all([0, 1, 2].map((i) => viewer.getByTestId(`sim-side-${i}`).getAttribute('data-state', { timeout: 1_000 })));
        return states.every((s) => s === 'done');
      },
      120_000,
    );
    for (const i of [0, 1]) {
      assert.equal(await viewer.getByTestId(`sim-replay-${i}`).locator('.react-flow__node').count(), 7);
      const totals = viewer.getByTestId(`sim-expiry-totals-${i}`);
      assert.ok(Number(await totals.getAttribute('data-expired')) > 0, `side ${i}: leases expired`);
      assert.ok(Number(await totals.getAttribute('data-refused')) > 0, `side ${i}: writes refused`);
      assert.ok(Number(await viewer.getByTestId(`sim-leader-summary-${i}`).getAttribute('data-takeovers')) > 0, `side ${i}: a shard changed leader`);
      assert.ok((await viewer.getByTestId(`sim-leader-chart-${i}`).locator('[data-span=takeover]').count()) > 0);
      // The four headline figures stay on one row.
      const first = await viewer.getByTestId(`sim-headline-${i}`).boundingBox();
      const last = await viewer.getByTestId(`sim-outcome-${i}`).boundingBox();
      assert.ok(first && last && Math.abs(first.y - last.y) < 2, `side ${i}: the stats are on one row`);
    }
    assert.match((await viewer.getByTestId('sim-side-0').locator('h2').first().textContent()) ?? '', /^Simulation A: cap 30%/);
    assert.match((await viewer.getByTestId('sim-side-1').locator('h2').first().textContent()) ?? '', /^Simulation B: cap off/);
    assert.match((await viewer.getByTestId('sim-side-2').locator('h2').first().textContent()) ?? '', /^Simulation C: cap 30% lending, reserve 5%/);
    // Only the lending side shows lent leases: the fan-out borrowed slots beyond its cap of 15.
    assert.equal(await viewer.getByTestId('sim-lent-0').count(), 0);
    assert.equal(await viewer.getByTestId('sim-lent-1').count(), 0);
    assert.ok(Number(await viewer.getByTestId('sim-lent-2').getAttribute('data-lent')) > 0, 'the lending side lent slots');
    for (const chart of ['running', 'expiry', 'latency']) {
      const tops = await Promise.all([0, 1, 2].map((i) => viewer.getByTestId(`sim-${chart}-chart-${i}`).getAttribute('data-y-max')));
      assert.ok(tops[0] === tops[1] && tops[1] === tops[2], `the ${chart} plots share a y scale`);
    }
    await screenshot(viewer, '12-simulator-compare');
    await viewer.context().close();
  });
});
