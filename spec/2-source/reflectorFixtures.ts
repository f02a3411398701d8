/** What the reflector's table-driven specs (step.spec, stateDiagram.spec) feed `step`: objects, frames and Statuses. */
import type { KubeObject } from '../../src/0-model/objects.ts';
import type { WatchFrame } from '../../src/1-transport/listWatch.ts';

export const obj = (name: string, rv: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'ns', resourceVersion: rv },
});

export const event = (type: string, object: unknown): WatchFrame => ({ type, object });

/** A `Status` object, as a failure body or an ERROR event's object. */
export const status = (code: number, reason: string, extra: Record<string, unknown> = {}) => ({
  kind: 'Status',
  status: 'Failure',
  code,
  reason,
  message: reason,
  ...extra,
});

/** kube-apiserver's 504 for a resourceVersion ahead of its watch cache. */
export const tooLarge = status(504, 'Timeout', {
  message: 'Too large resource version: 99, current: 20',
  details: { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }] },
});
