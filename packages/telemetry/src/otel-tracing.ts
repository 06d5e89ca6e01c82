import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { isTraceparent, type SpanAttributes, type SpanOptions, type Tracing, type TraceSpan } from '@fenceline/core';

const KINDS: Record<NonNullable<SpanOptions['kind']>, SpanKind> = {
  internal: SpanKind.INTERNAL,
  client: SpanKind.CLIENT,
  server: SpanKind.SERVER,
  producer: SpanKind.PRODUCER,
  consumer: SpanKind.CONSUMER,
};

/** A span of the OpenTelemetry API behind the core's port. */
class OtelSpan implements TraceSpan {
  readonly traceId: string;
  readonly spanId: string;
  private header: string | null = null;
  private ended = false;

  constructor(readonly span: Span) {
    const ctx = span.spanContext();
    this.traceId = ctx.traceId;
    this.spanId = ctx.spanId;
  }

  event(name: string, attributes?: SpanAttributes): void {
    if (!this.ended) this.span.addEvent(name, attributes);
  }

  setAttributes(attributes: SpanAttributes): void {
    if (!this.ended) this.span.setAttributes(attributes);
  }

  end(error?: string): void {
    // The API warns on a second end; the core may end a span from two paths that race.
    if (this.ended) return;
    this.ended = true;
    if (error !== undefined) this.span.setStatus({ code: SpanStatusCode.ERROR, message: error });
    this.span.end();
  }

  traceparent(): string {
    if (this.header === null) {
      const flags = (this.span.spanContext().traceFlags & 0xff).toString(16).padStart(2, '0');
      this.header = `00-${this.traceId}-${this.spanId}-${flags}`;
    }
    return this.header;
  }
}

/**
 * The context a span starts in. Always explicit, never the process's active context: the
 * core hands over its parents, so the tree does not depend on which async path happened
 * to be running, and a span without a parent starts a trace of its own.
 */
function parentContext(parent: SpanOptions['parent']): Context {
  if (parent instanceof OtelSpan) return trace.setSpan(ROOT_CONTEXT, parent.span);
  if (typeof parent === 'string' && isTraceparent(parent)) {
    const [, traceId, spanId, flags] = parent.split('-') as [string, string, string, string];
    return trace.setSpanContext(ROOT_CONTEXT, { traceId, spanId, traceFlags: parseInt(flags, 16), isRemote: true });
  }
  return ROOT_CONTEXT;
}

/** The core's tracing port over an OpenTelemetry tracer. */
export function otelTracing(tracer: Tracer): Tracing {
  return {
    enabled: true,
    start(name, options = {}) {
      const span = tracer.startSpan(
        name,
        { kind: KINDS[options.kind ?? 'internal'], ...(options.attributes ? { attributes: options.attributes } : {}) },
        parentContext(options.parent),
      );
      return new OtelSpan(span);
    },
  };
}
