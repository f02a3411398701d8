import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Subject } from 'rxjs';
import { z } from 'zod';
import { InformerError, KubeObject, customResource, type Indexers, type Store } from '../../src/index.ts';
import { decoder, informerFromSource, type SourceEvent } from '../../src/pipeline.ts';

/**
 * Faults in user code never end the informer: random index functions,
 * transforms, zod refinements and handlers that throw (anything: Errors,
 * strings, undefined, objects whose `message` getter throws, objects without a
 * prototype), on random objects, impurely, never end events$, store$ or
 * errors$; each fault is reported with the object's key.
 */

type Obj = KubeObject;
const Widgets = customResource({ group: 'example.com', version: 'v1', plural: 'widgets', kind: 'Widget', namespaced: true });

const nasty: (() => unknown)[] = [
  () => new TypeError("Cannot read properties of undefined (reading 'owner')"),
  () => 'a string',
  () => undefined,
  () => null,
  () => 42,
  () => Object.create(null) as unknown,
  () => ({
    get message(): string {
      throw new Error('the message getter throws too');
    },
  }),
  () => Symbol('thrown'),
];

/** A user function that throws (something nasty) whenever the draw says so: impure on purpose. */
function sometimes<A extends unknown[], R>(draw: () => number, rate: number, body: (...args: A) => R): (...args: A) => R {
  return (...args: A) => {
    if (draw() < rate) throw nasty[Math.floor(draw() * nasty.length)]!();
    return body(...args);
  };
}

type Step =
  | { readonly op: 'list'; readonly names: readonly string[] }
  | { readonly op: 'added' | 'modified' | 'deleted'; readonly name: string }
  | { readonly op: 'resync' };

const nameArb = fc.constantFrom('a', 'b', 'c', 'd', 'e');
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.array(nameArb, { maxLength: 5 }).map((names): Step => ({ op: 'list', names })),
  fc.tuple(fc.constantFrom('added', 'modified', 'deleted' as const), nameArb).map(([op, name]): Step => ({ op, name })),
  fc.constant<Step>({ op: 'resync' }),
);

describe('faults in user code never end the informer', () => {
  it('property: throwing indexers, transforms, refinements and handlers on random objects never end events$, store$ or errors$', () => {
    fc.assert(
      fc.property(
        fc.array(stepArb, { minLength: 1, maxLength: 30 }),
        fc.integer(),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (steps, seed, rate) => {
          // A small deterministic generator, so a failure replays.
          let state = seed | 0;
          const draw = () => {
            state = (Math.imul(state, 1664525) + 1013904223) | 0;
            return (state >>> 0) / 2 ** 32;
          };
          const schema = KubeObject.refine(sometimes(draw, rate, () => true)) as unknown as z.ZodType<Obj>;
          const transform = sometimes(draw, rate, (o: Obj) => o);
          const decode = decoder<Obj>(schema, transform, { apiVersion: 'example.com/v1', kind: 'Widget' });
          const indexers: Indexers<Obj> = {
            owner: sometimes(draw, rate, (o: Obj) => [o.metadata.name]),
            constructor: sometimes(draw, rate, (o: Obj) =>
              draw() < rate ? ('not an array' as unknown as string[]) : [o.metadata.resourceVersion ?? ''],
            ),
          };
          // An own "__proto__" index, as Object.fromEntries or JSON would make it.
          Object.defineProperty(indexers, '__proto__', { value: sometimes(draw, rate, () => ['x']), enumerable: true });

          const source = new Subject<SourceEvent<Obj>>();
          const informer = informerFromSource(Widgets, source, { indexers });
          const ended: string[] = [];
          const errors: InformerError[] = [];
          let store: Store<Obj> | undefined;
          let events = 0;
          const watch = (name: string) => ({ error: () => ended.push(`${name} errored`), complete: () => ended.push(`${name} completed`) });
          informer.events$.subscribe({ next: () => events++, ...watch('events$') });
          informer.errors$.subscribe({ next: (e) => errors.push(e), ...watch('errors$') });
          informer.store$.subscribe({ next: (s) => (store = s), ...watch('store$') });
          const handler = sometimes(draw, rate, () => undefined);
          informer.on(handler);

          let rv = 0;
          const object = (name: string) => ({ metadata: { name, namespace: 'ns', resourceVersion: String(++rv) } });
          for (const step of steps) {
            if (step.op === 'resync') source.next({ type: 'resync' });
            else if (step.op === 'list') {
              const items: Obj[] = [];
              const rejectedKeys: string[] = [];
              for (const name of step.names) {
                const decoded = decode(object(name), 'list');
                if (decoded instanceof InformerError) {
                  source.next({ type: 'error', error: decoded });
                  rejectedKeys.push(decoded.key!);
                } else items.push(decoded);
              }
              source.next({ type: 'replace', items, resourceVersion: String(rv), rejectedKeys });
            } else {
              const decoded = decode(object(step.name), 'watch');
              if (decoded instanceof InformerError) {
                source.next({ type: 'error', error: decoded });
                if (step.op === 'deleted') source.next({ type: 'deletedKey', key: decoded.key!, resourceVersion: String(rv) });
              } else source.next({ type: step.op, object: decoded, resourceVersion: String(rv) });
            }
          }

          expect(ended).toEqual([]);
          expect(store).toBeDefined();
          for (const error of errors) {
            expect(['ValidationFailed', 'TransformError', 'IndexerError', 'HandlerError']).toContain(error.reason);
            expect(error.key).toMatch(/^ns\/[a-e]$/);
          }
          // The cache is consistent with its index: every cached key is filed under its own name.
          for (const [key, cached] of store!.entries()) expect(store!.indexKeys('owner', cached.metadata.name)).toEqual([key]);
          expect(store!.indexValues('owner').length).toBe(store!.size);
          expect(events).toBeGreaterThanOrEqual(0);
        },
      ),
      { numRuns: 300 },
    );
  });
});
