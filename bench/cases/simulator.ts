import type { BenchContext, CaseResult } from '../lib';
export async function simulatorSpeed(_ctx: BenchContext): Promise<CaseResult> {
  throw new Error('not written yet');
}
