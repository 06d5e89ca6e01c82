import type { SpanAttributes, SpanOptions, Tracing, TraceSpan } from '../tracing';

/** A span as the recording tracer kept it: who its parent is, what it carried, how it ended. */
export interface RecordedSpan extends TraceSpan {
  readonly name: string;
  readonly kind: NonNullable<SpanOptions['kind']>;
  /** The parent's span id (a span of this tracer or a carried traceparent's), or null for a root. */
  readonly parentSpanId: string | null;
  readonly attributes: SpanAttributes;
  readonly events: { name: string; attributes?: SpanAttributes }[];
  ended: boolean;
  error: string | undefined;
}

/**
 * A tracing port that keeps every span in memory, for tests of what the core traces. Its
 * ids count up, so a test can tell spans apart without a tracing library.
 */
export class RecordingTracing implements Tracing {
  readonly spans: RecordedSpan[] = [];
  private next = 1;

  constructor(readonly enabled = true) {}

  start(name: string, options: SpanOptions = {}): TraceSpan {
    const parent = options.parent;
    const carried = typeof parent === 'string' ? /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/.exec(parent) : null;
    const spanId = (this.next++).toString(16).padStart(16, '0');
    const traceId = typeof parent === 'object' ? parent.traceId : carried ? carried[1]! : spanId.padStart(32, 'a');
    const span: RecordedSpan = {
      name,
      kind: options.kind ?? 'internal',
      parentSpanId: typeof parent === 'object' ? parent.spanId : carried ? carried[2]! : null,
      attributes: { ...options.attributes },
      events: [],
      ended: false,
      error: undefined,
      traceId,
      spanId,
      event(eventName, attributes) {
        span.events.push(attributes ? { name: eventName, attributes } : { name: eventName });
      },
      setAttributes(attributes) {
        Object.assign(span.attributes, attributes);
      },
      end(error) {
        if (span.ended) return;
        span.ended = true;
        span.error = error;
      },
      traceparent: () => `00-${traceId}-${spanId}-01`,
    };
    this.spans.push(span);
    return span;
  }

  named(name: string): RecordedSpan[] {
    return this.spans.filter((s) => s.name === name);
  }
}
