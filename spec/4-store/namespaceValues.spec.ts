import v8 from 'node:v8';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { namespaceIndex } from '../../src/4-store/indexing.ts';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
const MiB = 2 ** 20;

/** Heap bytes still referenced after `work`, once its garbage is collected. */
function retainedBy(work: () => void): number {
  gc();
  const before = process.memoryUsage().heapUsed;
  work();
  gc();
  return process.memoryUsage().heapUsed - before;
}

// audit20 finding 4: the process-wide namespace cache (src/4-store/indexing.ts) was capped at 100,000 names but not
// by their length, and never lets go: a broken or hostile server's objects with long, unique namespaces stayed held
// after the objects were gone (kube-apiserver's names are DNS labels, at most 63 characters).
describe('namespaceIndex: what its process-wide cache keeps', () => {
  it('holds no namespace longer than 63 characters: 200 objects with 1 MiB namespaces hold nothing once gone', () => {
    const held = retainedBy(() => {
      for (let i = 0; i < 200; i++) {
        // As JSON.parse makes it: a fresh flat string of 1 MiB.
        const namespace = JSON.parse(`"${String(i).padStart(8, '0')}${'n'.repeat(MiB)}"`) as string;
        expect(namespaceIndex({ metadata: { namespace } })).toEqual([namespace]);
      }
    });
    expect(held).toBeLessThan(10 * MiB);
  });

  it('holds no larger string a cached name was sliced from: 200 names of 63 characters cut from 1 MiB strings', () => {
    const held = retainedBy(() => {
      for (let i = 0; i < 200; i++) {
        const text = JSON.parse(`"${String(i).padStart(63, 'n')}${'x'.repeat(MiB)}"`) as string;
        const namespace = text.slice(0, 63); // V8 makes this a slice: it points into `text`
        expect(namespaceIndex({ metadata: { namespace } })).toEqual([namespace]);
      }
    });
    expect(held).toBeLessThan(10 * MiB);
  });

  it('shares one array per namespace of a valid length (no allocation per object); a longer one gets its own', () => {
    const a = 'n'.repeat(63);
    expect(namespaceIndex({ metadata: { namespace: a } })).toBe(namespaceIndex({ metadata: { namespace: `${a}` } }));
    expect(namespaceIndex({ metadata: { namespace: 'kube-system' } })).toBe(namespaceIndex({ metadata: { namespace: 'kube-system' } }));
    const long = 'n'.repeat(64);
    expect(namespaceIndex({ metadata: { namespace: long } })).not.toBe(namespaceIndex({ metadata: { namespace: long } }));
    expect(namespaceIndex({ metadata: { namespace: long } })).toEqual([long]);
    expect(Object.isFrozen(namespaceIndex({ metadata: { namespace: long } }))).toBe(true);
    expect(namespaceIndex({ metadata: {} })).toEqual(['']);
  });
});
