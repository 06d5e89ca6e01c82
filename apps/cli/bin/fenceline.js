#!/usr/bin/env node
// The CLI is TypeScript run from source, as every process of the repository is (npm start,
// the scheduler, the worker): tsx compiles each module as it is loaded.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli.ts');
