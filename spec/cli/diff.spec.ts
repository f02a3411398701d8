import { describe, expect, it } from 'vitest';
import { diffObjects, formatChanges } from '../../src/cli/diff.ts';
import { findResource, parseResourceList } from '../../src/1-transport/discovery.ts';
import { readFileSync } from 'node:fs';

describe('diffObjects', () => {
  it('lists changed, added and removed leaves, ignoring resourceVersion and managedFields', () => {
    const before = { metadata: { name: 'a', resourceVersion: '1', managedFields: [{ m: 1 }], labels: { app: 'web', old: 'x' } }, spec: { replicas: 2, containers: [{ image: 'nginx:1' }] } };
    const after = { metadata: { name: 'a', resourceVersion: '2', managedFields: [{ m: 2 }], labels: { app: 'web', tier: 'fe' } }, spec: { replicas: 3, containers: [{ image: 'nginx:2' }, { image: 'side' }] } };
    expect(diffObjects(before, after)).toEqual([
      { path: 'metadata.labels.old', old: 'x' },
      { path: 'metadata.labels.tier', new: 'fe' },
      { path: 'spec.replicas', old: 2, new: 3 },
      { path: 'spec.containers[0].image', old: 'nginx:1', new: 'nginx:2' },
      { path: 'spec.containers[1]', new: { image: 'side' } },
    ]);
  });

  it('is empty for a resync (same content, new resourceVersion)', () => {
    expect(diffObjects({ metadata: { resourceVersion: '1' }, a: 1 }, { metadata: { resourceVersion: '2' }, a: 1 })).toEqual([]);
  });

  it('quotes keys that are not identifiers and formats compactly', () => {
    const changes = diffObjects({ metadata: { annotations: { 'app.kubernetes.io/name': 'a' } } }, { metadata: { annotations: { 'app.kubernetes.io/name': 'b' } } });
    expect(changes[0]?.path).toBe('metadata.annotations["app.kubernetes.io/name"]');
    expect(formatChanges(changes)).toBe('metadata.annotations["app.kubernetes.io/name"]: "a" → "b"');
    const many = Array.from({ length: 10 }, (_, i) => ({ path: `f${i}`, old: i, new: i + 1 }));
    expect(formatChanges(many, 2)).toBe('f0: 0 → 1, f1: 1 → 2, (+8 more)');
  });
});

describe('discovery', () => {
  const fixture = (name: string) =>
    JSON.parse(readFileSync(new URL(`../fixtures/kube-apiserver-v1.20/${name}`, import.meta.url), 'utf8')) as { response: { body: unknown } };

  it('reads the recorded APIResourceLists, skipping subresources', () => {
    const core = parseResourceList('', 'v1', fixture('01b-discovery-api-v1.json').response.body);
    const apps = parseResourceList('apps', 'v1', fixture('01d-discovery-apis-apps-v1.json').response.body);
    const crd = parseResourceList('stable.example.com', 'v1', fixture('07b-discovery-apis-stable-example-com-v1.json').response.body);
    const all = [...core, ...apps, ...crd];
    expect(all.some((r) => r.plural.includes('/'))).toBe(false);
    expect(findResource(all, 'po')?.plural).toBe('pods');
    expect(findResource(all, 'Pod')?.plural).toBe('pods');
    expect(findResource(all, 'pod')?.plural).toBe('pods');
    expect(findResource(all, 'deployments.apps')).toMatchObject({ group: 'apps', kind: 'Deployment', namespaced: true });
    expect(findResource(all, 'ma')).toMatchObject({ group: 'stable.example.com', plural: 'myapples', singular: 'myapple' });
    expect(findResource(all, 'ns')).toMatchObject({ plural: 'namespaces', namespaced: false });
    expect(findResource(all, 'nope')).toBeUndefined();
  });
});
