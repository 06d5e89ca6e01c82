'use client';

import type { DagIssue } from '@fenceline/core';
import Link from 'next/link';
import { diffLines, DiffView, prettySpec } from '@/components/diff';
import { describeError, ErrorBox } from '@/components/errors';
import type { SaveState } from './use-save';

type Saved = NonNullable<SaveState['mutation']['data']>;
type Version = SaveState['versions'][number];

/** A refused save: the error, and the issues the server found in the spec if it named any. */
function SaveRefused({ error }: { error: unknown }) {
  const issues = (describeError(error).details?.issues as DagIssue[] | undefined) ?? [];
  return (
    <div className="save-error">
      <ErrorBox error={error} what="Save refused" />
      {issues.length > 0 ? (
        <ul className="issues">
          {issues.map((i, k) => (
            <li key={k}>
              <code>{i.path || '(spec)'}</code> {i.message}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

/** A save that went through: the version it made (or that nothing changed), a link to the DAG, and the diff. */
function SaveDone({ saved, versions }: { saved: Saved; versions: Version[] }) {
  const newVersion = versions.find((v) => v.version === saved.version);
  const previousVersion = versions.find((v) => v.version === saved.version - 1);
  return (
    <div className="saved" data-testid="save-result">
      {saved.created ? `Saved ${saved.dagId} as version ${saved.version}.` : `No change to the spec: ${saved.dagId} is already this spec (version ${saved.version}).`}
      {saved.paused === null ? null : saved.paused ? ' The DAG is now paused.' : ' The DAG is now resumed.'}{' '}
      <Link href={`/dags/${encodeURIComponent(saved.dagId)}`} data-testid="open-saved-dag">
        Open the DAG →
      </Link>
      {saved.created && newVersion ? (
        <details open={!!previousVersion}>
          <summary>{previousVersion ? `Diff against version ${previousVersion.version}` : 'First version'}</summary>
          <DiffView lines={diffLines(previousVersion ? prettySpec(previousVersion.spec) : '', prettySpec(newVersion.spec))} />
        </details>
      ) : null}
    </div>
  );
}

/** What the last save did, shown under the header. */
export function SaveResult({ save }: { save: SaveState }) {
  const { error, data } = save.mutation;
  return (
    <>
      {error ? <SaveRefused error={error} /> : null}
      {data ? <SaveDone saved={data} versions={save.versions} /> : null}
    </>
  );
}
