'use client';

import { useState } from 'react';
import { AUDIT_ACTIONS, type AuditAction } from '@fenceline/core/store';
import { AuditTable } from '@/components/audit-table';
import { Card, PageHeader } from '@/components/ui';

/** Every change anyone made, newest first, filterable by who, what and which DAG. Nothing here edits it. */
export default function AuditPage() {
  const [actor, setActor] = useState('');
  const [action, setAction] = useState<AuditAction | ''>('');
  const [dagId, setDagId] = useState('');
  return (
    <>
      <PageHeader title="Audit log" subtitle="Who changed what, when and from where. The log is append-only: nothing in the product edits or deletes an entry." />
      <div className="field-row">
        <input data-testid="audit-filter-actor" aria-label="Who (user name)" placeholder="Who (user name)…" value={actor} onChange={(e) => setActor(e.target.value)} />
        <select data-testid="audit-filter-action" aria-label="Action" value={action} onChange={(e) => setAction(e.target.value as AuditAction | '')}>
          <option value="">every action</option>
          {AUDIT_ACTIONS.map((a) => (
            <option key={a} value={a}>
              {a}
            </option>
          ))}
        </select>
        <input data-testid="audit-filter-dag" aria-label="DAG id" placeholder="DAG id…" value={dagId} onChange={(e) => setDagId(e.target.value)} />
      </div>
      <Card>
        <AuditTable filter={{ actor: actor.trim() || undefined, action: action || undefined, dagId: dagId.trim() || undefined }} />
      </Card>
    </>
  );
}
