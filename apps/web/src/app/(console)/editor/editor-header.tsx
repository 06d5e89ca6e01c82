'use client';

import { useRef } from 'react';
import { canOperate } from '@/components/shell';
import { PageHeader } from '@/components/ui';
import type { DraftSpec } from './draft';
import { downloadSpec } from './spec-file';
import type { EditorHistory } from './use-history';
import type { SaveState } from './use-save';
import type { Base } from './use-stored-dag';

export interface EditorHeaderProps {
  editing: string | null;
  base: Base | null;
  dirty: boolean;
  history: EditorHistory;
  layout(): void;
  onImport(file: File): void;
  save: SaveState;
  valid: boolean;
}

/** What saving will do: create version 1, the next version, or a DAG under a new id. */
function subtitle(spec: DraftSpec, base: Base | null): string {
  if (!base) return 'Draw tasks and their dependencies; saving creates version 1.';
  if (spec.id !== base.dagId) return `The id is no longer ${base.dagId}: saving stores this spec as the DAG ${spec.id || '(no id)'}.`;
  return `Version ${base.version} is saved; saving a change creates version ${base.version + 1}, and runs in flight keep the version they started with.`;
}

function ImportButton({ onImport }: { onImport(file: File): void }) {
  const fileInput = useRef<HTMLInputElement>(null);
  return (
    <>
      <button onClick={() => fileInput.current?.click()} data-testid="import">
        Import
      </button>
      <input
        ref={fileInput}
        type="file"
        accept=".json,.yaml,.yml,application/json"
        hidden
        data-testid="import-file"
        onChange={(e) => {
          const file = e.target.files?.[0];
          if (file) onImport(file);
          e.target.value = '';
        }}
      />
    </>
  );
}

function SaveButton({ save, valid }: { save: SaveState; valid: boolean }) {
  const title = !canOperate(save.role) ? 'Viewers cannot save' : valid ? 'Save (Ctrl+S)' : 'Fix the issues listed under Validation to save';
  return (
    <button className="primary" onClick={save.save} disabled={!save.canSave} data-testid="save-dag" title={title}>
      {save.mutation.isPending ? 'Saving…' : 'Save'}
    </button>
  );
}

function Actions({ history, layout, onImport, save, valid }: EditorHeaderProps) {
  return (
    <>
      <button onClick={history.undo} disabled={!history.canUndo} data-testid="undo" title="Undo (Ctrl+Z)">
        ↶ Undo
      </button>
      <button onClick={history.redo} disabled={!history.canRedo} data-testid="redo" title="Redo (Ctrl+Shift+Z)">
        ↷ Redo
      </button>
      <button onClick={layout} data-testid="auto-layout" title="Auto-layout (L)">
        ⇶ Layout
      </button>
      <ImportButton onImport={onImport} />
      <button onClick={() => downloadSpec(history.spec)} data-testid="export">
        Export
      </button>
      <SaveButton save={save} valid={valid} />
    </>
  );
}

/** The editor's header: which DAG is being edited, whether it has unsaved changes, what saving does, and the actions. */
export function EditorHeader(props: EditorHeaderProps) {
  const { editing, base, dirty, history } = props;
  const title = base ? `Edit ${base.dagId}` : editing ? `Edit ${editing}` : 'New DAG';
  return (
    <PageHeader
      title={
        <>
          <span data-testid="editor-title">{title}</span>{' '}
          {dirty ? (
            <span className="badge state-queued" data-testid="unsaved">
              unsaved changes
            </span>
          ) : null}
        </>
      }
      subtitle={<span data-testid="editor-subtitle">{subtitle(history.spec, base)}</span>}
      actions={<Actions {...props} />}
    />
  );
}
