// Temporary: these are not yet exported from @fenceline/core's index.
export { parseDagSpec, specsEqual, canonicalJson } from '../../../core/src/dag/validate';
export { shardOf } from '../../../core/src/dag/shard';
export { firstSlot } from '../../../core/src/schedule/slots';
