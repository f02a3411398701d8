/**
 * rx-informer/testing: test a controller without a cluster.
 *
 * - `startApiServer`: an in-process Kubernetes API-server emulator on 127.0.0.1 with fault injection.
 * - `startChurn`: steady writes (and occasional faults) against it.
 * - `fakeInformer` and object helpers: informers driven by marble diagrams, in virtual time.
 * - `fakeListWatch`: a scripted ListWatch, to drive the reflector itself from marbles.
 */
export * from './emulator/index.ts';
export { MY_APPLES, startChurn, type ChurnOptions } from './churn.ts';
export { added, bookmark, deleted, failure, fakeInformer, fakeResource, kubeObj, listed, modified, type ObjectParts } from './marbles.ts';
export {
  fakeListWatch,
  httpFailure,
  listPage,
  networkFailure,
  watchBookmark,
  watchEvent,
  watchStatus,
  type FakeListRequest,
  type FakeListWatch,
  type FakeListWatchOptions,
  type FakeListWatchScript,
  type FakeRequest,
  type FakeWatchRequest,
  type RequestEnd,
  type Scripted,
} from './fakeListWatch.ts';
