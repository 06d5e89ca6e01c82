import { describe, expect, it } from 'vitest';
import { databaseOf, reconnectDelayS, withDatabase } from '../src/client';

describe('database URLs', () => {
  it('names another database on the same servers, a multi-host URL included, keeping its options', () => {
    expect(withDatabase('postgres://u:p@127.0.0.1:5432/postgres', 'other')).toBe('postgres://u:p@127.0.0.1:5432/other');
    expect(withDatabase('postgres://u@h1:5432,h2:5433/postgres?target_session_attrs=read-write', 'db2')).toBe('postgres://u@h1:5432,h2:5433/db2?target_session_attrs=read-write');
    expect(withDatabase('postgresql://h1,h2', 'x')).toBe('postgresql://h1,h2/x');
    expect(() => withDatabase('mysql://h/db', 'x')).toThrow(/postgres:\/\//);
  });

  it('reads the database a URL names, postgres when it names none', () => {
    expect(databaseOf('postgres://u@h1:1,h2:2/fenceline?sslmode=disable')).toBe('fenceline');
    expect(databaseOf('postgres://u@h1:1')).toBe('postgres');
  });

  it('waits at most a second before a lost connection connects again, however many were lost', () => {
    expect(reconnectDelayS(0)).toBe(0.05);
    expect(reconnectDelayS(2)).toBe(0.2);
    expect(reconnectDelayS(10)).toBe(1);
    expect(reconnectDelayS(1000)).toBe(1);
  });
});
