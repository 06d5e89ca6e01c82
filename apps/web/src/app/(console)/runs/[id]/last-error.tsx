'use client';

import type { JobTimeline } from '@fenceline/db/console';

/**
 * The job's last error, said for what it is. For a job that failed for good it is the
 * job's error. For a job that was retried (and may since have succeeded) it is what an
 * earlier attempt said, so it is shown as that attempt's, in a note rather than an alarm.
 */
export function LastError({ job }: { job: JobTimeline }) {
  const error = job.job.lastError;
  if (!error) return null;
  if (job.job.state === 'failed') {
    return (
      <div className="error-box" data-testid="job-error">
        <span className="error-code">ERROR</span>
        <span className="error-message">{error}</span>
      </div>
    );
  }
  // The latest attempt that failed and was retried; the job row keeps only the latest error.
  const retried = [...job.attempts].reverse().find((a) => a.outcome === 'retrying');
  // Its number in the job's life, as the attempts table shows it: the budget's number repeats after a clear.
  const n = retried?.number ?? null;
  const after = job.job.state === 'succeeded' ? 'the job has since succeeded' : job.job.state === 'leased' ? 'a later attempt is running' : 'a retry is queued';
  return (
    <div className="note" data-testid="earlier-error">
      <strong>{n ? `Attempt ${n} failed and was retried` : 'An earlier attempt failed and was retried'}</strong> ({after}):
      <div className="small muted error-message">{error}</div>
    </div>
  );
}
