export * from './log';
export * from './otel-tracing';
export * from './setup';
export * from './traced-store';
