'use client';

import { useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { LIVE_MS, useTRPC } from '@/client/trpc';
import { ErrorBox } from '@/components/errors';
import { relative } from '@/components/format';
import { Time } from '@/components/time';
import { Card, LiveDot, PageHeader } from '@/components/ui';
import { plural } from '@/lib/plural';

const REASONS: Record<string, string> = {
  new: 'first leader',
  expired: 'previous leader stopped renewing (crashed or stalled)',
  released: 'previous leader released it',
  reclaimed: 'the same node id took its own lease again (a restarted process), under a new epoch',
  share: 'handed to a node short of its share of the shards (FENCELINE_SHARE_SHARDS=on)',
  stop: 'the node was stopped gracefully',
};

/** Ticks every 250 ms so lease countdowns move between polls. */
function useTicker(): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 250);
    return () => clearInterval(timer);
  }, []);
  return now;
}

export default function ShardsPage() {
  const trpc = useTRPC();
  const q = useQuery(trpc.cluster.shards.queryOptions(undefined, { refetchInterval: LIVE_MS }));
  const local = useTicker();
  const s = q.data;
  // Countdowns use store time plus the time since the poll, so a skewed browser clock does not lie.
  const skew = s ? new Date(s.now).getTime() - (q.dataUpdatedAt || local) : 0;
  const storeNow = local + skew;
  return (
    <>
      <PageHeader
        title={
          <>
            Shards <LiveDot fetching={q.isFetching} />
          </>
        }
        subtitle={
          s
            ? `${plural(s.shardCount, 'shard')} · scheduler nodes seen in the last ${Math.round(s.liveWindowMs / 1000)} s: ${
                s.nodes.map((n) => `${n} (leads ${s.shards.filter((x) => x.led && x.holder === n).length})`).join(', ') || 'none'
              }`
            : 'Loading…'
        }
      />
      <ErrorBox error={q.error} what="Reading shard leadership" />
      {s ? (
        <>
          <div className="shard-cards">
            {s.shards.map((shard) => {
              const leftMs = shard.expiresAt ? new Date(shard.expiresAt).getTime() - storeNow : 0;
              return (
                <div
                  key={shard.shard}
                  className={`shard-card ${shard.led ? 'led' : 'unled'}`}
                  data-testid={`shard-${shard.shard}`}
                  data-leader={shard.led ? (shard.holder ?? '') : ''}
                  data-epoch={shard.epoch}
                >
                  <div className="shard-card-head">
                    <span className="shard-no">Shard {shard.shard}</span>
                    <span className={`badge ${shard.led ? 'state-succeeded' : 'state-failed'}`}>{shard.led ? 'led' : 'no leader'}</span>
                  </div>
                  <div className="shard-leader" data-testid={`shard-${shard.shard}-leader`}>
                    {shard.led ? shard.holder : <span className="bad-text">nobody holds a live lease</span>}
                  </div>
                  <div className="kv small">
                    <span>Epoch</span>
                    <strong data-testid={`shard-${shard.shard}-epoch`}>{shard.epoch}</strong>
                    <span>Lease</span>
                    <span className="countdown">
                      {shard.led
                        ? leftMs > 0
                          ? `expires in ${(leftMs / 1000).toFixed(1)} s`
                          : 'expiring now'
                        : shard.expiresAt
                          ? `expired ${relative(shard.expiresAt, storeNow)}`
                          : 'never held'}
                    </span>
                    <span>Since</span>
                    <span>{shard.acquiredAt ? relative(shard.acquiredAt, storeNow) : '–'}</span>
                    <span>Standbys</span>
                    <span>{shard.standbys.length > 0 ? shard.standbys.join(', ') : <span className="warn-text">none</span>}</span>
                    <span>Active runs</span>
                    <span>{shard.activeRuns}</span>
                  </div>
                </div>
              );
            })}
          </div>
          <Card title="Scheduler nodes and their store">
            <div className="table-scroll">
              <table className="table compact" data-testid="node-store-health">
                <thead>
                  <tr>
                    <th>Node</th>
                    <th>Store</th>
                    <th>Result writes</th>
                    <th>Last stamped alive</th>
                  </tr>
                </thead>
                <tbody>
                  {s.nodeHealth.map((n) => (
                    <tr key={n.nodeId} data-testid={`node-health-${n.nodeId}`} data-store={n.store} data-writes={n.writes}>
                      <td>
                        <code>{n.nodeId}</code>
                      </td>
                      <td>
                        <span className={`badge ${n.store === 'available' ? 'state-succeeded' : 'state-failed'}`}>{n.store}</span>{' '}
                        <span className="small muted">
                          {n.store === 'unavailable' && n.storeSince
                            ? `since ${relative(n.storeSince, storeNow)}`
                            : n.lastOutageMs !== null && n.storeSince
                              ? `last outage ${(n.lastOutageMs / 1000).toFixed(1)} s, ended ${relative(n.storeSince, storeNow)}`
                              : 'no outage seen'}
                        </span>
                      </td>
                      <td>
                        <span className={`badge ${n.writes === 'moving' ? 'state-succeeded' : 'state-failed'}`}>{n.writes}</span>{' '}
                        <span className="small muted">
                          {n.writes === 'stalled' && n.writesSince
                            ? `since ${relative(n.writesSince, storeNow)}`
                            : n.lastStallMs !== null && n.writesSince
                              ? `last stall ${(n.lastStallMs / 1000).toFixed(1)} s, ended ${relative(n.writesSince, storeNow)}`
                              : 'no stall seen'}
                        </span>
                      </td>
                      <td className="small">{n.lastStampedAt ? relative(n.lastStampedAt, storeNow) : <span className="muted">never</span>}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <p className="small muted">
              What each node last reported of its store. A node cut off from the store reports only once it reaches it again; until then its last stamp falls behind.
            </p>
          </Card>
          <Card title="Leadership changes">
            <div className="table-scroll">
              <table className="table compact" data-testid="leadership-history">
                <thead>
                  <tr>
                    <th>When</th>
                    <th>Shard</th>
                    <th>Event</th>
                    <th>Node</th>
                    <th className="num">Epoch</th>
                    <th>Previous leader</th>
                    <th>Reason</th>
                  </tr>
                </thead>
                <tbody>
                  {s.history.map((h) => (
                    <tr key={h.id}>
                      <td className="small">
                        <Time at={h.at} />
                      </td>
                      <td>{h.shard ?? '–'}</td>
                      <td>
                        <span className={`badge ${h.type === 'leader:elected' ? 'state-leased' : 'state-waiting'}`}>{h.type.replace('leader:', '')}</span>
                      </td>
                      <td>
                        <code>{h.nodeId ?? '–'}</code>
                      </td>
                      <td className="num">{h.epoch ?? '–'}</td>
                      <td>{h.previousHolder ? <code>{h.previousHolder}</code> : <span className="muted">–</span>}</td>
                      <td className="small prose">{h.reason ? (REASONS[h.reason] ?? h.reason) : '–'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </Card>
        </>
      ) : null}
    </>
  );
}
