/** FNV-1a, 32 bits, over UTF-16 code units: stable across processes, versions and platforms (a shard's keys, a cut label's tag). */
export function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}
