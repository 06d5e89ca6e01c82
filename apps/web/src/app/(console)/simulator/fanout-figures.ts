/**
 * The fanout headline's figures (packages/sim/src/report/headline.ts), read into types.
 * The report carries them as a loose record; a figure that is absent means it was never
 * reached (no makespan for an unfinished fan-out, no "99% done" before 99% of its jobs
 * were), and the page says so rather than printing a number for it.
 */
export interface FanoutFigures {
  finished: boolean;
  makespanMin?: number;
  jobs?: number;
  jobsDone?: number;
  /** Minutes from the fan-out run's creation until half / 99% of all its jobs were done. */
  halfDoneMin?: number;
  p99DoneMin?: number;
  peakLeases?: number;
  /** With lending: the most leases held above their DAG's cap at one time, and the reserve in slots. */
  peakLent?: number;
  reserveSlots?: number;
  otherJobsStarted: number;
  otherP99S?: number;
  otherMaxS?: number;
}

type Figures = Record<string, number | string | boolean>;

function num(f: Figures, key: string): number | undefined {
  const v = f[key];
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

export function fanoutFigures(f: Figures): FanoutFigures {
  const makespanMin = num(f, 'fanoutMakespanMin');
  const finished = f.fanoutFinished === true;
  return {
    finished,
    // Only a finished fan-out has a makespan.
    makespanMin: finished ? makespanMin : undefined,
    jobs: num(f, 'fanoutJobs'),
    jobsDone: num(f, 'fanoutJobsDone'),
    halfDoneMin: num(f, 'fanout50PercentDoneMin'),
    p99DoneMin: num(f, 'fanout99PercentDoneMin'),
    peakLeases: num(f, 'fanoutPeakLeases'),
    peakLent: num(f, 'peakLentLeases'),
    reserveSlots: num(f, 'lendReserveSlots'),
    otherJobsStarted: num(f, 'otherJobsStarted') ?? 0,
    otherP99S: num(f, 'otherStartLatencyP99s'),
    otherMaxS: num(f, 'otherStartLatencyMaxS'),
  };
}

/** A figure, or a dash when it was never reached. */
export function minutesText(v: number | undefined): string {
  return v === undefined ? '—' : `${v.toLocaleString('en-US', { maximumFractionDigits: 1 })} min`;
}

/** The makespan stat's value: the makespan, or that the fan-out did not finish. */
export function makespanText(ff: FanoutFigures): string {
  return ff.finished && ff.makespanMin !== undefined ? minutesText(ff.makespanMin) : 'not finished';
}

/** The line under it: how far an unfinished fan-out got, and when half and 99% of it were done. */
export function progressText(ff: FanoutFigures): string {
  const done = !ff.finished && ff.jobsDone !== undefined && ff.jobs !== undefined ? `${ff.jobsDone.toLocaleString('en-US')} of ${ff.jobs.toLocaleString('en-US')} jobs done; ` : '';
  return `${done}half done at ${minutesText(ff.halfDoneMin)}, 99% at ${minutesText(ff.p99DoneMin)}`;
}
