import { z } from 'zod';
import { LIMITS } from '@fenceline/core';

/**
 * The key a console click sends with a write that must not happen twice (a trigger, a run
 * action): the store keeps the first answer under it, so a request that arrives twice (a
 * double click, a retry) does one thing.
 */
export const requestKeySchema = z
  .string()
  .min(1)
  .max(LIMITS.maxRequestKeyLength)
  .regex(/^[A-Za-z0-9_-]+$/, 'letters, digits, _ or -');
