/**
 * Names from discovery are checked (audit52): a resource's plural must be what the API server allows a CRD's (a DNS-1035
 * label of at most 63 characters), a group a DNS-1123 subdomain of at most 253, a version a DNS-1035 label. A peer's
 * 1 MiB plural was synced and became a 19.9 MB /metrics (a `name` label ~19 times). A bad resource is left out and
 * named in its group version's failure; a bad group or version is that group version's failure, not requested.
 * audit54: a resource that cannot be listed and watched (an external metrics API's, one per metric name) is left out
 * quietly, and a listable one of at most 253 letters, digits, `-`, `_` (an aggregated API's) kept.
 */
import { firstValueFrom, of, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { discoverWith, isGroupName, isResourceName, parseResourceList } from '../../src/discovery/discovery.ts';

const HUGE = 'w'.repeat(1024 * 1024);

const resource = (name: string) => ({ name, singularName: '', namespaced: true, kind: 'Widget', verbs: ['list', 'watch'] });
const group = (name: string, version = 'v1') => ({
  name,
  versions: [{ groupVersion: `${name}/${version}`, version }],
  preferredVersion: { groupVersion: `${name}/${version}`, version },
});

describe('discovery: names a server may not serve are left out', () => {
  it('isResourceName: a DNS-1035 label of at most 63 characters', () => {
    for (const ok of ['pods', 'mutatingwebhookconfigurations', 'a', 'x-1', 'a'.repeat(63)]) expect(isResourceName(ok), ok).toBe(true);
    for (const bad of ['', 'Pods', '1abc', '-a', 'a-', 'a.b', 'a_b', 'a'.repeat(64), 'pod\n', HUGE])
      expect(isResourceName(bad), bad.slice(0, 9)).toBe(false);
  });

  it('isGroupName: "" (core) or a DNS-1123 subdomain of at most 253 characters', () => {
    for (const ok of [
      '',
      'apps',
      'stable.example.com',
      '1.example.com',
      `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`,
    ])
      expect(isGroupName(ok), ok).toBe(true);
    for (const bad of ['Apps', 'a..b', '.a', 'a.', 'a_b.com', `${'a'.repeat(64)}.com`, `${'a'.repeat(63)}.`.repeat(4) + 'abc', HUGE])
      expect(isGroupName(bad), bad.slice(0, 9)).toBe(false);
  });

  it('parseResourceList leaves out a 1 MiB plural', () => {
    const out = parseResourceList('x.example.com', 'v1', { resources: [resource(HUGE), resource('widgets')] });
    expect(out.map((r) => r.plural)).toEqual(['widgets']);
  });

  it("discover: bad resources are left out and named in their group version's failure; bad groups and versions are failures, not requested", async () => {
    const requested: string[] = [];
    const documents: Record<string, unknown> = {
      '/api': { kind: 'APIVersions', versions: ['v1'] },
      '/apis': {
        kind: 'APIGroupList',
        groups: [
          group('good.example.com'),
          group(`${'x'.repeat(300)}.example.com`),
          group('Bad_Group.example.com'),
          group('v.example.com', 'V1!'),
        ],
      },
      '/api/v1': { kind: 'APIResourceList', resources: [resource('pods'), resource('pods/status')] },
      '/apis/good.example.com/v1': {
        kind: 'APIResourceList',
        resources: [
          resource('widgets'),
          resource(HUGE),
          resource('Widgets'),
          resource('1abc'),
          resource('a'.repeat(64)),
          resource('a'.repeat(63)),
          resource('w'.repeat(254)),
          resource('pod\n'),
          resource('a?b'),
          resource('..'),
          resource('a b'),
          resource('a.b'),
        ],
      },
    };
    const fetch = (path: string): Observable<unknown> => {
      requested.push(path.slice(0, 80));
      return of(documents[path] ?? { kind: 'APIResourceList', resources: [] });
    };
    const discovery = await firstValueFrom(discoverWith(fetch));
    expect(discovery.all.map((r) => `${r.plural}.${r.group}`)).toEqual([
      'pods.',
      'widgets.good.example.com',
      'Widgets.good.example.com',
      '1abc.good.example.com',
      `${'a'.repeat(64)}.good.example.com`,
      `${'a'.repeat(63)}.good.example.com`,
    ]);
    expect(requested).toEqual(['/api', '/apis', '/api/v1', '/apis/good.example.com/v1']);
    const failures = discovery.failures.map((f) => ({ groupVersion: f.groupVersion, reason: f.error.reason, message: f.error.message }));
    const longGroup = `${'x'.repeat(253)}…`;
    expect(failures).toEqual([
      {
        groupVersion: 'good.example.com/v1',
        reason: 'MalformedLine',
        message:
          'discovery: good.example.com/v1: 7 listable resources whose name is not one of at most 253 letters, digits, - and _: left out',
      },
      ...[`${longGroup}/v1`, 'Bad_Group.example.com/v1', 'v.example.com/V1!'].map((gv) => ({
        groupVersion: gv,
        reason: 'MalformedLine',
        message: `discovery: ${gv}: its group is not a DNS-1123 subdomain of at most 253 characters, or its version not a DNS-1035 label of at most 63: not read`,
      })),
    ]);
    // Nothing kept is longer than a served name and a group can be.
    expect(JSON.stringify(discovery).length).toBeLessThan(10_000);
  });

  it('an external metrics API (aggregated, get only: one resource per metric name) is no failure; its odd names are left out quietly', async () => {
    // custom-metrics-apiserver's external lister serves `Name: metric.Metric`, verbs ["get"] (audit54: every round failed).
    const metric = (name: string) => ({ name, singularName: '', namespaced: true, kind: 'ExternalMetricValueList', verbs: ['get'] });
    const documents: Record<string, unknown> = {
      '/api': { kind: 'APIVersions', versions: ['v1'] },
      '/apis': { kind: 'APIGroupList', groups: [group('external.metrics.k8s.io', 'v1beta1')] },
      '/api/v1': { kind: 'APIResourceList', resources: [resource('pods')] },
      '/apis/external.metrics.k8s.io/v1beta1': {
        kind: 'APIResourceList',
        resources: [metric('queue_messages_ready'), metric('nginx.net.request_per_s'), metric(HUGE), metric('requests')],
      },
    };
    const discovery = await firstValueFrom(discoverWith((path) => of(documents[path])));
    expect(discovery.failures).toEqual([]);
    expect(discovery.all.map((r) => `${r.plural}.${r.group}`)).toEqual(['pods.', 'requests.external.metrics.k8s.io']);
  });

  it('a listable resource with a name an aggregated API may serve (underscores, capitals, past 63) is kept', () => {
    const names = ['queue_messages_ready', 'Widgets', 'x_1-y', 'w'.repeat(253)];
    const out = parseResourceList('metrics.example.com', 'v1', { resources: names.map(resource) });
    expect(out.map((r) => r.plural)).toEqual(names);
  });
});
