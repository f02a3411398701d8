/**
 * In-process Kubernetes API-server emulator with fault injection, for tests.
 * See README.md in this folder.
 */
export { startApiServer, type ApiServer, type ApiServerOptions } from './server.ts';
export type { ReplayState, ReplayTrace } from './replay.ts';
export type { CustomResourceDefinitionSpec, Gvr, GvrLike, JsonSchema, StoredObject, StoredObjectMeta, WireEventType } from './types.ts';
export { gvrs } from './resources.ts';
export {
  FAULT_KINDS,
  FAULT_TYPES,
  FaultInjector,
  isWatchFault,
  type Fault,
  type FaultHandle,
  type FaultMatch,
  type FaultParams,
  type FaultRequestInfo,
  type FaultRule,
  type FaultType,
  type LiveFaultRule,
  type OpenWatch,
  type RequestFault,
  type RequestFaultRule,
  type WatchFault,
  type WatchTrigger,
} from './faults.ts';
export type { RequestPredicate, RequestRecord } from './requestLog.ts';
export { ApiError, type Status, type StatusCause, type StatusDetails } from './status.ts';
export type { PatchType } from './objects.ts';
export { decodeContinue, encodeContinue, type ContinueToken } from './continueToken.ts';
export { TEST_TLS_CERT, TEST_TLS_CERT_B, TEST_TLS_CERT_C, TEST_TLS_KEY, TEST_TLS_KEY_B, TEST_TLS_KEY_C } from './tls.ts';
export { MY_APPLES, startChurn, type ChurnOptions } from './churn.ts';
