'use client';

import { useQuery } from '@tanstack/react-query';
import type { PoolSummary } from '@fenceline/db/console';
import { useTRPC } from '@/client/trpc';
import { PALETTE } from './draft';
import { PaletteAvailability } from './palette-availability';
import type { AddTask } from './use-canvas';

/** The drag format of a palette item dropped on the canvas: its job type. */
export const PALETTE_DRAG_TYPE = 'application/x-fenceline-task';

function Shortcuts() {
  return (
    <div className="shortcuts small muted">
      <div>
        <kbd>Del</kbd> delete selection
      </div>
      <div>
        <kbd>Ctrl Z</kbd> undo · <kbd>Ctrl ⇧ Z</kbd> redo
      </div>
      <div>
        <kbd>L</kbd> auto-layout · <kbd>Ctrl S</kbd> save
      </div>
      <div>Drag from a task&apos;s right handle to another task&apos;s left handle: the second then depends on the first.</div>
    </div>
  );
}

/** The pools live workers serve, with their labels: what a task's pool and labels may ask for today. */
function LivePools({ pools }: { pools: PoolSummary[] | undefined }) {
  if (!pools) return null;
  return (
    <div className="small muted" data-testid="palette-pools">
      <h3>Live pools</h3>
      {pools.length === 0 ? <div>no live worker at the moment</div> : null}
      {pools.map((p) => (
        <div key={p.pool} data-testid={`palette-pool-${p.pool}`}>
          <code>{p.pool}</code>: {p.liveWorkers} {p.liveWorkers === 1 ? 'worker' : 'workers'}, {p.slots} slots
          {p.labels.length > 0 ? `; labels ${p.labels.join(', ')}` : ''}
        </div>
      ))}
    </div>
  );
}

/** The job types to add as tasks, by a click or a drag onto the canvas, the live pools, and the editor's shortcuts beneath. */
export function Palette({ addTask, pools }: { addTask: AddTask; pools?: PoolSummary[] | undefined }) {
  const trpc = useTRPC();
  const jobTypes = useQuery(trpc.dags.jobTypes.queryOptions(undefined, { refetchInterval: 10_000 }));
  return (
    <aside className="palette" aria-label="Job types">
      <h3>Add a task</h3>
      {PALETTE.map((p) => (
        <button
          key={p.type}
          className="palette-item"
          data-testid={`palette-${p.type}`}
          draggable
          onDragStart={(e) => e.dataTransfer.setData(PALETTE_DRAG_TYPE, p.type)}
          onClick={() => addTask(p.type, p.config)}
          title={p.hint}
        >
          <span className="palette-type">{p.label}</span>
          <span className="muted small">{p.hint}</span>
          <PaletteAvailability type={p.type} types={jobTypes.data} />
        </button>
      ))}
      <LivePools pools={pools} />
      <Shortcuts />
    </aside>
  );
}
