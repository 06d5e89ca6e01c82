'use client';

import { useState } from 'react';
import { diffLines, DiffView, prettySpec } from '@/components/diff';
import { Time } from '@/components/time';
import { Card } from '@/components/ui';

/** One stored version of a DAG's spec, as the DAG page lists them. */
export interface DagVersion {
  version: number;
  createdAt: Date | string;
  spec: unknown;
}

/**
 * A DAG's versions, newest first, and the diff of the chosen one against the version before
 * it: the current version until another is clicked.
 */
export function VersionsCard({ versions, current }: { versions: readonly DagVersion[]; current: number }) {
  const [diffVersion, setDiffVersion] = useState<number | null>(null);
  const shownDiff = diffVersion ?? current;
  const after = versions.find((v) => v.version === shownDiff);
  const before = versions.find((v) => v.version === shownDiff - 1);
  return (
    <Card title="Versions">
      <ul className="versions" data-testid="version-list">
        {[...versions].reverse().map((v) => (
          <li key={v.version}>
            <button className={`link ${v.version === shownDiff ? 'strong' : ''}`} onClick={() => setDiffVersion(v.version)} data-testid={`version-${v.version}`}>
              v{v.version}
            </button>{' '}
            <span className="muted small">
              <Time at={v.createdAt} />
            </span>{' '}
            {v.version === current ? <span className="badge">current</span> : null}
          </li>
        ))}
      </ul>
      {after ? (
        <>
          <div className="muted small">{before ? `Changes from v${before.version} to v${after.version}` : `v${after.version} is the first version`}</div>
          <DiffView lines={diffLines(before ? prettySpec(before.spec) : '', prettySpec(after.spec))} />
        </>
      ) : null}
    </Card>
  );
}
