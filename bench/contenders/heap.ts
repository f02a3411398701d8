/**
 * Heap measurements for the bench's contender processes (`--expose-gc`).
 *
 * A process that imports TypeScript sources (every bench process: Node strips the types) holds ≈ 4 MB that V8 keeps
 * only as a cache: Node's type stripper (amaro), compiled when the first `.ts` module is loaded, stays in V8's
 * compilation cache (a ≈ 3.8 MB string in the large-object space) with the bytecode of start-up code, until that
 * bytecode ages out (`--bytecode-old-age`, 6 mark-compacts by default) or a memory-reducing collection drops it.
 * `gc()` does neither. So a heap measured after `gc()` before a sync and after it differs by whether the sync ran
 * six mark-compacts: runs that did look ≈ 5 MB smaller, whatever they cached (docs/performance.md, "List pages
 * decoded in pieces"). {@link settle} drops that cache; run it only where nothing measured follows, because a
 * memory-reducing collection changes what the collector does next.
 */

const collector = (): ((options?: object) => void) => {
  const gc = (globalThis as { gc?: (options?: object) => void }).gc;
  if (!gc) throw new Error('the bench process needs --expose-gc');
  return gc;
};

/** Two full collections (`gc()` twice): the heap then holds what is alive, and V8's caches. */
export function collect(): void {
  const gc = collector();
  gc();
  gc();
}

/**
 * A memory-reducing full collection (V8's "last resort", the one a heap snapshot runs): V8 also drops its compilation
 * cache and bytecode, so nothing is left that V8 would free later on its own.
 */
export function settle(): void {
  collector()({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  collect();
}
