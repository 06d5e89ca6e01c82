import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

/**
 * The accessibility scan of the browser tests: axe-core's own source injected into the page
 * and run there, judged by impact. A serious or critical violation fails; moderate and minor
 * ones are reported by the caller's choice but never fail.
 */

const AXE_SOURCE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

/** The impacts that fail a scan. */
export const FAILING_IMPACTS = new Set(['serious', 'critical']);

export interface AxeFinding {
  rule: string;
  impact: string;
  help: string;
  /** Each offending node's selector and axe's summary of what is wrong with it. */
  nodes: { target: string; summary: string }[];
}

interface AxeResults {
  violations: { id: string; impact: string | null; help: string; nodes: { target: unknown[]; failureSummary?: string }[] }[];
}

/** Runs axe on the page as it is now (WCAG 2.x A and AA, and axe's best practices) and returns its violations. */
export async function axeScan(page: Page): Promise<AxeFinding[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ path: AXE_SOURCE });
  const results = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(context: Document, options: unknown): Promise<unknown> } }).axe;
    return (await axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] },
      resultTypes: ['violations'],
    })) as AxeResults;
  });
  return (results as AxeResults).violations.map((v) => ({
    rule: v.id,
    impact: v.impact ?? 'unknown',
    help: v.help,
    nodes: v.nodes.map((n) => ({ target: n.target.map(String).join(' '), summary: (n.failureSummary ?? '').replace(/\s+/g, ' ').trim() })),
  }));
}

/** The findings that fail, one readable paragraph each (rule, impact, what, and the first few nodes). */
export function failingLines(findings: AxeFinding[]): string[] {
  return findings
    .filter((f) => FAILING_IMPACTS.has(f.impact))
    .map((f) => {
      const shown = f.nodes.slice(0, 4).map((n) => `    ${n.target}: ${n.summary}`);
      const more = f.nodes.length > 4 ? [`    ... and ${f.nodes.length - 4} more`] : [];
      return [`  ${f.rule} (${f.impact}): ${f.help}`, ...shown, ...more].join('\n');
    });
}
