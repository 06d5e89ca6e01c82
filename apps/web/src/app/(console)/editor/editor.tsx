'use client';

import { useSearchParams } from 'next/navigation';
import { useMemo } from 'react';
import { validateDag, type DagIssue } from '@fenceline/core';
import { ErrorBox } from '@/components/errors';
import { removeTasks, renameTask } from './draft';
import { Canvas } from './canvas';
import { EditorHeader } from './editor-header';
import { JsonMirror } from './json-mirror';
import { Palette } from './palette';
import { SaveResult } from './save-result';
import { useSpecImport } from './spec-file';
import { TaskPanel } from './task-panel';
import { DagPanel } from './dag-panel';
import { useCanvas } from './use-canvas';
import { useHistory } from './use-history';
import { usePanelKeys } from './use-panel-keys';
import { useSave } from './use-save';
import { useSelection } from './use-selection';
import { useShortcuts } from './use-shortcuts';
import { useStoredDag } from './use-stored-dag';

/**
 * The DAG editor: a draft with undo (use-history), drawn on a canvas (canvas, use-canvas),
 * mirrored as JSON (json-mirror), checked by the store's own validator, and saved as the
 * stored DAG's next version with a guard against leaving unsaved work (use-stored-dag, use-save).
 */
export function Editor() {
  const editing = useSearchParams().get('dag');
  const history = useHistory();
  const { spec, setSpec } = history;
  const selection = useSelection();
  const canvas = useCanvas(history, selection);
  const stored = useStoredDag(editing, spec, history.reset);
  const validation = useMemo(() => validateDag(spec), [spec]);
  const save = useSave(spec, validation.ok, stored.saved);
  const importer = useSpecImport(canvas.layoutSpec);
  useShortcuts({ save: save.request, undo: history.undo, redo: history.redo, layout: canvas.layout });
  const panelKeys = usePanelKeys();

  const issues: DagIssue[] = validation.ok ? [] : validation.issues;
  const problemTasks = useMemo(() => new Set(issues.flatMap((i) => i.taskIds ?? [])), [issues]);
  const cycleEdges = useMemo(() => {
    const out = new Set<string>();
    for (const issue of issues) {
      if (issue.kind !== 'cycle' || !issue.taskIds) continue;
      const ids = issue.taskIds;
      ids.forEach((id, i) => out.add(`${id}->${ids[(i + 1) % ids.length]}`));
    }
    return out;
  }, [issues]);

  const task = spec.tasks.find((t) => t.id === selection.task) ?? null;
  const taskIndex = task ? spec.tasks.indexOf(task) : -1;

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
      {importer.error ? (
        <div className="error-box" role="alert">
          <span className="error-code">IMPORT</span>
          <span className="error-message">{importer.error}</span>
        </div>
      ) : null}
      <ErrorBox error={stored.existing.error} what={`Loading ${editing}`} />
      <SaveResult save={save} />
      <div className="editor">
        <Palette addTask={canvas.addTask} />
        <Canvas
          history={history}
          selection={selection}
          dims={canvas.dims}
          problems={{ tasks: problemTasks, edges: cycleEdges }}
          addTask={canvas.addTask}
          onNodesChange={canvas.onNodesChange}
          onEdgesChange={canvas.onEdgesChange}
          onConnect={canvas.onConnect}
        />
        <aside className="side-panel">
          {task ? (
            <TaskPanel
              key={panelKeys.keyFor(task.id)}
              task={task}
              index={taskIndex}
              allIds={spec.tasks.map((t) => t.id)}
              issues={issues.filter((i) => i.path === `tasks.${taskIndex}` || i.path.startsWith(`tasks.${taskIndex}.`) || (i.taskIds?.includes(task.id) ?? false))}
              onChange={(next) => setSpec({ ...spec, tasks: spec.tasks.map((t) => (t.id === task.id ? next : t)) })}
              onRename={(to) => {
                panelKeys.rename(task.id, to);
                setSpec(renameTask(spec, task.id, to));
                selection.only(to);
              }}
              onDelete={() => {
                setSpec(removeTasks(spec, new Set([task.id])));
                selection.setTask(null);
              }}
            />
          ) : (
            <DagPanel spec={spec} issues={issues.filter((i) => !i.path.startsWith('tasks.'))} onChange={(next) => setSpec(next)} />
          )}
        </aside>
      </div>
      <div className="editor-bottom">
        <section className="card">
          <div className="card-head">
            <h2>Validation</h2>
            {validation.ok ? (
              <span className="badge state-succeeded" data-testid="validation-ok">
                valid
              </span>
            ) : (
              <span className="badge state-failed" data-testid="issue-count">
                {issues.length} {issues.length === 1 ? 'issue' : 'issues'}
              </span>
            )}
          </div>
          {issues.length > 0 ? (
            <ul className="issues" data-testid="validation-issues">
              {issues.map((i, k) => (
                <li key={k} data-testid={i.kind === 'cycle' ? 'issue-cycle' : 'issue'}>
                  <code>{i.path || '(spec)'}</code> {i.message}
                </li>
              ))}
            </ul>
          ) : (
            <div className="muted">The spec passes every check the store makes on save.</div>
          )}
        </section>
        <JsonMirror spec={spec} setSpec={setSpec} />
      </div>
    </div>
  );
}
