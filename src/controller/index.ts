export { controller, type Controller, type ControllerMetrics, type ControllerOptions, type ReconcileContext } from './controller.ts';
export { controllerOwnerKey, ownerKeysOf } from './ownerKeys.ts';
export { TerminalError, done, requeue, requeueAfter, type ReconcileOutcome, type ReconcileResult } from './reconcile.ts';
