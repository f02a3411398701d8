import { Observable, catchError, forkJoin, map, of, switchMap } from 'rxjs';
import type { KubeConfig } from '@kubernetes/client-node';
import { InformerError } from '../0-model/errors.ts';
import { customResource, type Resource } from '../0-model/resources.ts';
import { getJson, type HttpTransportOptions } from './httpTransport.ts';

/** One resource as discovery describes it. */
export interface DiscoveredResource {
  readonly group: string;
  readonly version: string;
  /** The plural name used in URLs. */
  readonly plural: string;
  readonly singular: string;
  readonly kind: string;
  readonly namespaced: boolean;
  readonly verbs: readonly string[];
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
}

/** What discovery found, and the group versions it could not read (reported, not fatal). */
export interface Discovery {
  readonly resources: readonly DiscoveredResource[];
  readonly failures: readonly { readonly groupVersion: string; readonly error: InformerError }[];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** Reads an APIResourceList, leaving out subresources (`pods/status`). */
export function parseResourceList(group: string, version: string, body: unknown): DiscoveredResource[] {
  if (!isRecord(body) || !Array.isArray(body.resources)) return [];
  const out: DiscoveredResource[] = [];
  for (const r of body.resources) {
    if (!isRecord(r) || typeof r.name !== 'string' || r.name.includes('/') || typeof r.kind !== 'string') continue;
    out.push({
      group,
      version,
      plural: r.name,
      singular: typeof r.singularName === 'string' && r.singularName ? r.singularName : r.kind.toLowerCase(),
      kind: r.kind,
      namespaced: r.namespaced === true,
      verbs: strings(r.verbs),
      shortNames: strings(r.shortNames),
      categories: strings(r.categories),
    });
  }
  return out;
}

/** The transport options discovery's requests use (each request is bounded by `requestTimeoutMs`, default 30 s). */
export type DiscoveryOptions = Pick<HttpTransportOptions, 'userAgent' | 'requestTimeoutMs' | 'listIdleTimeoutMs'>;

/**
 * Discovers the resources a server serves: the core group's versions from
 * `/api`, and every named group's preferred version from `/apis`.
 */
export function discover(kc: KubeConfig, options: DiscoveryOptions = {}): Observable<Discovery> {
  const groupVersions$ = forkJoin([getJson(kc, '/api', options), getJson(kc, '/apis', options)]).pipe(
    map(([api, apis]) => {
      const list: { group: string; version: string; path: string }[] = [];
      for (const version of isRecord(api) ? strings(api.versions) : []) list.push({ group: '', version, path: `/api/${version}` });
      const groups = isRecord(apis) && Array.isArray(apis.groups) ? apis.groups : [];
      for (const g of groups) {
        if (!isRecord(g) || typeof g.name !== 'string') continue;
        const preferred = isRecord(g.preferredVersion) && typeof g.preferredVersion.version === 'string' ? g.preferredVersion.version : undefined;
        const first = Array.isArray(g.versions) && isRecord(g.versions[0]) && typeof g.versions[0].version === 'string' ? g.versions[0].version : undefined;
        const version = preferred ?? first;
        if (version) list.push({ group: g.name, version, path: `/apis/${g.name}/${version}` });
      }
      return list;
    }),
  );
  return groupVersions$.pipe(
    switchMap((list) =>
      list.length === 0
        ? of<Discovery>({ resources: [], failures: [] })
        : forkJoin(
            list.map(({ group, version, path }) =>
              getJson(kc, path, options).pipe(
                map((body) => ({ resources: parseResourceList(group, version, body), failure: undefined })),
                catchError((error: unknown) =>
                  of({
                    resources: [] as DiscoveredResource[],
                    failure: {
                      groupVersion: group ? `${group}/${version}` : version,
                      error: error instanceof InformerError ? error : new InformerError('Unknown', String(error)),
                    },
                  }),
                ),
              ),
            ),
          ).pipe(
            map((parts) => ({
              resources: parts.flatMap((p) => p.resources),
              failures: parts.flatMap((p) => (p.failure ? [p.failure] : [])),
            })),
          ),
    ),
  );
}

/** True if the resource can be listed and watched. */
export function isWatchable(resource: DiscoveredResource): boolean {
  return resource.verbs.includes('list') && resource.verbs.includes('watch');
}

/**
 * Finds a resource by plural, singular, kind or short name (case-insensitive),
 * optionally qualified by group (`deployments.apps`). Core and shorter groups
 * win ties, as kubectl does.
 */
export function findResource(resources: readonly DiscoveredResource[], name: string): DiscoveredResource | undefined {
  const wanted = name.toLowerCase();
  const matches = (r: DiscoveredResource, n: string) =>
    r.plural === n || r.singular === n || r.kind.toLowerCase() === n || r.shortNames.includes(n);
  const qualified = (r: DiscoveredResource) => {
    const suffix = `.${r.group}`;
    return r.group !== '' && wanted.endsWith(suffix) && matches(r, wanted.slice(0, -suffix.length));
  };
  const candidates = resources.filter((r) => matches(r, wanted) || qualified(r));
  return candidates.sort((a, b) => (a.group === '' ? -1 : b.group === '' ? 1 : a.group.length - b.group.length))[0];
}

/** An unstructured resource descriptor (metadata validated) for a discovered resource. */
export function toResource(discovered: DiscoveredResource): Resource {
  const { group, version, plural, kind, namespaced } = discovered;
  return customResource({ group, version, plural, kind, namespaced });
}
