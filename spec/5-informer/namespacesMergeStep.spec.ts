/**
 * `namespacesMergeStep`: an informer over several namespaces as a pure step (src/5-informer/namespacesMergeStep.ts),
 * driven input by input: no timers, no I/O. The shell's behaviour through a transport is in namespacesInformer.spec.ts,
 * namespacesDescriptors.spec.ts, namespacesListProgress.spec.ts and spec/integration/namespaces*.spec.ts.
 */
import { describe, expect, it } from 'vitest';
import { InformerError } from '../../src/0-model/errors.ts';
import type { KubeObject } from '../../src/0-model/objects.ts';
import type { SourceEvent } from '../../src/2-source/sourceEvent.ts';
import type { InformerEvent } from '../../src/4-store/informerEvent.ts';
import type { InformerState } from '../../src/4-store/reduceDeltas.ts';
import { Store } from '../../src/4-store/store.ts';
import {
  initialMergeState,
  namespacesMergeStep,
  type NamespacesMergeConfig,
  type NamespacesMergeEffect,
  type NamespacesMergeInput,
  type NamespacesMergeState,
} from '../../src/5-informer/namespacesMergeStep.ts';

type Obj = KubeObject;
const obj = (namespace: string, name: string, resourceVersion?: string): Obj => ({
  metadata: { name, namespace, ...(resourceVersion === undefined ? {} : { resourceVersion }) },
});
const storeOf = (...objects: Obj[]): Store<Obj> =>
  Store.empty<Obj>().update(objects.map((o) => [`${o.metadata.namespace}/${o.metadata.name}`, o] as const));
const informerState = (fields: Partial<InformerState<Obj>>): InformerState<Obj> => ({
  store: storeOf(),
  synced: false,
  resourceVersion: '',
  events: [],
  errors: [],
  step: 'event',
  ...fields,
});
const forbidden = (phase: 'list' | 'watch') => new InformerError('Forbidden', 'configmaps is forbidden', { phase, status: 403 });
const emfile = () =>
  new InformerError('NetworkError', 'connect EMFILE', { phase: 'list', cause: Object.assign(new Error('EMFILE'), { code: 'EMFILE' }) });

/** Every input in turn from `state`: the last state and every effect, in order. */
function drive(config: NamespacesMergeConfig, state: NamespacesMergeState<Obj>, inputs: NamespacesMergeInput<Obj>[]) {
  const effects: NamespacesMergeEffect<Obj>[] = [];
  for (const input of inputs) {
    const [next, out] = namespacesMergeStep(config, state, input);
    state = next;
    effects.push(...out);
  }
  return { state, effects };
}
const emitted = (effects: readonly NamespacesMergeEffect<Obj>[]): SourceEvent<Obj>[] =>
  effects.flatMap((e) => (e.type === 'emit' ? [e.event] : []));

const two: NamespacesMergeConfig = { members: 2, fallsBack: true };
const wide = initialMergeState<Obj>(two, 'wide');
const perNamespace = initialMergeState<Obj>(two, 'perNamespace');

describe('namespacesMergeStep: the cluster-wide source', () => {
  const replace: SourceEvent<Obj> = { type: 'replace', items: [], resourceVersion: '5' };
  const table: readonly [string, NamespacesMergeConfig, SourceEvent<Obj>[], 'wide' | 'perNamespace', string[]][] = [
    [
      'a plain list refused: fall back, the 403 not emitted',
      two,
      [{ type: 'error', error: forbidden('list') }],
      'perNamespace',
      ['fallBack'],
    ],
    ['a streaming list refused (phase watch): the same', two, [{ type: 'error', error: forbidden('watch') }], 'perNamespace', ['fallBack']],
    [
      'a 403 on the watch after the list: emitted, no fallback',
      two,
      [replace, { type: 'error', error: forbidden('watch') }],
      'wide',
      ['emit', 'emit'],
    ],
    [
      'a 403 on a relist after the list: emitted, no fallback',
      two,
      [replace, { type: 'error', error: forbidden('list') }],
      'wide',
      ['emit', 'emit'],
    ],
    [
      'a ListWatch source never falls back',
      { members: 2, fallsBack: false },
      [{ type: 'error', error: forbidden('list') }],
      'wide',
      ['emit'],
    ],
    [
      'another fault before the list: emitted',
      two,
      [{ type: 'error', error: new InformerError('ServerError', 'x', { phase: 'list' }) }],
      'wide',
      ['emit'],
    ],
  ];
  for (const [name, config, events, mode, effects] of table)
    it(name, () => {
      const r = drive(config, initialMergeState(config, 'wide'), [...events.map((event) => ({ type: 'wide', event }) as const)]);
      expect(r.state.mode).toBe(mode);
      expect(r.effects.map((e) => e.type)).toEqual(effects);
    });

  it('after the fallback, the cluster-wide source is not heard (its last events, already on their way, are dropped)', () => {
    const r = drive(two, wide, [
      { type: 'wide', event: { type: 'error', error: forbidden('list') } },
      { type: 'wide', event: { type: 'added', object: obj('a', 'x'), resourceVersion: '6' } },
    ]);
    expect(r.effects).toEqual([{ type: 'fallBack' }]);
    expect(r.state.members).toHaveLength(2);
  });

  it('no namespace: the fallback lists nothing and says so at once (an empty replace)', () => {
    const none = { members: 0, fallsBack: true };
    const r = drive(none, initialMergeState(none, 'wide'), [{ type: 'wide', event: { type: 'error', error: forbidden('list') } }]);
    expect(r.effects).toEqual([{ type: 'fallBack' }, { type: 'emit', event: { type: 'replace', items: [], resourceVersion: '' } }]);
  });
});

describe('namespacesMergeStep: one informer per namespace', () => {
  it('start: with no namespace an empty replace; with some, nothing', () => {
    const none = { members: 0, fallsBack: true };
    expect(drive(none, initialMergeState(none, 'perNamespace'), [{ type: 'start' }]).effects).toEqual([
      { type: 'emit', event: { type: 'replace', items: [], resourceVersion: '' } },
    ]);
    expect(drive(two, perNamespace, [{ type: 'start' }]).effects).toEqual([]);
  });

  it('one replace once every namespace has synced, with the items of both and the last resourceVersion', () => {
    const a = obj('a', 'x', '3');
    const b = obj('b', 'y', '4');
    const r = drive(two, perNamespace, [
      { type: 'state', member: 0, state: informerState({ step: 'start' }), replayed: true },
      { type: 'state', member: 1, state: informerState({ step: 'start' }), replayed: true },
      {
        type: 'state',
        member: 0,
        state: informerState({ synced: true, store: storeOf(a), resourceVersion: '3', step: 'replace' }),
        replayed: false,
      },
    ]);
    expect(r.effects).toEqual([]);
    const last = namespacesMergeStep(two, r.state, {
      type: 'state',
      member: 1,
      state: informerState({ synced: true, store: storeOf(b), resourceVersion: '4', step: 'replace' }),
      replayed: false,
    });
    expect(emitted(last[1])).toEqual([{ type: 'replace', items: [a, b], resourceVersion: '4' }]);
    expect(last[0]).toMatchObject({ synced: true, lastRV: '4', members: [] });
  });

  it('a replayed state counts for the sync, but its errors and events are not emitted (they were, before we joined)', () => {
    const synced = informerState({ synced: true, resourceVersion: '3', errors: [forbidden('list')], step: 'replace' });
    const r = drive(two, perNamespace, [
      { type: 'state', member: 0, state: synced, replayed: true },
      { type: 'state', member: 1, state: synced, replayed: false },
    ]);
    expect(emitted(r.effects)).toEqual([
      { type: 'error', error: forbidden('list') },
      { type: 'replace', items: [], resourceVersion: '3' },
    ]);
  });

  it("after the sync a namespace's steps are source events: added, modified, deleted, a missed deletion, watch, bookmark", () => {
    const synced = drive(
      two,
      perNamespace,
      [0, 1].map(
        (member) =>
          ({
            type: 'state',
            member,
            state: informerState({ synced: true, step: 'replace', resourceVersion: '2' }),
            replayed: false,
          }) as const,
      ),
    ).state;
    const x = obj('a', 'x', '7');
    const noRV = obj('a', 'z');
    const events: InformerEvent<Obj>[] = [
      { type: 'added', object: x, isInInitialList: false },
      { type: 'updated', oldObject: x, object: x, isInInitialList: false, resync: false },
      { type: 'deleted', object: noRV, finalStateUnknown: false, isInInitialList: false },
      { type: 'deleted', object: x, finalStateUnknown: true, isInInitialList: false },
    ];
    const r = drive(two, synced, [
      { type: 'state', member: 0, state: informerState({ synced: true, events, resourceVersion: '8' }), replayed: false },
      { type: 'state', member: 1, state: informerState({ synced: true, step: 'watch', resourceVersion: '9' }), replayed: false },
      { type: 'state', member: 1, state: informerState({ synced: true, step: 'bookmark', resourceVersion: '10' }), replayed: false },
    ]);
    expect(emitted(r.effects)).toEqual([
      { type: 'added', object: x, resourceVersion: '7' },
      { type: 'modified', object: x, resourceVersion: '7' },
      { type: 'deleted', object: noRV, resourceVersion: '8' },
      { type: 'deleted', object: x, resourceVersion: '7', finalStateUnknown: true },
      { type: 'watch', resourceVersion: '9' },
      { type: 'bookmark', resourceVersion: '10' },
    ]);
    expect(r.state.lastRV).toBe('10');
  });

  it('EMFILE is said once for all namespaces until they sync, once more after', () => {
    const failing = informerState({ errors: [emfile()], step: 'error' });
    const r = drive(two, perNamespace, [
      { type: 'state', member: 0, state: failing, replayed: false },
      { type: 'state', member: 1, state: failing, replayed: false },
      { type: 'state', member: 0, state: informerState({ synced: true, step: 'replace' }), replayed: false },
      { type: 'state', member: 1, state: informerState({ synced: true, step: 'replace' }), replayed: false },
      { type: 'state', member: 0, state: { ...failing, synced: true }, replayed: false },
      { type: 'state', member: 1, state: { ...failing, synced: true }, replayed: false },
    ]);
    expect(r.effects.map((e) => e.type)).toEqual(['outOfDescriptors', 'emit', 'outOfDescriptors']);
  });

  it("list progress: summed over the namespaces until the sync (one synced counts its objects), then each namespace's own", () => {
    const r = drive(two, perNamespace, [
      { type: 'progress', member: 0, progress: { pages: 1, objects: 500 } },
      { type: 'progress', member: 1, progress: { pages: 2, objects: 1000 } },
      {
        type: 'state',
        member: 0,
        state: informerState({ synced: true, store: storeOf(obj('a', 'x'), obj('a', 'y')), step: 'replace' }),
        replayed: false,
      },
      { type: 'progress', member: 1, progress: { pages: 3, objects: 1500 } },
      { type: 'state', member: 1, state: informerState({ synced: true, step: 'replace' }), replayed: false },
      { type: 'progress', member: 0, progress: { pages: 1, objects: 500 } },
    ]);
    expect(r.effects.flatMap((e) => (e.type === 'progress' ? [e.progress] : []))).toEqual([
      { pages: 1, objects: 500 },
      { pages: 3, objects: 1500 },
      { pages: 4, objects: 1502 },
      { pages: 1, objects: 500 },
    ]);
  });

  it('in per-namespace mode a cluster-wide event is not heard; in wide mode a member input is not', () => {
    expect(drive(two, perNamespace, [{ type: 'wide', event: { type: 'bookmark', resourceVersion: '1' } }]).effects).toEqual([]);
    expect(drive(two, wide, [{ type: 'progress', member: 0, progress: { pages: 1, objects: 1 } }]).effects).toEqual([]);
  });
});
