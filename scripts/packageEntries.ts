/** The package's entry points (package.json's exports) and the sources they are built from. */
export const PACKAGE_ENTRIES: Readonly<Record<string, string>> = {
  'rx-informer': 'src/index.ts',
  'rx-informer/controller': 'src/controller/index.ts',
  'rx-informer/workqueue': 'src/workqueue/index.ts',
  'rx-informer/metrics': 'src/metrics/index.ts',
  'rx-informer/leaderelection': 'src/leaderelection/index.ts',
  'rx-informer/pipeline': 'src/pipeline.ts',
  'rx-informer/testing': 'src/testing/index.ts',
};
