'use client';

import type { DagIssue } from '@fenceline/core';
import type { PoolSummary } from '@fenceline/db/console';
import { DagPanel } from './dag-panel';
import { removeTasks, renameTask, type DraftSpec, type DraftTask } from './draft';
import { dagIssues, taskIssues } from './issues';
import type { RoutingWarning } from './routing-warnings';
import { TaskPanel } from './task-panel';
import type { EditorHistory } from './use-history';
import { usePanelKeys, type PanelKeys } from './use-panel-keys';
import type { Selection } from './use-selection';

interface SidePanelProps {
  history: EditorHistory;
  selection: Selection;
  issues: DagIssue[];
  /** Pools, labels and limits no live worker or limit would serve; shown, never blocking. */
  warnings: RoutingWarning[];
  /** Live pools with their labels and types, to suggest in the task's fields. */
  pools: PoolSummary[] | undefined;
  limits: { name: string }[] | undefined;
}

/** The selected task's panel, with the edits it makes to the draft. */
function SelectedTask({ history, selection, issues, warnings, pools, limits, task, panelKeys }: SidePanelProps & { task: DraftTask; panelKeys: PanelKeys }) {
  const { spec, setSpec } = history;
  const index = spec.tasks.indexOf(task);
  return (
    <TaskPanel
      key={panelKeys.keyFor(task.id)}
      task={task}
      index={index}
      allIds={spec.tasks.map((t) => t.id)}
      issues={taskIssues(issues, index, task.id)}
      warnings={warnings.filter((w) => w.index === index)}
      pools={pools}
      limits={limits}
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
  );
}

/** The panel beside the canvas: the selected task's settings, or the DAG's own when no task is selected. */
export function SidePanel(props: SidePanelProps) {
  const { spec, setSpec } = props.history;
  const panelKeys = usePanelKeys();
  const task = spec.tasks.find((t) => t.id === props.selection.task) ?? null;
  return (
    <aside className="side-panel">
      {task ? (
        <SelectedTask {...props} task={task} panelKeys={panelKeys} />
      ) : (
        <DagPanel spec={spec} issues={dagIssues(props.issues)} onChange={(next: DraftSpec) => setSpec(next)} />
      )}
    </aside>
  );
}
