/** The packages this repository publishes: the library at the root, the API-server emulator beside it. */
export const PACKAGES: Readonly<Record<string, { readonly dir: string }>> = {
  'rx-informer': { dir: '.' },
  'rx-informer-emulator': { dir: 'packages/emulator' },
};

/**
 * Every package's entry points (its package.json's exports) and the sources they are built from, relative to the
 * repository: `<dir>/src/x.ts` is built to `<dir>/dist/x.js`.
 */
export const PACKAGE_ENTRIES: Readonly<Record<string, string>> = {
  'rx-informer': 'src/index.ts',
  'rx-informer/discovery': 'src/discovery/index.ts',
  'rx-informer/diff': 'src/diff.ts',
  'rx-informer/controller': 'src/controller/index.ts',
  'rx-informer/workqueue': 'src/workqueue/index.ts',
  'rx-informer/metrics': 'src/metrics/index.ts',
  'rx-informer/leaderelection': 'src/leaderelection/index.ts',
  'rx-informer/pipeline': 'src/pipeline.ts',
  'rx-informer/testing': 'src/testing/index.ts',
  'rx-informer-emulator': 'packages/emulator/src/index.ts',
};
