import { ErrorBox } from '@/components/errors';
import { Time } from '@/components/time';
import { StateBadge } from '@/components/ui';

interface ShownAttempt {
  jobId: string;
  fence: number;
  attempt: number;
  workerId: string;
  outcome: string;
  error: string | null;
  logs: string | null;
  endedAt: Date | string;
}

/**
 * The logs of every attempt that wrote a result, oldest first, each with a link that
 * downloads it as a file: the result above is only the last attempt's. Each is named by its
 * number in the job's whole life (numberOf, by fence), as the attempts table names it.
 */
export function AttemptLogs({ attempts, error, numberOf }: { attempts: ShownAttempt[] | undefined; error: unknown; numberOf: (fence: number) => number | undefined }) {
  return (
    <div data-testid="attempt-logs">
      <h3>Logs of every attempt</h3>
      <ErrorBox error={error} what="Reading the attempts" />
      {attempts && attempts.length === 0 ? <div className="muted">No attempt has written a result yet.</div> : null}
      {attempts?.map((a) => (
        <details key={a.fence} open={a === attempts.at(-1)} data-testid={`attempt-${a.fence}`}>
          <summary>
            attempt {numberOf(a.fence) ?? a.attempt} · fence <code>{a.fence}</code> · <code>{a.workerId}</code> · <StateBadge state={a.outcome} /> · <Time at={a.endedAt} />
          </summary>
          {/* Outside the summary: a link inside a control that toggles is a control in a control. */}
          <a className="target-link" href={`/api/jobs/${a.jobId}/attempts/${a.fence}/logs`} download data-testid={`attempt-download-${a.fence}`}>
            download
          </a>
          {a.error ? <pre className="logs bad">{a.error}</pre> : null}
          <pre className="logs" data-testid={`attempt-log-${a.fence}`}>
            {a.logs ?? 'The worker captured no logs for this attempt.'}
          </pre>
        </details>
      ))}
    </div>
  );
}
