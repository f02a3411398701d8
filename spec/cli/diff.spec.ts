import { describe, expect, it } from 'vitest';
import { MAX_DEPTH, TOO_DEEP, brief, diffObjects, formatChanges, jsonEqual, limitDepth } from '../../src/cli/diff.ts';
import { findResource, parseResourceList } from '../../src/discovery/discovery.ts';
import { DIFF_NOISE, fieldChanges } from '../../src/index.ts';
import { readFileSync } from 'node:fs';

describe('diffObjects', () => {
  it('lists changed, added and removed leaves, ignoring resourceVersion and managedFields', () => {
    const before = {
      metadata: { name: 'a', resourceVersion: '1', managedFields: [{ m: 1 }], labels: { app: 'web', old: 'x' } },
      spec: { replicas: 2, containers: [{ image: 'nginx:1' }] },
    };
    const after = {
      metadata: { name: 'a', resourceVersion: '2', managedFields: [{ m: 2 }], labels: { app: 'web', tier: 'fe' } },
      spec: { replicas: 3, containers: [{ image: 'nginx:2' }, { image: 'side' }] },
    };
    expect(diffObjects(before, after)).toEqual([
      { path: 'metadata.labels.old', old: 'x' },
      { path: 'metadata.labels.tier', new: 'fe' },
      { path: 'spec.replicas', old: 2, new: 3 },
      { path: 'spec.containers[0].image', old: 'nginx:1', new: 'nginx:2' },
      { path: 'spec.containers[1]', new: { image: 'side' } },
    ]);
  });

  it("leaves out exactly the library's DIFF_NOISE, as diff() does (one list)", () => {
    expect(DIFF_NOISE.length).toBeGreaterThan(0);
    for (const pattern of DIFF_NOISE) {
      const [top, leaf] = pattern.replace(/^!/, '').split('.') as [string, string];
      const before = { [top]: { [leaf]: 'a', kept: 1 } };
      const after = { [top]: { [leaf]: 'b', kept: 2 } };
      const kept = [{ path: `${top}.kept`, old: 1, new: 2 }];
      expect(diffObjects(before, after)).toEqual(kept);
      expect(fieldChanges(before, after, { fields: DIFF_NOISE })).toEqual(kept);
    }
  });

  it('is empty for a resync (same content, new resourceVersion)', () => {
    expect(diffObjects({ metadata: { resourceVersion: '1' }, a: 1 }, { metadata: { resourceVersion: '2' }, a: 1 })).toEqual([]);
  });

  it('quotes keys that are not identifiers and formats compactly', () => {
    const changes = diffObjects(
      { metadata: { annotations: { 'app.kubernetes.io/name': 'a' } } },
      { metadata: { annotations: { 'app.kubernetes.io/name': 'b' } } },
    );
    expect(changes[0]?.path).toBe('metadata.annotations["app.kubernetes.io/name"]');
    expect(formatChanges(changes)).toBe('metadata.annotations["app.kubernetes.io/name"]: "a" → "b"');
    const many = Array.from({ length: 10 }, (_, i) => ({ path: `f${i}`, old: i, new: i + 1 }));
    expect(formatChanges(many, 2)).toBe('f0: 0 → 1, f1: 1 → 2, (+8 more)');
  });
});

describe('a hostile depth', () => {
  const deep = (n: number, leaf: unknown) => {
    let o: unknown = leaf;
    for (let i = 0; i < n; i++) o = { d: o };
    return o;
  };

  it('diffs objects 5,000 and 100,000 levels deep without recursion: one change at the cap, values safe to print', () => {
    for (const n of [5_000, 100_000]) {
      const changes = diffObjects({ spec: deep(n, 1) }, { spec: deep(n, 2) });
      expect(changes).toEqual([{ path: `spec${'.d'.repeat(MAX_DEPTH - 1)}`, old: TOO_DEEP, new: TOO_DEEP }]);
      expect(diffObjects({ spec: deep(n, 1) }, { spec: deep(n, 1) })).toEqual([]);
      // An added deep subtree is cut to the cap, so JSON.stringify (which throws near 4,500 levels) copes.
      const [added] = diffObjects({}, { spec: deep(n, 1) });
      expect(() => JSON.stringify(added)).not.toThrow();
      expect(brief(deep(n, 1))).toMatch(/^\{"d":\{"d":/);
    }
  });

  it('limitDepth cuts at the cap and keeps "__proto__" as data; jsonEqual compares iteratively', () => {
    expect(limitDepth({ a: { b: { c: 1 } }, l: [1, [2]] }, 2)).toEqual({ a: { b: TOO_DEEP }, l: [1, TOO_DEEP] });
    const tricky = JSON.parse('{"__proto__":{"polluted":true}}') as Record<string, unknown>;
    const copy = limitDepth(tricky) as Record<string, unknown>;
    expect(Object.keys(copy)).toEqual(['__proto__']);
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    expect(jsonEqual(deep(100_000, [1, { x: 2 }]), deep(100_000, [1, { x: 2 }]))).toBe(true);
    expect(jsonEqual({ a: 1 }, { b: 1 })).toBe(false);
    expect(jsonEqual([1, 2], [1, 2, 3])).toBe(false);
  });

  it('formats redacted Secret values by what happened to the key, never by value', () => {
    const r1 = '<redacted:0123456789ab>';
    const r2 = '<redacted:ba9876543210>';
    expect(
      formatChanges([
        { path: 'data.password', old: r1, new: r2 },
        { path: 'data.token', new: r1 },
        { path: 'data.old', old: r2 },
      ]),
    ).toBe('data.password: <changed>, data.token: +<redacted>, data.old: -<redacted>');
  });
});

describe('discovery', () => {
  const fixture = (name: string) =>
    JSON.parse(readFileSync(new URL(`../fixtures/kube-apiserver-v1.20/${name}`, import.meta.url), 'utf8')) as {
      response: { body: unknown };
    };

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
