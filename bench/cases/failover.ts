import type { BenchContext, CaseResult } from '../lib';
export async function failover(_ctx: BenchContext): Promise<CaseResult> {
  throw new Error('not written yet');
}
