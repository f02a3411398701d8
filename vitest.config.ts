import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

/**
 * The emulator is a workspace package (packages/emulator, rx-informer-emulator) whose `exports` point at its built
 * dist/ for consumers; this condition makes tests use its TypeScript sources instead (node: --conditions, tsc:
 * customConditions in tsconfig.json). The rest are Vite's default server conditions.
 */
const conditions = ['rx-informer-source', 'module', 'node', 'development|production'];

const include = ['spec/**/*.spec.ts', 'marbles/**/*.spec.ts'];

/**
 * Spec files that need a worker of their own: optionWalk's, namespacesDescriptors' and namespacesInformer's `vi.mock` factories replace
 * library modules, which a worker shared with other files would already have loaded (so the mock would not apply, or
 * would leak);
 * lifecycle counts the process's timers and sockets, where another file's could still be pending.
 */
const ISOLATED = [
  'spec/5-informer/optionWalk.spec.ts',
  'spec/5-informer/namespacesDescriptors.spec.ts',
  'spec/5-informer/namespacesInformer.spec.ts',
  'spec/emulator/lifecycle.spec.ts',
];

/**
 * Node's on-disk cache of compiled modules (V8 code, TypeScript already stripped), for every process a test starts
 * (documentation examples, benchmark contenders, example replicas; the CLI turns it on itself): each of those loads
 * @kubernetes/client-node and the library again, ~0.8 s of CPU without the cache, ~0.55 s with it. Keyed by Node's
 * version and each file's content, so a stale entry is never used. Given as the tests' environment, so the workers
 * themselves (whose heaps some specs measure) run as before; a spec measuring a child's heap as it is without the
 * cache removes it from that child's environment (spec/bench/heapBaseline.spec.ts).
 */
const compileCache = fileURLToPath(new URL('node_modules/.cache/node-compile-cache', import.meta.url));

export default defineConfig({
  ssr: { resolve: { conditions } },
  test: {
    environment: 'node',
    env: { NODE_COMPILE_CACHE: process.env['NODE_COMPILE_CACHE'] ?? compileCache },
    // Vitest's default is one worker fewer than the cores: one worker on the 2-core machines we target.
    // Many suites wait on sockets, child processes and timers rather than compute, so three workers keep both
    // cores busy.
    maxWorkers: 3,
    // Drops the informers' RxInformerWarnings (faults nobody subscribes to, on purpose in many specs); see the file.
    setupFiles: ['spec/support/quietInformerWarnings.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    projects: [
      {
        extends: true,
        // Files share a worker's modules (rxjs, client-node, the library): loading them again for each of ~160 files
        // was about half of the suite's CPU time.
        test: { name: 'shared', include, exclude: ISOLATED, isolate: false },
      },
      { extends: true, test: { name: 'isolated', include: ISOLATED } },
    ],
  },
});
