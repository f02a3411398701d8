import { firstValueFrom } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import {
  GroupDiscoveryFailedError,
  AmbiguousResourceError,
  ResourceNameError,
  UnknownResourceError,
  discover,
  resolveResource,
  watchableResources,
  type DiscoveredResource,
  type Discovery,
} from '../../src/discovery/index.ts';
import { InformerError } from '../../src/index.ts';
import { resourceName } from '../../src/pipeline.ts';
import { assembleDiscovery, parseGroupVersions } from '../../src/discovery/discovery.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { fixture } from '../emulator/helpers.ts';

let api: ApiServer | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

/** Discovery as the v1.20 recordings show it: /api (01a), /apis (01c), /api/v1 (01b), /apis/apps/v1 (01d), /apis/stable.example.com/v1 (07b). */
function fromFixtures(): Discovery {
  const apis = structuredClone(fixture('01c').response.body);
  apis.groups.push({
    name: 'stable.example.com',
    versions: [{ groupVersion: 'stable.example.com/v1', version: 'v1' }],
    preferredVersion: { groupVersion: 'stable.example.com/v1', version: 'v1' },
  });
  const gvs = parseGroupVersions(fixture('01a').response.body, apis);
  const bodies: Record<string, unknown> = {
    v1: fixture('01b').response.body,
    'apps/v1': fixture('01d').response.body,
    'stable.example.com/v1': fixture('07b').response.body,
  };
  return assembleDiscovery(gvs.map((gv) => ({ groupVersion: gv, body: bodies[gv.group ? `${gv.group}/${gv.version}` : gv.version] })));
}

function resolved(d: Pick<Discovery, 'all'>, name: string): string {
  const r = resolveResource(d, name);
  if (r instanceof ResourceNameError) return `${r.name}: ${r.message}`;
  return `${r.plural}.${r.version}.${r.group}`;
}

const entry = (name: string, kind: string, extra: Record<string, unknown> = {}) => ({
  name,
  singularName: '',
  namespaced: true,
  kind,
  verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
  ...extra,
});

/** A synthetic server: ingresses in the deprecated extensions group and in networking.k8s.io; events twice; a CRD plural served by two groups. */
function synthetic(): Discovery {
  const group = (name: string, versions: string[], preferred = versions[0]!) => ({
    name,
    versions: versions.map((version) => ({ groupVersion: `${name}/${version}`, version })),
    preferredVersion: { groupVersion: `${name}/${preferred}`, version: preferred },
  });
  const gvs = parseGroupVersions(
    { versions: ['v1'] },
    {
      groups: [
        group('extensions', ['v1beta1']),
        group('events.k8s.io', ['v1', 'v1beta1']),
        group('batch', ['v1', 'v1beta1']),
        group('networking.k8s.io', ['v1', 'v1beta1']),
        group('cert-manager.io', ['v1']),
        group('networking.internal.knative.dev', ['v1alpha1']),
        group('acme.example.com', ['v1']),
      ],
    },
  );
  const bodies: Record<string, unknown> = {
    v1: { resources: [entry('events', 'Event', { shortNames: ['ev'] }), entry('pods', 'Pod', { shortNames: ['po'] })] },
    'extensions/v1beta1': { resources: [entry('ingresses', 'Ingress', { shortNames: ['ing'] }), entry('ingresses/status', 'Ingress')] },
    'events.k8s.io/v1': { resources: [entry('events', 'Event', { shortNames: ['ev'] })] },
    'events.k8s.io/v1beta1': { resources: [entry('events', 'Event', { shortNames: ['ev'] })] },
    'batch/v1': { resources: [entry('jobs', 'Job')] },
    'batch/v1beta1': { resources: [entry('cronjobs', 'CronJob', { shortNames: ['cj'] })] },
    'networking.k8s.io/v1': {
      resources: [
        entry('ingresses', 'Ingress', { shortNames: ['ing'] }),
        entry('ingressclasses', 'IngressClass', { namespaced: false, verbs: ['get', 'list', 'watch'] }),
      ],
    },
    'networking.k8s.io/v1beta1': { resources: [entry('ingresses', 'Ingress', { shortNames: ['ing'] })] },
    'cert-manager.io/v1': { resources: [entry('certificates', 'Certificate', { singularName: 'certificate', shortNames: ['cert'] })] },
    'networking.internal.knative.dev/v1alpha1': {
      resources: [entry('certificates', 'Certificate', { singularName: 'certificate', shortNames: ['kcert'] })],
    },
    'acme.example.com/v1': {
      resources: [
        entry('certificates', 'Certificate', { singularName: 'certificate' }),
        entry('reports', 'Report', { verbs: ['get', 'create'] }),
      ],
    },
  };
  return assembleDiscovery(gvs.map((gv) => ({ groupVersion: gv, body: bodies[gv.group ? `${gv.group}/${gv.version}` : gv.version] })));
}

describe('discovery documents (v1.20 recordings)', () => {
  it('reads every group version of 01a/01c in the server order, marking the preferred ones', () => {
    const gvs = parseGroupVersions(fixture('01a').response.body, fixture('01c').response.body);
    expect(gvs).toEqual([
      { group: '', version: 'v1', preferred: true },
      { group: 'apps', version: 'v1', preferred: true },
      { group: 'batch', version: 'v1', preferred: true },
      { group: 'batch', version: 'v1beta1', preferred: false },
      { group: 'apiextensions.k8s.io', version: 'v1', preferred: true },
      { group: 'apiextensions.k8s.io', version: 'v1beta1', preferred: false },
    ]);
  });

  it('lists resources without subresources (deployments/scale, deployments/status of 01d)', () => {
    const d = fromFixtures();
    expect(d.resources.map(resourceName)).toEqual(['configmaps', 'namespaces', 'pods', 'deployments.apps', 'myapples.stable.example.com']);
    const myapples = d.resources.find((r) => r.plural === 'myapples')!;
    expect(myapples).toMatchObject({ singular: 'myapple', kind: 'MyApple', shortNames: ['ma'], namespaced: true, preferred: true });
    // 01b: built-in kinds have singularName "", kubectl uses the lowercased kind
    expect(d.resources.find((r) => r.plural === 'pods')!.singular).toBe('pod');
  });

  it('resolves plural, singular, kind and short names, with or without group and version', () => {
    const d = fromFixtures();
    const cases: [string, string][] = [
      ['pods', 'pods.v1.'],
      ['pod', 'pods.v1.'],
      ['Pod', 'pods.v1.'],
      ['po', 'pods.v1.'],
      ['cm', 'configmaps.v1.'],
      ['deploy', 'deployments.v1.apps'],
      ['deployments.apps', 'deployments.v1.apps'],
      ['deployment.apps', 'deployments.v1.apps'],
      ['deployments.v1.apps', 'deployments.v1.apps'],
      ['Deployment', 'deployments.v1.apps'],
      ['myapples', 'myapples.v1.stable.example.com'],
      ['myapple', 'myapples.v1.stable.example.com'],
      ['MyApple', 'myapples.v1.stable.example.com'],
      ['ma', 'myapples.v1.stable.example.com'],
      ['ma.stable.example.com', 'myapples.v1.stable.example.com'],
      ['myapples.v1.stable.example.com', 'myapples.v1.stable.example.com'],
    ];
    for (const [name, expected] of cases) expect([name, resolved(d, name)]).toEqual([name, expected]);
  });

  it('gives a typed error for an unknown name, a wrong group or a version the server does not serve', () => {
    const d = fromFixtures();
    for (const name of ['pears', 'deployments.batch', 'deployments.v2.apps', 'deployments/scale', '']) {
      const r = resolveResource(d, name);
      expect(r).toBeInstanceOf(UnknownResourceError);
      expect((r as UnknownResourceError).reason).toBe('Unknown');
      expect((r as UnknownResourceError).resourceName).toBe(name);
    }
    expect((resolveResource(d, 'pears') as Error).message).toBe('the server doesn\'t have a resource type "pears"');
  });
});

describe('the preferred-version rule', () => {
  it('resolves ingresses to networking.k8s.io/v1 (its preferred, GA version), not to the deprecated extensions copy', () => {
    const d = synthetic();
    expect(resolved(d, 'ingresses')).toBe('ingresses.v1.networking.k8s.io');
    expect(resolved(d, 'ing')).toBe('ingresses.v1.networking.k8s.io');
    expect(resolved(d, 'Ingress')).toBe('ingresses.v1.networking.k8s.io');
    // Asked for by group or version, the others are still there.
    expect(resolved(d, 'ingresses.extensions')).toBe('ingresses.v1beta1.extensions');
    expect(resolved(d, 'ingresses.networking.k8s.io')).toBe('ingresses.v1.networking.k8s.io');
    expect(resolved(d, 'ingresses.v1beta1.networking.k8s.io')).toBe('ingresses.v1beta1.networking.k8s.io');
  });

  it('prefers the core group when both are GA (events), and the group preferred version within a group', () => {
    const d = synthetic();
    expect(resolved(d, 'events')).toBe('events.v1.');
    expect(resolved(d, 'ev')).toBe('events.v1.');
    expect(resolved(d, 'events.events.k8s.io')).toBe('events.v1.events.k8s.io');
  });

  it('finds a resource only a non-preferred version serves (batch/v1beta1 cronjobs on 1.20)', () => {
    const d = synthetic();
    expect(resolved(d, 'cronjobs')).toBe('cronjobs.v1beta1.batch');
    expect(resolved(d, 'cj')).toBe('cronjobs.v1beta1.batch');
    expect(d.resources.filter((r) => r.group === 'batch').map((r) => `${r.plural}.${r.version}`)).toEqual(['jobs.v1', 'cronjobs.v1beta1']);
  });

  it('calls a name ambiguous when equally good groups serve it, and names the candidates', () => {
    const d = synthetic();
    const r = resolveResource(d, 'certificates');
    expect(r).toBeInstanceOf(AmbiguousResourceError);
    const error = r as AmbiguousResourceError;
    expect(error.reason).toBe('Ambiguous');
    // The alpha knative copy loses to GA ones; the two GA groups tie.
    expect(error.candidates.map((c) => c.group)).toEqual(['cert-manager.io', 'acme.example.com']);
    expect(error.message).toContain('certificates.v1.cert-manager.io, certificates.v1.acme.example.com');
    expect(resolved(d, 'certificates.cert-manager.io')).toBe('certificates.v1.cert-manager.io');
    // A short name only one of them has is not ambiguous; a plural beats a short name.
    expect(resolved(d, 'cert')).toBe('certificates.v1.cert-manager.io');
    expect(resolved(d, 'kcert')).toBe('certificates.v1alpha1.networking.internal.knative.dev');
  });

  it('lists every listable and watchable resource once per group, in its preferred version', () => {
    const names = watchableResources(synthetic()).map((r) => `${r.plural}.${r.version}.${r.group}`);
    expect(names).toEqual([
      'events.v1.',
      'pods.v1.',
      'ingresses.v1beta1.extensions',
      'events.v1.events.k8s.io',
      'jobs.v1.batch',
      'cronjobs.v1beta1.batch',
      'ingresses.v1.networking.k8s.io',
      'ingressclasses.v1.networking.k8s.io',
      'certificates.v1.cert-manager.io',
      'certificates.v1alpha1.networking.internal.knative.dev',
      'certificates.v1.acme.example.com',
    ]);
  });
});

describe('discover (against the emulator)', () => {
  it('reads every group version, marks the preferred one, and resolves custom resources by any name', async () => {
    api = await startApiServer({
      resources: [
        { group: 'stable.example.com', version: 'v1', plural: 'myapples', singular: 'myapple', kind: 'MyApple', shortNames: ['ma'] },
        { group: 'stable.example.com', version: 'v2', plural: 'myapples', singular: 'myapple', kind: 'MyApple', shortNames: ['ma'] },
        { group: 'stable.example.com', version: 'v2', plural: 'mypears', kind: 'MyPear', namespaced: false },
      ],
    });
    const d = await firstValueFrom(discover(api.kubeConfig));
    expect(d.failures).toEqual([]);
    const versions = d.all.filter((r) => r.group === 'stable.example.com').map((r) => `${r.plural}.${r.version}:${r.preferred}`);
    expect(versions).toEqual(['myapples.v1:true', 'myapples.v2:false', 'mypears.v2:false']);
    expect(d.resources.filter((r) => r.group === 'stable.example.com').map((r) => `${r.plural}.${r.version}`)).toEqual([
      'myapples.v1',
      'mypears.v2',
    ]);
    expect(resolved(d, 'ma')).toBe('myapples.v1.stable.example.com');
    expect(resolved(d, 'myapples.v2.stable.example.com')).toBe('myapples.v2.stable.example.com');
    expect(resolved(d, 'mypear')).toBe('mypears.v2.stable.example.com');
    expect(resolved(d, 'crd')).toBe('customresourcedefinitions.v1.apiextensions.k8s.io');
    const watchable = watchableResources(d).map(resourceName);
    expect(watchable).toContain('pods');
    expect(watchable).toContain('myapples.stable.example.com');
    expect(new Set(watchable).size).toBe(watchable.length);
  });

  it('reports a group version it cannot read as a failure and keeps the rest', async () => {
    api = await startApiServer({ resources: [{ group: 'stable.example.com', version: 'v1', plural: 'myapples', kind: 'MyApple' }] });
    api.faults.add({ match: { path: '/apis/stable.example.com/v1' }, fault: { type: 'status', code: 503 } });
    const d = await firstValueFrom(discover(api.kubeConfig));
    expect(d.failures.map((f) => [f.groupVersion, f.error.reason])).toEqual([['stable.example.com/v1', 'ServerError']]);
    expect(resolved(d, 'myapples')).toMatch(/^UnknownResourceError/);
    expect(resolved(d, 'deploy')).toBe('deployments.v1.apps');
  });
});

// The type of a resolved value is the resource, or the error as a value.
export type _Resolved = ReturnType<typeof resolveResource> extends DiscoveredResource | ResourceNameError ? true : never;

describe('GroupDiscoveryFailedError', () => {
  it('names at most three group versions, and counts the others (a message stays bounded whatever discovery failed)', () => {
    const failures = ['a.io/v1', 'b.io/v1', 'c.io/v1', 'd.io/v1', 'e.io/v1'].map((groupVersion) => ({
      groupVersion,
      error: new InformerError('ServerError', 'unavailable', { status: 503 }),
    }));
    const error = new GroupDiscoveryFailedError('pears', failures);
    expect(error).toMatchObject({ reason: 'GroupDiscoveryFailed', resourceName: 'pears', name: 'GroupDiscoveryFailedError', failures });
    expect(error.message).toBe(
      '"pears" is not among the resources discovery read; it could not read ' +
        'a.io/v1 (ServerError), b.io/v1 (ServerError), c.io/v1 (ServerError) and 2 more, which may serve it',
    );
  });
});
