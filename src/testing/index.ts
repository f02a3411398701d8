/**
 * rx-informer/testing: test a controller without a cluster.
 *
 * - `fakeInformer` and object helpers: informers driven by marble diagrams, in virtual time.
 * - `fakeListWatch`: a scripted ListWatch, to drive the reflector itself from marbles.
 * - `replayListWatch`: a ListWatch answering from a trace `record` (rx-informer/pipeline) wrote, in virtual time.
 * - `FakeLeaseServer` and `driftingScheduler`: Leases in memory with faults and partitions, and a clock per replica,
 *   to test leader election and sharding in virtual time.
 *
 * The API-server emulator (`startApiServer`, `startChurn`) is a package of its own: rx-informer-emulator.
 */
export {
  added,
  bookmark,
  deleted,
  failure,
  fakeInformer,
  fakeResource,
  kubeObj,
  listed,
  modified,
  type FieldOf,
  type ObjectParts,
  type OwnerParts,
  type PartOf,
} from './marbles.ts';
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
export { FakeLeaseServer, type FakeClientOptions, type FakeLeaseFault, type FakeLeaseRequest, type FakeLeaseWrite } from './fakeLeases.ts';
export { driftingScheduler } from './driftingScheduler.ts';
export { replayListWatch, type ReplayListWatch, type ReplayMismatch, type ReplayOptions } from './replayListWatch.ts';
export { readTrace, TraceFormatError, type Trace } from '../1-transport/trace/format.ts';
export { openTrace, type OpenTraceOptions, type TraceFile, type TraceSource } from '../1-transport/trace/reader.ts';
