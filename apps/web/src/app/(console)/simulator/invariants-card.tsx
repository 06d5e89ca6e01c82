'use client';

import { Card } from '@/components/ui';
import type { InvariantTable, SimRunReport, SimWorld } from './knobs';

/** Each invariant the checker ran, how often it was violated, and the first violations in full. */
export function InvariantsCard({ report: r, invariants, world, index }: { report: SimRunReport; invariants: InvariantTable; world: SimWorld; index: number }) {
  const byInvariant = (id: string) => r.violations.filter((v) => v.invariant === id).length;
  return (
    <Card title="Invariants checked">
      <div className="table-scroll">
        <table className="table" data-testid={`sim-invariants-${index}`} data-violations={r.violations.length}>
          <thead>
            <tr>
              <th>Invariant</th>
              <th>Kind</th>
              <th>Statement</th>
              <th className="num">Violations</th>
            </tr>
          </thead>
          <tbody>
            {Object.entries(invariants).map(([id, inv]) => {
              const n = byInvariant(id);
              return (
                <tr key={id} data-testid={`sim-invariant-${index}-${id}`} data-violations={n}>
                  <td>{id}</td>
                  <td>{inv.kind}</td>
                  <td className="prose">{inv.text}</td>
                  <td className="num">{n > 0 ? <strong className="bad-text">{n}</strong> : 0}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      {r.violations.length > 0 ? (
        <ul className="issues" data-testid={`sim-violation-list-${index}`}>
          {r.violations.slice(0, 20).map((v, i) => (
            <li key={i}>
              {v.invariant} at {((v.atMs - world.startMs) / 60_000).toFixed(1)} virtual min: {v.message}
            </li>
          ))}
        </ul>
      ) : null}
      {/* The report's replay command names only the written scenario and seed, not these knobs, so the page shows the trace hash instead. */}
      <p className="small muted">
        The same knobs and seed give the same trace hash, <code>{r.traceHash}</code>.
      </p>
    </Card>
  );
}
