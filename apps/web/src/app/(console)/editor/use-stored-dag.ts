'use client';

import { useQuery } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useCallback, useEffect, useRef, useState } from 'react';
import { useTRPC } from '@/client/trpc';
import { prettySpec } from '@/components/diff';
import { autoLayout, emptySpec, toDraft, type DraftSpec, type Snapshot } from './draft';
import { useLeaveGuard } from './leave-guard';

/** The stored DAG a draft was loaded from or last saved as. */
export interface Base {
  dagId: string;
  version: number;
}

/**
 * The stored DAG behind the draft: editing an existing DAG starts from its current version,
 * a save makes the saved version the new base, and leaving with unsaved changes asks first.
 */
export function useStoredDag(editing: string | null, spec: DraftSpec, reset: (present: Snapshot) => void) {
  const trpc = useTRPC();
  const nav = useRouter();
  const existing = useQuery(trpc.dags.get.queryOptions({ id: editing ?? '' }, { enabled: editing !== null }));
  // Null for a DAG never saved.
  const [base, setBase] = useState<Base | null>(null);
  // The draft as last loaded or saved, to tell unsaved changes from none.
  const [savedText, setSavedText] = useState(() => prettySpec(emptySpec()));
  const loadedFor = useRef<string | null>(null);
  useEffect(() => {
    if (!existing.data || loadedFor.current === existing.data.dag.id) return;
    loadedFor.current = existing.data.dag.id;
    // A version's spec keeps the paused flag the DAG was created with; the DAG's own flag is its state now.
    const draft = toDraft({ ...existing.data.dag.spec, paused: existing.data.dag.paused });
    if (draft.ok) {
      reset({ spec: draft.spec, positions: autoLayout(draft.spec) });
      setBase({ dagId: existing.data.dag.id, version: existing.data.dag.version });
      setSavedText(prettySpec(draft.spec));
    }
  }, [existing.data, reset]);

  // The editor now edits what it saved: the header, the unsaved-changes check and the
  // address all follow, so a reload opens this DAG rather than a blank one.
  const saved = useCallback(
    (next: Base, savedSpec: DraftSpec) => {
      setBase(next);
      setSavedText(prettySpec(savedSpec));
      if (editing !== next.dagId) {
        loadedFor.current = next.dagId;
        nav.replace(`/editor?dag=${encodeURIComponent(next.dagId)}`);
      }
    },
    [editing, nav],
  );

  const dirty = prettySpec(spec) !== savedText;
  useLeaveGuard(dirty);
  return { existing, base, dirty, saved };
}
