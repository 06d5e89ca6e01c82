'use client';

import { useSyncExternalStore } from 'react';
import { formatTime, zoneLabel, type ShownZone, type TimeParts } from './format';

/** The viewer's choice of zone for the console's times: the browser's own, or UTC. */
export type ZoneChoice = 'local' | 'UTC';

/** Where the choice is remembered, so it outlives a reload and holds in every tab. */
export const ZONE_STORAGE_KEY = 'fenceline.time-zone';

const listeners = new Set<() => void>();
// What was chosen in this tab, kept here too so the choice still holds for the visit where storage is refused.
let chosen: ZoneChoice | null = null;

function stored(): ZoneChoice {
  try {
    return window.localStorage.getItem(ZONE_STORAGE_KEY) === 'UTC' ? 'UTC' : 'local';
  } catch {
    return 'local';
  }
}

function snapshot(): ZoneChoice {
  chosen ??= stored();
  return chosen;
}

// The server cannot know the browser's zone or storage: it renders UTC, and the browser, once
// hydrated, renders the viewer's choice. Both renders of the first pass match, so React has no
// mismatch to repair.
function serverSnapshot(): ZoneChoice {
  return 'UTC';
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  // A choice made in another tab reaches this one through the storage event.
  const onStorage = (e: StorageEvent) => {
    if (e.key !== ZONE_STORAGE_KEY) return;
    chosen = stored();
    listener();
  };
  window.addEventListener('storage', onStorage);
  return () => {
    listeners.delete(listener);
    window.removeEventListener('storage', onStorage);
  };
}

export function setZoneChoice(choice: ZoneChoice): void {
  chosen = choice;
  try {
    window.localStorage.setItem(ZONE_STORAGE_KEY, choice);
  } catch {
    // Storage refused (a private window, a full quota): the choice holds until the page is left.
  }
  for (const listener of listeners) listener();
}

export function useZoneChoice(): ZoneChoice {
  return useSyncExternalStore(subscribe, snapshot, serverSnapshot);
}

/** The zone to show a time in: its own zone where it has one (a DAG's schedule), else the viewer's choice. */
export function useShownZone(own?: string | null): ShownZone {
  const choice = useZoneChoice();
  return own ?? choice;
}

/**
 * A time as the console shows it: "2026-12-02 14:05:03 CET", in the viewer's chosen zone or
 * in `zone` when the time belongs to one (a DAG's next scheduled run). It follows the UTC /
 * local switch without its page having to render again.
 */
export function Time({ at, zone, parts = 'datetime', testId }: { at: Date | string | number | null | undefined; zone?: string | null; parts?: TimeParts; testId?: string }) {
  const shown = useShownZone(zone);
  if (at === null || at === undefined) return <span className="muted">–</span>;
  const d = new Date(at);
  if (Number.isNaN(d.getTime())) return <span className="muted">–</span>;
  return (
    <time className="timestamp" dateTime={d.toISOString()} data-zone={zoneLabel(d, shown)} data-testid={testId}>
      {formatTime(d, shown, parts)}
    </time>
  );
}
