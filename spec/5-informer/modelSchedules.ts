/**
 * What the two reference-model property tests share (informerModel.spec.ts for the DeltaFIFO mode,
 * inOrderModel.spec.ts for the in-order mode): the Widget resource, a decoder whose refinement and
 * indexer can fail on purpose, and random schedules of list, watch and resync steps as source events.
 */
import fc from 'fast-check';
import { z } from 'zod';
import { InformerError, customResource, kubeObject, type Indexers, type KubeObject } from '../../src/index.ts';
import { decoder, type SourceEvent } from '../../src/pipeline.ts';
export type Obj = KubeObject & { spec?: { valid?: boolean; boom?: boolean; team?: string } };

export const Widget = kubeObject({
  spec: z.looseObject({ team: z.string().optional(), valid: z.boolean().optional(), boom: z.boolean().optional() }).optional(),
});
export const Widgets = customResource<Obj>({
  group: 'example.com',
  version: 'v1',
  plural: 'widgets',
  kind: 'Widget',
  namespaced: true,
  schema: Widget as unknown as z.ZodType<Obj>,
});

/** A user refinement that throws (→ ValidationFailed), like one reading a field that is not there. */
export const schema = (Widget as unknown as z.ZodType<Obj>).refine((o) => {
  if (o.spec?.valid === false) throw new TypeError('refinement read a field that is not there');
  return true;
});
export const decode = decoder<Obj>(schema, undefined, { apiVersion: 'example.com/v1', kind: 'Widget' });

/** An indexer that throws for objects marked `boom` (cm.data.owner on a ConfigMap without data). */
export const indexers: Indexers<Obj> = {
  team: (o) => {
    if (o.spec?.boom) throw new TypeError("Cannot read properties of undefined (reading 'owner')");
    return o.spec?.team ? [o.spec.team] : [];
  },
};

// ── the schedule ─────────────────────────────────────────────────────────────
export type Version = { readonly name: string; readonly valid: boolean; readonly boom: boolean; readonly team: string };
export type Op =
  | { readonly op: 'list'; readonly items: readonly Version[] }
  | { readonly op: 'added' | 'modified' | 'deleted'; readonly item: Version }
  | { readonly op: 'resync' | 'bookmark' | 'fault' };

// Mostly valid objects, sometimes invalid or indexer-breaking.
export const versionArb: fc.Arbitrary<Version> = fc
  .tuple(fc.constantFrom('a', 'b', 'c', 'd'), fc.nat(9), fc.nat(9), fc.constantFrom('red', 'blue', ''))
  .map(([name, v, b, team]) => ({ name, valid: v > 1, boom: b < 2, team }));
export const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 2, arbitrary: fc.array(versionArb, { maxLength: 5 }).map((items): Op => ({ op: 'list', items })) },
  {
    weight: 6,
    arbitrary: fc.tuple(fc.constantFrom('added', 'modified', 'deleted' as const), versionArb).map(([op, item]): Op => ({ op, item })),
  },
  { weight: 1, arbitrary: fc.constantFrom<Op>({ op: 'resync' }, { op: 'bookmark' }, { op: 'fault' }) },
);
export const scheduleArb = fc
  .tuple(fc.array(versionArb, { maxLength: 5 }), fc.array(opArb, { maxLength: 40 }))
  .map(([first, rest]): Op[] => [{ op: 'list', items: first }, ...rest]);

/** The raw object the server sends for a version at a resourceVersion. */
export function raw(v: Version, rv: number): Record<string, unknown> {
  return {
    apiVersion: 'example.com/v1',
    kind: 'Widget',
    metadata: { name: v.name, namespace: 'ns', resourceVersion: String(rv) },
    spec: { team: v.team, ...(v.valid ? {} : { valid: false }), ...(v.boom ? { boom: true } : {}) },
  };
}

/**
 * What listAndWatch emits for a schedule (the lead's side of the contract in
 * sourceEvent.ts): an invalid object is reported and its key named in
 * `rejectedKeys` (list) or `deletedKey` (DELETED).
 */
export function sourceEvents(schedule: readonly Op[]): SourceEvent<Obj>[] {
  const out: SourceEvent<Obj>[] = [];
  let rv = 1;
  for (const step of schedule) {
    rv++;
    switch (step.op) {
      case 'list': {
        const items: Obj[] = [];
        const rejectedKeys: string[] = [];
        for (const v of step.items) {
          const decoded = decode(raw(v, rv), 'list');
          if (decoded instanceof InformerError) {
            out.push({ type: 'error', error: decoded });
            rejectedKeys.push(decoded.key!);
          } else items.push(decoded);
        }
        out.push({ type: 'replace', items, resourceVersion: String(rv), ...(rejectedKeys.length ? { rejectedKeys } : {}) });
        break;
      }
      case 'added':
      case 'modified':
      case 'deleted': {
        const decoded = decode(raw(step.item, rv), 'watch');
        if (decoded instanceof InformerError) {
          out.push({ type: 'error', error: decoded });
          if (step.op === 'deleted') out.push({ type: 'deletedKey', key: decoded.key!, resourceVersion: String(rv) });
        } else out.push({ type: step.op, object: decoded, resourceVersion: String(rv) });
        break;
      }
      case 'resync':
        out.push({ type: 'resync' });
        break;
      case 'bookmark':
        out.push({ type: 'bookmark', resourceVersion: String(rv) });
        break;
      case 'fault':
        out.push({ type: 'error', error: new InformerError('NetworkError', 'connection reset', { phase: 'watch' }) });
        break;
    }
  }
  return out;
}
