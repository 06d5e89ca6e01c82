import { NO_TRACING, type Tracing } from '@fenceline/core';

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
 * Tracing as the environment says: started when configured, NO_TRACING otherwise. The SDK
 * is imported only when tracing is on, so a process with it off loads none of it.
 */
export async function tracingFromEnv(serviceName: string, env: NodeJS.ProcessEnv = process.env): Promise<TracingSetup> {
  if (!tracingConfigured(env)) return OFF;
  const { startTracing } = await import('./sdk');
  return startTracing({ serviceName });
}
