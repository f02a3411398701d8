import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The sharded bench's synced heap holds nothing V8 frees later on its own: a process that loaded TypeScript
 * sources (Node strips their types) keeps ≈ 4 MB in V8's compilation cache after `gc()`, freed only once enough
 * mark-compacts have run or by a memory-reducing collection, so a heap measured after `gc()` made a sync that ran
 * few mark-compacts look ≈ 5 MB heavier (docs/performance.md, "List pages decoded in pieces"). With `gc()` alone
 * instead of settle(), this spec fails (3.8 MB freed by the second collection).
 */
describe('bench heap measurement', () => {
  it('after settle(), a memory-reducing collection frees less than 1 MB more', { timeout: 60_000 }, () => {
    const heap = pathToFileURL(join(import.meta.dirname, '../../bench/contenders/heap.ts')).href;
    const script = `
      const { settle } = await import(${JSON.stringify(heap)});
      settle();
      const baseline = process.memoryUsage().heapUsed;
      globalThis.gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
      globalThis.gc();
      console.log(JSON.stringify({ baseline, reduced: process.memoryUsage().heapUsed }));`;
    // Without the test run's compile cache (vitest.config.ts): code deserialized from it is not what this is about.
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'NODE_COMPILE_CACHE'));
    const out = execFileSync(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { encoding: 'utf8', env });
    const { baseline, reduced } = JSON.parse(out.trim().split('\n').pop()!) as { baseline: number; reduced: number };
    expect(baseline - reduced).toBeLessThan(1024 * 1024);
  });
});
