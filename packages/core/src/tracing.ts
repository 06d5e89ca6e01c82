/**
 * The tracing port. The scheduling core records spans only through this interface, so it
 * never depends on a tracing library, reads no clock of its own for them and stays
 * deterministic for the simulator. The processes bind it to OpenTelemetry
 * (packages/telemetry); the simulator passes nothing and gets NO_TRACING.
 *
 * Callers test `enabled` before they build a span's name or attributes, so that with
 * tracing off the hot path makes no span, no attribute object and no string.
 */

/** Span attribute values: what every tracing backend can store as it is. */
export type SpanAttributes = Record<string, string | number | boolean>;

/** What a span is for, in OpenTelemetry's terms: work inside a process, or a call out of or into one. */
export type SpanKind = 'internal' | 'client' | 'server' | 'producer' | 'consumer';

export interface TraceSpan {
  /** A named moment of the span's work (a job attempt's "leased", "delivered", ...). */
  event(name: string, attributes?: SpanAttributes): void;
  setAttributes(attributes: SpanAttributes): void;
  /** Ends the span; an error message marks it failed. A second end is ignored. */
  end(error?: string): void;
  /** This span's W3C trace context, to hand to another process so its spans join the trace. */
  traceparent(): string;
  readonly traceId: string;
  readonly spanId: string;
}

export interface SpanOptions {
  /** The parent: a span of this process, or the traceparent another process sent. None: a new trace. */
  parent?: TraceSpan | string;
  attributes?: SpanAttributes;
  kind?: SpanKind;
}

export interface Tracing {
  /** False for NO_TRACING: callers skip building spans and their attributes. */
  readonly enabled: boolean;
  start(name: string, options?: SpanOptions): TraceSpan;
}

const NO_SPAN: TraceSpan = {
  event: () => undefined,
  setAttributes: () => undefined,
  end: () => undefined,
  traceparent: () => '',
  traceId: '',
  spanId: '',
};

/** Tracing off: every span is the same inert object. */
export const NO_TRACING: Tracing = { enabled: false, start: () => NO_SPAN };

/**
 * A W3C traceparent of version 00: version, 32 hex trace id, 16 hex span id, 2 hex flags.
 * All-zero ids are invalid by the standard.
 */
const TRACEPARENT = /^00-(?!0{32})([0-9a-f]{32})-(?!0{16})([0-9a-f]{16})-[0-9a-f]{2}$/;

/** Whether a value received from another process is a traceparent this code may carry on. */
export function isTraceparent(value: unknown): value is string {
  return typeof value === 'string' && TRACEPARENT.test(value);
}

/**
 * The trace and span ids of a traceparent, for log lines (snake case, as log backends
 * index them); none for anything that is not a valid traceparent.
 */
export function traceLogFields(traceparent: string | undefined): { trace_id: string; span_id: string } | Record<string, never> {
  const m = traceparent === undefined ? null : TRACEPARENT.exec(traceparent);
  return m ? { trace_id: m[1]!, span_id: m[2]! } : {};
}
