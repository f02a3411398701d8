/**
 * rx-informer/controller: a reconcile loop over informers (client-go's work
 * queue and controller-runtime's controller, as Observables), with predicates
 * that decide which events reach it.
 */
export {
  controller,
  type Controller,
  type ControllerInput,
  type ControllerMetrics,
  type ControllerOptions,
  type ReconcileContext,
  type WatchInput,
} from './controller.ts';
export { ABANDONED_ROOM_REPORT_MS, AbandonedRoomError, type RoomStall } from './room.ts';
export { controllerOwnerKey, ownerKeysOf } from './ownerKeys.ts';
export { TerminalError, done, requeue, requeueAfter, type ReconcileOutcome, type ReconcileResult } from './reconcile.ts';
export * from './predicates/index.ts';
