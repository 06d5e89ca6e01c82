export * from './errors';
export * from './clock';
export * from './limits';
export * from './spec';
export * from './model';
export * from './store';
export * from './events';
export * from './node';
