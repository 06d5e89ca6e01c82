/** Short human durations: 850 ms, 4.2 s, 3 min 20 s, 2 h 5 min. */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '–';
  const abs = Math.abs(ms);
  if (abs < 1000) return `${Math.round(ms)} ms`;
  if (abs < 60_000) return `${(ms / 1000).toFixed(abs < 10_000 ? 1 : 0)} s`;
  if (abs < 3_600_000) return `${Math.floor(abs / 60_000)} min ${Math.floor((abs % 60_000) / 1000)} s`;
  return `${Math.floor(abs / 3_600_000)} h ${Math.floor((abs % 3_600_000) / 60_000)} min`;
}

/** "in 12 s" / "3 min ago", measured against the store's clock when one is given. */
export function relative(at: Date | null | undefined, now: Date | number = Date.now()): string {
  if (!at) return '–';
  const diff = new Date(at).getTime() - (typeof now === 'number' ? now : now.getTime());
  if (Math.abs(diff) < 1000) return 'now';
  return diff > 0 ? `in ${formatDuration(diff)}` : `${formatDuration(-diff)} ago`;
}

export function formatTime(at: Date | null | undefined): string {
  if (!at) return '–';
  const d = new Date(at);
  return d.toLocaleString(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

export function percent(fraction: number): string {
  return `${(fraction * 100).toFixed(fraction < 0.1 && fraction > 0 ? 1 : 0)}%`;
}

export function scheduleText(schedule: { kind: string; cron?: string; timezone?: string; everyMs?: number }): string {
  if (schedule.kind === 'cron') return `cron ${schedule.cron} (${schedule.timezone ?? 'UTC'})`;
  if (schedule.kind === 'interval') return `every ${formatDuration(schedule.everyMs ?? 0)}`;
  return 'manual';
}
