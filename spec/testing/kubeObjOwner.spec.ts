/**
 * kubeObj's `owner`: its apiVersion comes from the owner's resource or the built-in kind, never a guessed `v1`
 * (audit30: `owner: { kind: 'ReplicaSet', name }` got `v1`, and `controller({ for: ReplicaSet, owns: Pod })`, which
 * matches the owner's group, silently never reconciled the ReplicaSet for its pods).
 */
import { describe, expect, it } from 'vitest';
import { TestScheduler } from 'rxjs/testing';
import { Deployment, Pod, ReplicaSet, customResource } from '../../src/index.ts';
import { controller, controllerOwnerKey, done } from '../../src/controller/index.ts';
import { fakeInformer, kubeObj, listed, modified } from '../../src/testing/index.ts';

const Widget = customResource({ group: 'example.com', version: 'v1', plural: 'widgets', kind: 'Widget', namespaced: true });

describe('kubeObj owner: the apiVersion of the owner', () => {
  it('a built-in kind gets its group: a pod owned by a ReplicaSet maps to it', () => {
    const pod = kubeObj(Pod, 'web-1', { owner: { kind: 'ReplicaSet', name: 'web' } });
    expect(pod.metadata.ownerReferences).toEqual([
      { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: 'uid-web', controller: true },
    ]);
    expect(controllerOwnerKey(pod, ReplicaSet)).toBe('default/web');
    expect(kubeObj('rs', { owner: { kind: 'Deployment', name: 'web' } }).metadata.ownerReferences?.[0]?.apiVersion).toBe('apps/v1');
    expect(kubeObj('p', { owner: { kind: 'Node', name: 'n1' } }).metadata.ownerReferences?.[0]?.apiVersion).toBe('v1');
  });

  it('a resource as the owner: its apiVersion and kind', () => {
    expect(kubeObj('rs', { owner: { resource: Deployment, name: 'web' } }).metadata.ownerReferences?.[0]).toMatchObject({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: 'web',
    });
    const gadget = kubeObj('g', { owner: { resource: Widget, name: 'w1' } });
    expect(controllerOwnerKey(gadget, Widget)).toBe('default/w1');
  });

  it('an apiVersion given is kept', () => {
    const pod = kubeObj(Pod, 'web-1', { owner: { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web' } });
    expect(controllerOwnerKey(pod, ReplicaSet)).toBe('default/web');
    expect(
      kubeObj('g', { owner: { apiVersion: 'example.com/v1', kind: 'Widget', name: 'w1' } }).metadata.ownerReferences?.[0]?.apiVersion,
    ).toBe('example.com/v1');
  });

  it('a kind the kit cannot place without an apiVersion is a TypeError that says to give it', () => {
    expect(() => kubeObj('g', { owner: { kind: 'Widget', name: 'w1' } })).toThrow(TypeError);
    expect(() => kubeObj('g', { owner: { kind: 'Widget', name: 'w1' } })).toThrow(/give it \(owner: \{ apiVersion: .*kind: "Widget"/);
  });

  it('controller({ for: ReplicaSet, owns: Pod }) in marbles reconciles the ReplicaSet when its pod changes', () => {
    const scheduler = new TestScheduler((actual, expected) => expect(actual).toEqual(expected));
    const reconciled: string[] = [];
    scheduler.run(({ cold }) => {
      const pod = (rv: string) => kubeObj(Pod, 'web-1', { resourceVersion: rv, owner: { kind: 'ReplicaSet', name: 'web' } });
      const replicaSets = fakeInformer(ReplicaSet, cold('l', { l: listed('1', kubeObj(ReplicaSet, 'web')) }));
      const pods = fakeInformer(Pod, cold('l--m', { l: listed('1', pod('1')), m: modified(pod('2')) }));
      const ctl = controller({ for: replicaSets, owns: [pods], reconcile: () => done() });
      ctl.outcomes$.subscribe((o) => reconciled.push(`${o.key}@${scheduler.now()}`));
      scheduler.schedule(() => void ctl.stop().subscribe(), 10);
    });
    // listed at 0 (the pod's listing wakes the same key, merged); the pod's change at 3 wakes its owner
    expect(reconciled).toEqual(['default/web@0', 'default/web@3']);
  });
});
