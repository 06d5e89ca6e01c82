import { trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { NodeSDK } from '@opentelemetry/sdk-node';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { otelTracing } from './otel-tracing';
import type { TracingSetup } from './setup';

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
