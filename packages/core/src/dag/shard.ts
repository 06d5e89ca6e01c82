/**
 * The shard that owns a DAG: FNV-1a (32-bit) over the UTF-8 bytes of the DAG id, modulo
 * the shard count.
 *
 * This mapping must stay the same forever. Every stored DAG row records its shard, and
 * every shard leader loads exactly the DAGs of its shards; changing the hash (or the
 * byte encoding) would re-home DAGs to other shards without moving their rows, so two
 * leaders could each believe they own a DAG, or none would. A change of hash needs a
 * migration that rewrites every row's shard while no leader runs.
 */
export function shardOf(dagId: string, shardCount: number): number {
  if (!Number.isInteger(shardCount) || shardCount < 1) {
    throw new Error(`shardOf: shardCount must be a positive integer, got ${shardCount}`);
  }
  return fnv1a32(dagId) % shardCount;
}

/** FNV-1a, 32-bit, over the UTF-8 encoding of `text` (lone surrogates encode as U+FFFD, as TextEncoder does). */
export function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  const add = (byte: number): void => {
    hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
  };
  for (let i = 0; i < text.length; i++) {
    let code = text.charCodeAt(i);
    if (code < 0x80) {
      add(code);
      continue;
    }
    if (code < 0x800) {
      add(0xc0 | (code >> 6));
      add(0x80 | (code & 0x3f));
      continue;
    }
    if (code >= 0xd800 && code <= 0xdbff) {
      const low = i + 1 < text.length ? text.charCodeAt(i + 1) : 0;
      if (low >= 0xdc00 && low <= 0xdfff) {
        const point = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
        i++;
        add(0xf0 | (point >> 18));
        add(0x80 | ((point >> 12) & 0x3f));
        add(0x80 | ((point >> 6) & 0x3f));
        add(0x80 | (point & 0x3f));
        continue;
      }
      code = 0xfffd;
    } else if (code >= 0xdc00 && code <= 0xdfff) {
      code = 0xfffd;
    }
    add(0xe0 | (code >> 12));
    add(0x80 | ((code >> 6) & 0x3f));
    add(0x80 | (code & 0x3f));
  }
  return hash >>> 0;
}
