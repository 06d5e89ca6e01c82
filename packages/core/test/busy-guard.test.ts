import { describe, expect, it } from 'vitest';
import { BusyGuard } from '../src/engine/busy-guard';

describe('BusyGuard', () => {
  it('lets one step of an exclusive kind hold a key at a time', () => {
    const busy = new BusyGuard();
    expect(busy.tryBegin('dag-a', 'starting')).toBe(true);
    expect(busy.tryBegin('dag-a', 'starting')).toBe(false);
    expect(busy.tryBegin('dag-b', 'starting')).toBe(true);
    expect(busy.isBusy('dag-a', 'starting')).toBe(true);
    busy.end('dag-a', 'starting');
    expect(busy.isBusy('dag-a', 'starting')).toBe(false);
    expect(busy.tryBegin('dag-a', 'starting')).toBe(true);
  });

  it('keeps the kinds apart for the same key', () => {
    const busy = new BusyGuard();
    busy.begin('run-1', 'acting');
    expect(busy.isBusy('run-1', 'acting')).toBe(true);
    expect(busy.isBusy('run-1', 'finishing')).toBe(false);
    expect(busy.tryBegin('run-1', 'finishing')).toBe(true);
    busy.end('run-1', 'acting');
    expect(busy.isBusy('run-1', 'acting')).toBe(false);
    expect(busy.isBusy('run-1', 'finishing')).toBe(true);
  });

  it('holds an exclusive kind once however often it began, and ends it with one end', () => {
    const busy = new BusyGuard();
    busy.begin('run-1', 'acting');
    busy.begin('run-1', 'acting');
    busy.end('run-1', 'acting');
    expect(busy.isBusy('run-1', 'acting')).toBe(false);
    // Ending what is not held (an action's early end, then its finally) changes nothing.
    busy.end('run-1', 'acting');
    expect(busy.isBusy('run-1', 'acting')).toBe(false);
    expect(busy.tryBegin('run-1', 'acting')).toBe(true);
  });

  it('counts the steps of a shared kind and is busy until the last one ends', () => {
    const busy = new BusyGuard();
    expect(busy.tryBegin('run-1', 'settling')).toBe(true);
    expect(busy.tryBegin('run-1', 'settling')).toBe(true);
    busy.begin('run-1', 'settling');
    busy.end('run-1', 'settling');
    busy.end('run-1', 'settling');
    expect(busy.isBusy('run-1', 'settling')).toBe(true);
    busy.end('run-1', 'settling');
    expect(busy.isBusy('run-1', 'settling')).toBe(false);
    busy.end('run-1', 'settling');
    expect(busy.isBusy('run-1', 'settling')).toBe(false);
  });

  it('says whether any of several keys is held', () => {
    const busy = new BusyGuard();
    busy.begin('job-2', 'granting');
    expect(busy.anyBusy(['job-1', 'job-2'], 'granting')).toBe(true);
    expect(busy.anyBusy(['job-1', 'job-3'], 'granting')).toBe(false);
    expect(busy.anyBusy([], 'granting')).toBe(false);
    expect(busy.anyBusy(['job-2'], 'acting')).toBe(false);
  });
});
