import { Observable, type OperatorFunction } from 'rxjs';
import type { InformerEvent, UpdatedEvent } from '../4-store/informerEvent.ts';
import { FieldSelector, fieldChanges, MAX_DEPTH, type Change } from './fieldChanges.ts';
import { forward } from '../util/forward.ts';

/** What {@link diff} compares, and how. */
export interface DiffOptions<T> {
  /**
   * Which fields count (see {@link FieldChangesOptions.fields}): `spec.**`, `metadata.labels`,
   * `!status`, `!metadata.managedFields`. Default: every field but `metadata.resourceVersion`
   * and `metadata.managedFields` ({@link DIFF_NOISE}).
   */
  readonly fields?: readonly string[];
  /**
   * Applied to both versions before they are compared (e.g. a Secret redactor), so what
   * it hides never reaches a change. It may throw: the event is then skipped and the
   * error given to `onError` (default: dropped).
   */
  readonly redact?: (object: T) => unknown;
  readonly onError?: (error: unknown, event: UpdatedEvent<T>) => void;
  /** How deep to descend (default 64): deeper differences are one change shown as `TOO_DEEP`. */
  readonly maxDepth?: number;
  /**
   * Trust `metadata.generation`: when both versions carry the same generation, `spec` is
   * taken as unchanged and not compared. Right for resources whose generation moves with
   * every change of spec (Deployments, StatefulSets, Jobs, custom resources…), wrong for
   * the others; objects without a generation are compared in full. Default false.
   */
  readonly trustGeneration?: boolean;
}

/** The fields whose change is noise: the default exclusions of {@link diff}. */
export const DIFF_NOISE: readonly string[] = ['!metadata.resourceVersion', '!metadata.managedFields'];

/** An `updated` event with the fields it changed (at least one). */
export type DiffEvent<T> = UpdatedEvent<T> & { readonly changes: readonly Change[] };

/**
 * Turns `updated` events into the fields they changed: path, old value, new
 * value. Other events, resyncs (same resourceVersion: nothing to compare),
 * and updates that changed no selected field are dropped.
 *
 * ```
 * events:  --a--u--s--v--d--
 *          a: added, u: updated (spec.replicas 2 → 3), s: resync, v: updated (status.ready 0 → 1), d: deleted
 * diff()
 * output:  -----c-----w-----
 * diff({ fields: ['!status', '!metadata.resourceVersion'] })
 * output:  -----c-----------
 *          c: u with changes [{ path: 'spec.replicas', old: 2, new: 3 }]; w: v with [{ path: 'status.ready', old: 0, new: 1 }]
 *          (`fields` replaces the default exclusions: without '!metadata.resourceVersion', v would show its new resourceVersion)
 * ```
 *
 * ## Example
 * ```ts
 * deployments.events$.pipe(diff({ fields: ['spec.**', 'metadata.labels'] }))
 *   .subscribe((e) => console.log(e.object.metadata.name, e.changes));
 * ```
 *
 * Cost: unselected subtrees are never entered and subtrees that are the same
 * reference are skipped; the walk is iterative, with a depth cap.
 *
 * @param options Field patterns, a redactor, the depth cap.
 * @return The updates that changed a selected field, each with its changes.
 */
export function diff<T>(options: DiffOptions<T> = {}): OperatorFunction<InformerEvent<T>, DiffEvent<T>> {
  const fields = options.fields ?? DIFF_NOISE;
  const selector = new FieldSelector(fields);
  const withoutSpec = options.trustGeneration ? new FieldSelector([...fields, '!spec']) : selector;
  const maxDepth = options.maxDepth ?? MAX_DEPTH;
  const redact = options.redact;
  return (source) =>
    new Observable<DiffEvent<T>>((subscriber) =>
      source.subscribe(
        forward(subscriber, (event) => {
          if (event.type !== 'updated' || event.resync) return;
          let changes: Change[];
          try {
            const before = redact ? redact(event.oldObject) : event.oldObject;
            const after = redact ? redact(event.object) : event.object;
            const same = options.trustGeneration === true && sameGeneration(event.oldObject, event.object);
            changes = fieldChanges(before, after, { fields: same ? withoutSpec : selector, maxDepth });
          } catch (error) {
            try {
              options.onError?.(error, event);
            } catch {
              // A failing error handler has nowhere left to report to.
            }
            return;
          }
          if (changes.length > 0) subscriber.next({ ...event, changes });
        }),
      ),
    );
}

function generationOf(object: unknown): unknown {
  return (object as { metadata?: { generation?: unknown } } | null)?.metadata?.generation;
}

function sameGeneration(a: unknown, b: unknown): boolean {
  const g = generationOf(a);
  return typeof g === 'number' && g === generationOf(b);
}
