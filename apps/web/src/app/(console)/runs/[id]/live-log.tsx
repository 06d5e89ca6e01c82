import { useQuery } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { LIVE_MS, useTRPC } from '@/client/trpc';
import { ErrorBox } from '@/components/errors';

/**
 * The tail of a running attempt's log: the lines its worker streamed with its renewals,
 * read a chunk at a time after the last one shown, every second while the job is leased.
 * It is keyed by the attempt (job and fence), so a retry starts a new tail.
 */
export function LiveLog({ jobId, fence }: { jobId: string; fence: number }) {
  const trpc = useTRPC();
  const [text, setText] = useState('');
  const [lastSeq, setLastSeq] = useState(0);
  const q = useQuery(trpc.runs.logChunks.queryOptions({ jobId, fence, afterSeq: lastSeq }, { refetchInterval: LIVE_MS }));
  useEffect(() => {
    const chunks = q.data ?? [];
    const fresh = chunks.filter((c) => c.seq > lastSeq);
    if (fresh.length === 0) return;
    setText((t) => t + fresh.map((c) => c.text).join(''));
    setLastSeq(fresh[fresh.length - 1]!.seq);
  }, [q.data, lastSeq]);
  // Kept scrolled to the end, as a tail is.
  const box = useRef<HTMLPreElement>(null);
  useEffect(() => {
    if (box.current) box.current.scrollTop = box.current.scrollHeight;
  }, [text]);
  return (
    <div data-testid="live-log" data-fence={fence}>
      <h3>
        Live log <span className="muted small">attempt under fence {fence}, streamed with its renewals</span>{' '}
        <a className="target-link" href={`/api/jobs/${jobId}/attempts/${fence}/logs`} download data-testid="live-log-download">
          download so far
        </a>
      </h3>
      <ErrorBox error={q.error} what="Reading the live log" />
      <pre className="logs" ref={box} data-testid="live-log-text">
        {text || 'Nothing streamed yet: lines come with the next renewal of the lease.'}
      </pre>
    </div>
  );
}
