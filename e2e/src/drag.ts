import assert from 'node:assert/strict';
import type { Locator, Page } from 'playwright-core';

/**
 * A handle's box once it has stopped moving: the canvas may still be fitting its view to
 * nodes just added, and a drag aimed at where a handle was a moment ago connects nothing.
 */
export async function settledBox(handle: Locator): Promise<{ x: number; y: number; width: number; height: number }> {
  let last = await handle.boundingBox();
  for (let i = 0; i < 40; i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const now = await handle.boundingBox();
    if (last && now && now.x === last.x && now.y === last.y) return now;
    last = now;
  }
  assert.ok(last, 'the handle must be on screen');
  return last;
}

/** Drags from one React Flow handle to another with real mouse events, the way an author does. */
export async function dragConnect(p: Page, from: Locator, to: Locator): Promise<void> {
  const a = await settledBox(from);
  const b = await settledBox(to);
  await p.mouse.move(a.x + a.width / 2, a.y + a.height / 2);
  await p.mouse.down();
  await p.mouse.move((a.x + b.x) / 2, (a.y + b.y) / 2 + 30, { steps: 8 });
  await p.mouse.move(b.x + b.width / 2, b.y + b.height / 2, { steps: 8 });
  await p.mouse.up();
}
