'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { LIVE_MS, useTRPC } from '@/client/trpc';
import { LineChart, Meter, seriesColor } from '@/components/charts';
import { ErrorBox } from '@/components/errors';
import { Card, Empty, LiveDot, PageHeader } from '@/components/ui';
import { plural } from '@/lib/plural';

export default function FairSharePage() {
  const trpc = useTRPC();
  const q = useQuery(trpc.cluster.fairShare.queryOptions({ windowMs: 10 * 60_000 }, { refetchInterval: LIVE_MS }));
  const f = q.data;
  const pct = f ? Math.round(f.capFraction * 1000) / 10 : 0;
  return (
    <>
      <PageHeader
        title={
          <>
            Fair share <LiveDot fetching={q.isFetching} />
          </>
        }
        subtitle="No DAG may hold more than its cap of the worker pool at once; the cap adds no capacity, it decides who waits."
      />
      <ErrorBox error={q.error} what="Reading fair share" />
      {f ? (
        <>
          <div className="arithmetic" data-testid="cap-arithmetic">
            <span>
              pool <strong data-testid="pool-slots">{f.poolSlots}</strong> slots ({plural(f.liveWorkers, 'live worker')})
            </span>
            <span>×</span>
            <span>
              cap <strong>{pct}%</strong>
            </span>
            <span>=</span>
            <span>
              at most <strong data-testid="cap-value">{f.cap}</strong> leases per DAG
            </span>
            <span className="muted">
              · {f.leasedJobs} of {plural(f.poolSlots, 'slot')} busy
            </span>
          </div>
          <Card title="Per DAG, now">
            {f.dags.length === 0 ? (
              <Empty>No DAG has work in flight.</Empty>
            ) : (
              <div className="table-scroll">
                <table className="table" data-testid="share-table">
                  <thead>
                    <tr>
                      <th>DAG</th>
                      <th className="num">Leases held</th>
                      <th style={{ width: '28%' }}>Against its cap</th>
                      <th className="num">Ready, waiting on cap</th>
                      <th className="num">Ready</th>
                      <th className="num">In backoff</th>
                      <th className="num">Waiting on deps</th>
                    </tr>
                  </thead>
                  <tbody>
                    {f.dags.map((d, i) => (
                      <tr key={d.dagId} data-testid={`share-${d.dagId}`} data-held={d.held} data-cap={d.cap} data-capped={d.waitingOnCap}>
                        <td>
                          <i className="swatch" style={{ background: i < 8 ? seriesColor(i) : 'transparent' }} />{' '}
                          <Link href={`/dags/${encodeURIComponent(d.dagId)}`}>{d.dagId}</Link>
                          {d.capOverridden ? <span className="muted small"> · own cap {Math.round(d.capFraction * 1000) / 10}%</span> : null}
                        </td>
                        <td className="num" data-testid={`share-${d.dagId}-held`}>
                          {d.held} / {d.cap}
                        </td>
                        <td>
                          <Meter value={d.held} max={d.cap} />
                          <div className="small muted">
                            {d.held >= d.cap ? (
                              <span className="warn-text">
                                at cap: floor({Math.round(d.capFraction * 1000) / 10}% × {f.poolSlots}) = {d.cap}
                              </span>
                            ) : (
                              `${d.cap - d.held} more allowed`
                            )}
                          </div>
                        </td>
                        <td className="num">{d.waitingOnCap > 0 ? <strong className="warn-text">{d.waitingOnCap}</strong> : 0}</td>
                        <td className="num">{d.ready}</td>
                        <td className="num">{d.inBackoff}</td>
                        <td className="num">{d.waitingOnDeps}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </Card>
          <Card title="Leases held over the last 10 minutes">
            <LineChart testId="share-chart" series={f.history.series.map((s) => ({ name: s.dagId, values: s.held }))} capLine={f.cap} />
            <div className="legend small">
              {f.history.series.map((s, i) => (
                <span key={s.dagId}>
                  <i className="swatch" style={{ background: seriesColor(i) }} /> {s.dagId}
                </span>
              ))}
              <span>
                <i className="swatch cap" /> cluster cap
              </span>
            </div>
          </Card>
        </>
      ) : null}
    </>
  );
}
