import { trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { NodeSDK } from '@opentelemetry/sdk-node';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NO_TRACING, type Tracing } from '@fenceline/core';
import { otelTracing } from './otel-tracing';

/** The process's tracing and how to flush it on the way out. */
export interface TracingSetup {
  readonly tracing: Tracing;
  /** Exports what is left and stops the SDK; nothing to do with tracing off. */
  shutdown(): Promise<void>;
}

const OFF: TracingSetup = { tracing: NO_TRACING, shutdown: () => Promise.resolve() };

/**
 * Whether the environment turns tracing on: an OTLP endpoint is set (for all signals or
 * for traces), and neither OTEL_SDK_DISABLED nor OTEL_TRACES_EXPORTER=none turns it off.
 * Off by default, so a process nobody configured makes no span at all.
 */
export function tracingConfigured(env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none') return false;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

/**
 * Starts the OpenTelemetry Node SDK for traces only (no metrics, logs or
 * instrumentations: the spans are the ones fenceline makes). The exporter is OTLP over
 * HTTP and reads the standard OTEL_EXPORTER_OTLP_* settings itself; `spanProcessors`
 * replaces it (a test's in-memory exporter).
 */
export function startTracing(options: { serviceName: string; spanProcessors?: SpanProcessor[] }): TracingSetup {
  const sdk = new NodeSDK({
    serviceName: process.env.OTEL_SERVICE_NAME?.trim() || options.serviceName,
    ...(options.spanProcessors ? { spanProcessors: options.spanProcessors } : { traceExporter: new OTLPTraceExporter() }),
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [],
  });
  sdk.start();
  return { tracing: otelTracing(trace.getTracer('fenceline')), shutdown: () => sdk.shutdown() };
}

/** Tracing as the environment says: started when configured, NO_TRACING otherwise. */
export function tracingFromEnv(serviceName: string, env: NodeJS.ProcessEnv = process.env): TracingSetup {
  return tracingConfigured(env) ? startTracing({ serviceName }) : OFF;
}
