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

/**
 * The zone a time is shown in: 'local' is the browser's own zone, anything else an IANA
 * name ('UTC', 'Europe/Berlin'). The console's UTC / local switch picks one of the first two;
 * a DAG's schedule times use the DAG's own zone.
 */
export type ShownZone = 'local' | (string & {});

/** How much of a time is shown: the date and time to the second, the time alone, or hours and minutes. */
export type TimeParts = 'datetime' | 'time' | 'minutes';

// Building an Intl formatter costs far more than using one, and a table formats hundreds of times.
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: ShownZone, locale: string, options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  const key = `${zone}\u0000${locale}\u0000${JSON.stringify(options)}`;
  let f = formatters.get(key);
  if (!f) {
    f = new Intl.DateTimeFormat(locale, { ...options, timeZone: zone === 'local' ? undefined : zone });
    formatters.set(key, f);
  }
  return f;
}

/** A zone name that the browser does not know falls back to UTC rather than throwing in the middle of a page. */
function knownZone(zone: ShownZone): ShownZone {
  if (zone === 'local') return zone;
  try {
    formatter(zone, 'en-US', { timeZoneName: 'short' });
    return zone;
  } catch {
    return 'UTC';
  }
}

function shortName(at: Date, zone: ShownZone, locale: string): string {
  return (
    formatter(zone, locale, { timeZoneName: 'short' })
      .formatToParts(at)
      .find((p) => p.type === 'timeZoneName')?.value ?? ''
  );
}

/**
 * The zone's abbreviation at that moment ("UTC", "CET", "EDT", "BST"), or its offset
 * ("UTC+5:30") where the zone has no abbreviation in common use. English as used in the US
 * names the American zones and English as used in Britain the European ones, so both are asked.
 */
export function zoneLabel(at: Date, zone: ShownZone): string {
  const z = knownZone(zone);
  const offset = /^GMT[+-]/;
  let name = shortName(at, z, 'en-US');
  if (offset.test(name)) name = shortName(at, z, 'en-GB');
  if (offset.test(name)) name = name.replace(/^GMT/, 'UTC');
  return name || 'UTC';
}

/**
 * A time as "2026-12-02 14:05:03 UTC": 24-hour, year first, and always with the zone it is
 * shown in, so two people reading the same page from different places cannot misread it.
 */
export function formatTime(at: Date | string | number | null | undefined, zone: ShownZone = 'UTC', parts: TimeParts = 'datetime'): string {
  if (at === null || at === undefined) return '–';
  const d = new Date(at);
  if (Number.isNaN(d.getTime())) return '–';
  const z = knownZone(zone);
  const p: Record<string, string> = {};
  const fields = formatter(z, 'en-US', {
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
  });
  for (const part of fields.formatToParts(d)) p[part.type] = part.value;
  const clock = parts === 'minutes' ? `${p.hour}:${p.minute}` : `${p.hour}:${p.minute}:${p.second}`;
  const shown = parts === 'datetime' ? `${p.year}-${p.month}-${p.day} ${clock}` : clock;
  return `${shown} ${zoneLabel(d, z)}`;
}

/** The zone a DAG's schedule is written in: a cron's own zone (UTC unless it names one); null for schedules without one. */
export function scheduleZone(schedule: { kind: string; timezone?: string }): string | null {
  return schedule.kind === 'cron' ? (schedule.timezone ?? 'UTC') : null;
}

export function percent(fraction: number): string {
  return `${(fraction * 100).toFixed(fraction < 0.1 && fraction > 0 ? 1 : 0)}%`;
}

export function scheduleText(schedule: { kind: string; cron?: string; timezone?: string; everyMs?: number }): string {
  if (schedule.kind === 'cron') return `cron ${schedule.cron} (${schedule.timezone ?? 'UTC'})`;
  if (schedule.kind === 'interval') return `every ${formatDuration(schedule.everyMs ?? 0)}`;
  return 'manual';
}
