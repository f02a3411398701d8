import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['spec/**/*.spec.ts', 'marbles/**/*.spec.ts'],
    environment: 'node',
    // Vitest's default is one worker fewer than the cores: one worker on the 2-core machines we target.
    // The main process is idle while tests run, so two workers use both cores (npm test ~2 min instead of ~3.5).
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
