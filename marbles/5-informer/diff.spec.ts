import { describe, expect, it } from 'vitest';
import { testScheduler } from '../support/testScheduler.ts';
import { diff, type DiffEvent } from '../../src/diff.ts';
import { type InformerEvent, type KubeObject } from '../../src/index.ts';

type Obj = KubeObject & { spec?: { replicas?: number }; status?: { ready?: number } };
const o = (rv: string, replicas: number, ready: number): Obj => ({
  metadata: { name: 'a', namespace: 'ns', resourceVersion: rv },
  spec: { replicas },
  status: { ready },
});
const events: Record<string, InformerEvent<Obj>> = {
  a: { type: 'added', object: o('1', 2, 0), isInInitialList: false },
  u: { type: 'updated', oldObject: o('1', 2, 0), object: o('2', 3, 0), isInInitialList: false, resync: false },
  s: { type: 'updated', oldObject: o('2', 3, 0), object: o('2', 3, 0), isInInitialList: false, resync: true },
  v: { type: 'updated', oldObject: o('2', 3, 0), object: o('3', 3, 1), isInInitialList: false, resync: false },
  d: { type: 'deleted', object: o('3', 3, 1), finalStateUnknown: false, isInInitialList: false },
};
const withChanges = (e: InformerEvent<Obj>, changes: DiffEvent<Obj>['changes']) => ({ ...e, changes }) as DiffEvent<Obj>;

describe('diff', () => {
  it('turns updates into their changed fields; drops other events, resyncs and updates of excluded fields only', () => {
    testScheduler().run(({ cold, expectObservable, expectSubscriptions }) => {
      const source = cold('-a-u-s-v-d-|', events);
      expectObservable(source.pipe(diff({ fields: ['!status', '!metadata.resourceVersion'] }))).toBe('---c-------|', {
        c: withChanges(events['u']!, [{ path: 'spec.replicas', old: 2, new: 3 }]),
      });
      // Default: everything but resourceVersion and managedFields.
      expectObservable(source.pipe(diff())).toBe('---c---w---|', {
        c: withChanges(events['u']!, [{ path: 'spec.replicas', old: 2, new: 3 }]),
        w: withChanges(events['v']!, [{ path: 'status.ready', old: 0, new: 1 }]),
      });
      expectSubscriptions(source.subscriptions).toBe(['^----------!', '^----------!']);
    });
  });

  it('a redactor runs before comparing; if it throws, the event is skipped and reported, the stream goes on', () => {
    const reported: unknown[] = [];
    testScheduler().run(({ cold, expectObservable }) => {
      let calls = 0;
      const redact = (object: Obj) => {
        if (++calls === 1) throw new Error('boom');
        return { ...object, status: { ready: -1 } };
      };
      const source = cold('-u-v-|', events);
      expectObservable(source.pipe(diff({ redact, onError: (error) => reported.push(error) }))).toBe('-----|');
    });
    // u failed to redact; v's status was redacted to the same value: nothing left to show.
    expect(reported).toHaveLength(1);
  });

  it('passes errors through and unsubscribes its source at once', () => {
    testScheduler().run(({ hot, cold, expectObservable, expectSubscriptions }) => {
      const failure = new Error('x');
      const failing = cold('-u-#', events, failure);
      expectObservable(failing.pipe(diff())).toBe(
        '-c-#',
        { c: withChanges(events['u']!, [{ path: 'spec.replicas', old: 2, new: 3 }]) },
        failure,
      );
      expectSubscriptions(failing.subscriptions).toBe('^--!');
      const source = hot('-u-v-|', events);
      const sub = '       ^--!';
      expectObservable(source.pipe(diff({ fields: ['status'] })), sub).toBe('---');
      expectSubscriptions(source.subscriptions).toBe(sub);
    });
  });

  it('trustGeneration on objects without metadata.generation compares spec: there is no generation to trust', () => {
    const event: InformerEvent<Obj> = {
      type: 'updated',
      oldObject: o('1', 2, 0),
      object: o('2', 3, 0),
      isInInitialList: false,
      resync: false,
    };
    testScheduler().run(({ cold, expectObservable }) => {
      expectObservable(cold('-u-|', { u: event }).pipe(diff({ trustGeneration: true }))).toBe('-a-|', {
        a: withChanges(event, [{ path: 'spec.replicas', old: 2, new: 3 }]),
      });
    });
  });

  it('trustGeneration: the same generation skips spec (not compared at all), another generation compares it', () => {
    const g = (generation: number, rv: string, replicas: number, ready: number): Obj => ({
      ...o(rv, replicas, ready),
      metadata: { ...o(rv, 0, 0).metadata, generation },
    });
    const same: InformerEvent<Obj> = {
      type: 'updated',
      oldObject: g(1, '1', 2, 0),
      object: g(1, '2', 3, 1),
      isInInitialList: false,
      resync: false,
    };
    const moved: InformerEvent<Obj> = {
      type: 'updated',
      oldObject: g(1, '2', 2, 1),
      object: g(2, '3', 3, 1),
      isInInitialList: false,
      resync: false,
    };
    testScheduler().run(({ cold, expectObservable }) => {
      const source = cold('-s-m-|', { s: same, m: moved });
      expectObservable(source.pipe(diff({ trustGeneration: true }))).toBe('-a-b-|', {
        // spec.replicas differs under the same generation: trusted, so not reported (only status is).
        a: withChanges(same, [{ path: 'status.ready', old: 0, new: 1 }]),
        b: withChanges(moved, [
          { path: 'metadata.generation', old: 1, new: 2 },
          { path: 'spec.replicas', old: 2, new: 3 },
        ]),
      });
      expectObservable(source.pipe(diff())).toBe('-a-b-|', {
        a: withChanges(same, [
          { path: 'spec.replicas', old: 2, new: 3 },
          { path: 'status.ready', old: 0, new: 1 },
        ]),
        b: withChanges(moved, [
          { path: 'metadata.generation', old: 1, new: 2 },
          { path: 'spec.replicas', old: 2, new: 3 },
        ]),
      });
    });
  });
});
