'use client';

import { useQuery } from '@tanstack/react-query';
import { livePoll, useTRPC } from '@/client/trpc';
import { DataTable } from '@/components/data-table';
import { ErrorBox } from '@/components/errors';
import { Card } from '@/components/ui';
import { effectSummary } from '@/lib/effect-summary';

const WORD_CLASS = { applied: 'strong', 'refused as stale': 'warn-text strong', 'not recorded': 'muted' } as const;

/**
 * Each job's effect as its accepted attempt reported it: applied, refused as stale (and by
 * which fence), or not recorded. A job that has written no result yet has recorded none.
 */
export function EffectsCard({ runId, jobs, onSelect }: { runId: string; jobs: { id: string; taskId: string }[]; onSelect: (taskId: string) => void }) {
  const trpc = useTRPC();
  const q = useQuery(trpc.runs.effects.queryOptions({ runId }, { refetchInterval: livePoll }));
  const byJob = new Map((q.data ?? []).map((r) => [String(r.jobId), r]));
  return (
    <Card title="Effects">
      <ErrorBox error={q.error} what="Reading the effect outcomes" />
      <DataTable
        rows={jobs}
        empty="This run has no jobs."
        testId="run-effects"
        className="table compact"
        columns={[{ head: 'Task' }, { head: 'Effect' }, { head: 'Why' }]}
        rowKey={(j) => j.id}
        rowAttributes={(j) => ({ 'data-testid': `effect-${j.taskId}`, 'data-effect': effectSummary(byJob.get(j.id)?.effects).word })}
      >
        {(j) => {
          const s = effectSummary(byJob.get(j.id)?.effects);
          return (
            <>
              <td>
                <button type="button" className="link" onClick={() => onSelect(j.taskId)}>
                  {j.taskId}
                </button>
              </td>
              <td className={WORD_CLASS[s.word]} data-testid={`effect-word-${j.taskId}`}>
                {s.word}
              </td>
              <td className="small" data-testid={`effect-detail-${j.taskId}`} title={s.lines.join('\n')}>
                {s.detail}
              </td>
            </>
          );
        }}
      </DataTable>
    </Card>
  );
}
