/**
 * rx-informer/pipeline: the stages of an informer one by one, for building
 * your own pipeline or testing a stage. `informer()` (the root entry) wires
 * them together; most users never need this entry.
 *
 *   1-transport  httpListWatch → ListWatch (the only I/O), line splitting, lazy JSON
 *   2-source     listAndWatch: the reflector, its recovery rules and backoff
 *   3-deltas     resync, deltaFifo (or realFifo, in order), processDeltas
 *   4-store      reduceDeltas, the Store's batches, the namespace index
 *   5-informer   informerFromSource, EventQueue
 *
 * It also holds the details of the model (the error's details, owner references, wire types, resource names)
 * and the option types of the stages an informer is made of.
 */

// 0 · model
export { isExpired, type ErrorPhase, type InformerErrorDetails, type KubeStatus } from './0-model/errors.ts';
export { OwnerReference, splitKey, type Typed, type TypedMeta, type Wire } from './0-model/objects.ts';
export { apiVersionOf, resourceName, type ResourceDescription } from './0-model/resources.ts';
export { isMetadataOnly } from './0-model/metadata.ts';
export { LAST_APPLIED, isSecretResource, secretRedactor } from './0-model/redact.ts';

// 1 · transport
export {
  METADATA_LIST_ACCEPT,
  METADATA_WATCH_ACCEPT,
  httpListWatch,
  parseRetryAfter,
  parseWatchLine,
  type Compression,
  type Encoding,
  type Http2Options,
  type HttpProtocol,
  type HttpTransportOptions,
  type JsonRequestOptions,
  type ReachabilityOptions,
} from './1-transport/httpTransport.ts';
export { hasUnparsedMembers, isSkipped, type KeepObject } from './1-transport/lazyJson.ts';
export { LineSplitter, type LineBytesSink, type LineSink } from './1-transport/lineSplitter.ts';
export type { LinedFrame, ListOptions, ListPage, ListWatch, RawWatchEvent, WatchFrame, WatchOptions } from './1-transport/listWatch.ts';
export { collectionPath, type ListWatchTarget } from './1-transport/paths.ts';
export { passThrough, record, type RecordOptions } from './1-transport/trace/record.ts';
export { traceWriter, type TraceWriter, type TraceWriterOptions } from './1-transport/trace/writer.ts';
export { traceFileSink, type TraceFileOptions, type TraceFileSink } from './1-transport/trace/traceFileSink.ts';
export type { RetryAfterOptions } from './0-model/retryAfter.ts';
export { trimTrace, writeTrimmedTrace, type TrimWindow } from './1-transport/trace/trim.ts';
export { openTrace, traceSource, type OpenTraceOptions, type TraceFile, type TraceSource } from './1-transport/trace/reader.ts';
export {
  MAX_TRACE_LINE_BYTES,
  RecordedError,
  TRACE_FORMAT,
  TRACE_FORMAT_VERSION,
  TraceChecker,
  TraceEnd,
  TraceEvent,
  TraceFailure,
  TraceFormatError,
  TraceHeader,
  TraceLine,
  TraceList,
  TraceNotice,
  TracePage,
  TraceStop,
  TraceWatch,
  readTrace,
  readTraceHeader,
  traceText,
  type ReadTraceOptions,
  type Trace,
  type TraceStopReason,
} from './1-transport/trace/format.ts';
export { PARTIAL_OBJECT_METADATA, toPartialObjectMetadata, typeMetaOf } from './0-model/metadata.ts';

// 2 · source
export { Backoff, type BackoffOptions } from './2-source/backoff.ts';
export type { BackoffRule, BackoffState } from './util/backoff.ts';
export { decoder, type Decoder, type Renames } from './2-source/decode.ts';
export { listAndWatch, reflectorConfig, type ListAndWatchOptions } from './2-source/listAndWatch.ts';
export { step } from './2-source/step.ts';
export {
  describeState,
  initialReflectorState,
  type Chain,
  type Listing,
  type Opening,
  type OpenWatch,
  type Phase,
  type ReflectorConfig,
  type ReflectorEffect,
  type ReflectorInput,
  type ReflectorMemory,
  type ReflectorState,
  type StepResult,
  type Streaming,
  type Waiting,
  type Watching,
} from './2-source/reflectorState.ts';
export {
  afterListFailure,
  afterWatch,
  isTooLargeResourceVersion,
  type Decision,
  type Next,
  type Pace,
  type RecoveryCounters,
  type WatchEnd,
} from './2-source/recovery.ts';
export type { ListProgress, SourceEvent, WatchEventType } from './2-source/sourceEvent.ts';

// 3 · deltas
export { deltaFifo, type DeltaFifoOptions, type KnownObjects } from './3-deltas/deltaFifo.ts';
export { realFifo, type RealFifoOptions } from './3-deltas/realFifo.ts';
export { DeltaQueue } from './3-deltas/deltaQueue.ts';
export {
  isTombstone,
  type BatchCause,
  type Delta,
  type DeltaBatch,
  type Deltas,
  type DeltaType,
  type DeletedFinalStateUnknown,
  type FifoOutput,
} from './3-deltas/deltas.ts';
export { processDeltas } from './3-deltas/processDeltas.ts';
export { resync } from './3-deltas/resync.ts';

// 4 · store
export { initialState, reduceDeltas, type InformerState } from './4-store/reduceDeltas.ts';
export { namespaceIndex, type StoreBatch } from './4-store/store.ts';
export type { IndexValues } from './4-store/indexing.ts';

// 5 · informer
export { informerFromSource } from './5-informer/informerFromSource.ts';
export { EventQueue } from './5-informer/eventQueue.ts';
export { informerName, type Syncable } from './5-informer/factory.ts';
export { DEFAULT_MAX_NAMESPACE_WATCHES } from './5-informer/namespacesInformer.ts';
export type { ShardSource } from './5-informer/shardedInformer.ts';
export type { HandlerMetrics, HandlerResult } from './5-informer/handleEvents.ts';
