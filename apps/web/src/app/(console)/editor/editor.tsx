'use client';

import { useSearchParams } from 'next/navigation';
import { useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import { validateDag } from '@fenceline/core';
import { useTRPC } from '@/client/trpc';
import { ErrorBox } from '@/components/errors';
import { Canvas } from './canvas';
import { EditorHeader } from './editor-header';
import { cycleEdges, problemTasks } from './issues';
import { JsonMirror } from './json-mirror';
import { Palette } from './palette';
import { routingWarnings } from './routing-warnings';
import { SaveResult } from './save-result';
import { SidePanel } from './side-panel';
import { useSpecImport } from './spec-file';
import { useCanvas } from './use-canvas';
import { useHistory } from './use-history';
import { useSave } from './use-save';
import { useSelection } from './use-selection';
import { useShortcuts } from './use-shortcuts';
import { useStoredDag } from './use-stored-dag';
import { ValidationCard } from './validation-card';

/** A refused import: the file's name and what is wrong with it. */
function ImportError({ error }: { error: string | null }) {
  if (!error) return null;
  return (
    <div className="error-box" role="alert">
      <span className="error-code">IMPORT</span>
      <span className="error-message">{error}</span>
    </div>
  );
}

/**
 * The DAG editor: a draft with undo (use-history), drawn on a canvas (canvas, use-canvas),
 * mirrored as JSON (json-mirror), checked by the store's own validator (issues,
 * validation-card), and saved as the stored DAG's next version with a guard against leaving
 * unsaved work (use-stored-dag, use-save).
 */
export function Editor() {
  const editing = useSearchParams().get('dag');
  const history = useHistory();
  const { spec, setSpec } = history;
  const selection = useSelection();
  const canvas = useCanvas(history, selection);
  const stored = useStoredDag(editing, spec, history.reset);
  const validation = useMemo(() => validateDag(spec), [spec]);
  const issues = useMemo(() => (validation.ok ? [] : validation.issues), [validation]);
  const problems = useMemo(() => ({ tasks: problemTasks(issues), edges: cycleEdges(issues) }), [issues]);
  const trpc = useTRPC();
  const offers = useQuery(trpc.cluster.offers.queryOptions(undefined, { refetchInterval: 10_000 }));
  const limits = useQuery(trpc.limits.list.queryOptions(undefined, { refetchInterval: 10_000 }));
  const warnings = useMemo(() => routingWarnings(spec, { offers: offers.data?.offers, limits: limits.data?.limits }), [spec, offers.data, limits.data]);
  const save = useSave(spec, validation.ok, stored.saved);
  const importer = useSpecImport(canvas.layoutSpec);
  useShortcuts({ save: save.request, undo: history.undo, redo: history.redo, layout: canvas.layout });

  return (
    <div className="editor-page">
      <EditorHeader
        editing={editing}
        base={stored.base}
        dirty={stored.dirty}
        history={history}
        layout={canvas.layout}
        onImport={(file) => void importer.onImport(file)}
        save={save}
        valid={validation.ok}
      />
      <ImportError error={importer.error} />
      <ErrorBox error={stored.existing.error} what={`Loading ${editing}`} />
      <SaveResult save={save} />
      <div className="editor">
        <Palette addTask={canvas.addTask} pools={offers.data?.pools} />
        <Canvas
          history={history}
          selection={selection}
          dims={canvas.dims}
          problems={problems}
          addTask={canvas.addTask}
          onNodesChange={canvas.onNodesChange}
          onEdgesChange={canvas.onEdgesChange}
          onConnect={canvas.onConnect}
        />
        <SidePanel history={history} selection={selection} issues={issues} warnings={warnings} pools={offers.data?.pools} limits={limits.data?.limits} />
      </div>
      <div className="editor-bottom">
        <ValidationCard validation={validation} warnings={warnings} />
        <JsonMirror spec={spec} setSpec={setSpec} />
      </div>
    </div>
  );
}
