import { describe, expect, it } from 'vitest';
import { NO_TRACING } from '@fenceline/core';
import { tracedStore, tracingConfigured, tracingFromEnv } from '../src';

describe('telemetry: tracing is off unless configured', () => {
  it('is on only with an OTLP endpoint, and off again when the SDK or the traces exporter is turned off', () => {
    expect(tracingConfigured({})).toBe(false);
    expect(tracingConfigured({ OTEL_SERVICE_NAME: 'x' })).toBe(false);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })).toBe(true);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' })).toBe(true);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' })).toBe(false);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_TRACES_EXPORTER: 'none' })).toBe(false);
  });

  it('hands back the inert port and the store itself when off', async () => {
    const setup = await tracingFromEnv('fenceline-test', {});
    expect(setup.tracing).toBe(NO_TRACING);
    const store = { completeJobs: async () => [] };
    expect(tracedStore(store, setup.tracing)).toBe(store);
    await setup.shutdown();
  });
});
