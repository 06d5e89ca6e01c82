'use client';

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useCallback, useEffect, useState } from 'react';
import { useTRPC } from '@/client/trpc';
import { canOperate, useRole } from '@/components/shell';
import type { DraftSpec } from './draft';
import type { Base } from './use-stored-dag';

/** Saving the draft as the DAG's next version: allowed to operators, and only for a spec that passes validation. */
export function useSave(spec: DraftSpec, valid: boolean, onSaved: (base: Base, spec: DraftSpec) => void) {
  const trpc = useTRPC();
  const role = useRole();
  const queryClient = useQueryClient();
  const mutation = useMutation(
    trpc.dags.save.mutationOptions({
      onSuccess: (result, variables) => {
        onSaved({ dagId: result.dagId, version: result.version }, variables.spec as DraftSpec);
        void queryClient.invalidateQueries({ queryKey: trpc.dags.versions.queryKey({ id: result.dagId }) });
        void queryClient.invalidateQueries({ queryKey: trpc.dags.get.queryKey({ id: result.dagId }) });
      },
    }),
  );
  const versions = useQuery(trpc.dags.versions.queryOptions({ id: mutation.data?.dagId ?? '' }, { enabled: !!mutation.data }));
  const canSave = canOperate(role) && valid && !mutation.isPending;
  const save = useCallback(() => {
    if (canSave) mutation.mutate({ spec });
  }, [canSave, mutation, spec]);

  // Ctrl+S in a field first leaves the field (a task's new id is committed on blur), then
  // saves on the next render, so the spec saved is the one the author sees.
  const [requested, setRequested] = useState(false);
  useEffect(() => {
    if (!requested) return;
    setRequested(false);
    save();
  }, [requested, save]);
  const request = useCallback(() => setRequested(true), []);

  return { mutation, versions: versions.data ?? [], role, canSave, save, request };
}

export type SaveState = ReturnType<typeof useSave>;
