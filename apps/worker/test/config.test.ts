import { describe, expect, it } from 'vitest';
import { readWorkerConfig } from '../src/config';

const BASE = { FENCELINE_WORKER_TOKEN: 'a-worker-token-of-some-length' };

describe('worker settings', () => {
  it('refuses a FENCELINE_WORKER_ID the schedulers would refuse, naming the setting', () => {
    expect(() => readWorkerConfig({ ...BASE, FENCELINE_WORKER_ID: 'w/1' })).toThrow('FENCELINE_WORKER_ID may contain only letters, digits and _ . : @ -, got "w/1"');
    expect(() => readWorkerConfig({ ...BASE, FENCELINE_WORKER_ID: 'w'.repeat(201) })).toThrow('FENCELINE_WORKER_ID must be at most 200 characters');
  });

  it('takes a worker id by the protocol rule, and makes one from the host name when none is set', () => {
    expect(readWorkerConfig({ ...BASE, FENCELINE_WORKER_ID: 'host.example:7@pool_2' }).workerId).toBe('host.example:7@pool_2');
    expect(readWorkerConfig(BASE).workerId).toMatch(/^worker-.+-[0-9a-f]{8}$/);
  });

  it('reads the pool and labels it serves, and refuses bad ones naming the setting', () => {
    expect(readWorkerConfig(BASE)).toMatchObject({ pool: 'default', labels: [] });
    expect(readWorkerConfig({ ...BASE, FENCELINE_WORKER_POOL: 'gpu', FENCELINE_WORKER_LABELS: 'cuda, region=eu' })).toMatchObject({ pool: 'gpu', labels: ['cuda', 'region=eu'] });
    expect(() => readWorkerConfig({ ...BASE, FENCELINE_WORKER_POOL: 'GPU pool' })).toThrow('FENCELINE_WORKER_POOL must be lower-case');
    expect(() => readWorkerConfig({ ...BASE, FENCELINE_WORKER_LABELS: 'ok,bad label' })).toThrow('FENCELINE_WORKER_LABELS: "bad label" must be name or name=value');
  });

  it("serves its credential's pool by default, and refuses to be set to serve another", () => {
    const token = `flw.gpu.${'a'.repeat(43)}`;
    expect(readWorkerConfig({ FENCELINE_WORKER_TOKEN: token })).toMatchObject({ pool: 'gpu', workerId: expect.stringMatching(/^gpu-/) });
    expect(readWorkerConfig({ FENCELINE_WORKER_TOKEN: token, FENCELINE_WORKER_POOL: 'gpu' }).pool).toBe('gpu');
    expect(() => readWorkerConfig({ FENCELINE_WORKER_TOKEN: token, FENCELINE_WORKER_POOL: 'default' })).toThrow(
      'FENCELINE_WORKER_POOL is "default", but this credential serves pool "gpu" only',
    );
    const longest = `g${'p'.repeat(62)}`;
    expect(readWorkerConfig({ FENCELINE_WORKER_TOKEN: `flw.${longest}.${'a'.repeat(43)}` }).pool).toBe(longest);
    expect(() => readWorkerConfig({ ...BASE, FENCELINE_WORKER_POOL: `${longest}u` })).toThrow('FENCELINE_WORKER_POOL must be lower-case');
  });
});
