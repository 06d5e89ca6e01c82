import type { DagIssue } from '../errors';
import { cronFor } from '../schedule/slots';
import { field } from './spec-shape';

/** A cron schedule's time zone and expression: what the schema cannot tell from their shape. */

/** Checks the zone and returns it, or UTC when it is not usable, so the expression is still checked. */
function checkTimezone(schedule: unknown, issues: DagIssue[]): string {
  const tzField = field(schedule, 'timezone');
  const timezone = tzField === undefined ? 'UTC' : tzField;
  if (typeof timezone !== 'string') return 'UTC';
  try {
    Intl.DateTimeFormat(undefined, { timeZone: timezone });
    return timezone;
  } catch {
    issues.push({
      kind: 'bad-timezone',
      path: 'schedule.timezone',
      message: `Unknown time zone "${timezone}"; use an IANA time zone name such as "UTC", "Europe/Berlin" or "America/New_York".`,
    });
    return 'UTC';
  }
}

function checkCron(expr: string, timezone: string, issues: DagIssue[]): void {
  try {
    const cron = cronFor(expr, timezone);
    // A pattern can be well formed and still never match (30 February); croner then has
    // no next run from any instant, so asking from the epoch is a fixed, pure check.
    if (cron.nextRun(new Date(0)) === null) {
      issues.push({
        kind: 'bad-cron',
        path: 'schedule.cron',
        message: `Cron expression "${expr}" never matches any date (check the day of month against the month); fix it or use a manual schedule.`,
      });
    }
  } catch (error) {
    const reason = error instanceof Error ? error.message.replace(/^CronPattern: /, '') : String(error);
    issues.push({
      kind: 'bad-cron',
      path: 'schedule.cron',
      message:
        `Invalid cron expression "${expr}": ${reason}. Use five fields (minute hour day-of-month month day-of-week), ` +
        'or six with seconds first; for example "0 2 * * *" runs at 02:00 every day.',
    });
  }
}

export function checkSchedule(schedule: unknown, issues: DagIssue[]): void {
  if (field(schedule, 'kind') !== 'cron') return;
  // With a bad zone, the expression is still checked (in UTC) so both problems show.
  const timezone = checkTimezone(schedule, issues);
  const expr = field(schedule, 'cron');
  if (typeof expr !== 'string' || expr === '') return;
  checkCron(expr, timezone, issues);
}
