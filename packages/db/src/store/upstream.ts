import { sql } from 'drizzle-orm';
import { checkUpstreamSize, checkUpstreamTasks } from '@fenceline/core';
import { type LeaseRef, type UpstreamOutput } from '@fenceline/core/store';
import { array, rows, type Executor } from './db';
import { fencedWhere, refuse } from './fencing';
import { isId, toId, toNumber } from './rows';

/**
 * The accepted outputs of a job's upstream tasks, read for the holder of its current lease
 * (WorkerProtocolStore.upstreamOutputs), in one statement: the fenced check on the job and
 * the read of its run's succeeded jobs of those tasks, joined to the result the result store
 * accepted at each job's fence. Only tasks the job's task depends on (in the version its
 * run pinned) are read: a job cannot read the outputs of the rest of its run. A refused check is classified by one more read, as a
 * refused write is.
 */
export async function upstreamOutputs(db: Executor, ref: LeaseRef, taskIds: string[]): Promise<UpstreamOutput[]> {
  const wanted = [...new Set(checkUpstreamTasks(taskIds))];
  if (!isId(ref.jobId)) throw await refuse(db, ref, 'upstreamOutputs');
  const result = await rows(
    db,
    sql`with me as (select j.run_id, j.task_id from jobs j where ${fencedWhere(ref, 'j')}
          and not exists (select 1 from results where job_id = ${ref.jobId} and fence >= ${ref.fence})),
        deps as (
          select jsonb_array_elements_text(jsonb_path_query_first(v.spec, '$.tasks[*] ? (@.id == $task).dependsOn', jsonb_build_object('task', me.task_id))) as task_id
          from me join runs rn on rn.id = me.run_id
          join dag_versions v on v.dag_id = rn.dag_id and v.version = rn.dag_version
        ),
        u as (
          select j.task_id, j.id, r.fence, r.output from jobs j join results r on r.job_id = j.id and r.fence = j.fence
          where j.run_id = (select run_id from me) and j.task_id = any(${array(wanted, 'text')}) and j.task_id in (select task_id from deps)
            and j.state = 'succeeded' and r.outcome = 'succeeded'
        )
        select exists (select 1 from me) as held, u.* from (select 1) as one left join u on true`,
  );
  if (result[0]?.held !== true) throw await refuse(db, ref, 'upstreamOutputs');
  const byTask = new Map<string, UpstreamOutput>();
  for (const r of result) {
    if (r.task_id === null || r.task_id === undefined) continue;
    byTask.set(String(r.task_id), { taskId: String(r.task_id), jobId: toId(r.id) as UpstreamOutput['jobId'], fence: toNumber(r.fence), output: r.output ?? null });
  }
  return checkUpstreamSize(
    ref.jobId,
    wanted.flatMap((taskId) => byTask.get(taskId) ?? []),
  );
}
