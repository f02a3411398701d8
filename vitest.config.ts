import { defineConfig } from 'vitest/config';

/**
 * The emulator is a workspace package (packages/emulator, rx-informer-emulator) whose `exports` point at its built
 * dist/ for consumers; this condition makes tests use its TypeScript sources instead (node: --conditions, tsc:
 * customConditions in tsconfig.json). The rest are Vite's default server conditions.
 */
const conditions = ['rx-informer-source', 'module', 'node', 'development|production'];

export default defineConfig({
  ssr: { resolve: { conditions } },
  test: {
    include: ['spec/**/*.spec.ts', 'marbles/**/*.spec.ts'],
    environment: 'node',
    // Vitest's default is one worker fewer than the cores: one worker on the 2-core machines we target.
    // Many suites wait on sockets, child processes and timers rather than compute, so three workers keep both
    // cores busy: vitest ~95 s instead of ~115 s with two (~3.5 min with one).
    maxWorkers: 3,
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
