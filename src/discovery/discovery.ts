import { Observable, catchError, forkJoin, from, map, mergeMap, of, reduce, switchMap } from 'rxjs';
import type { KubeConfig } from '@kubernetes/client-node';
import { InformerError } from '../0-model/errors.ts';
import { customResource, type Resource } from '../0-model/resources.ts';
import { formatBytes, getJson, type HttpTransportOptions, type JsonRequestOptions } from '../1-transport/httpTransport.ts';
import { isRecord } from '../util/isRecord.ts';
import { HTTP_OPTION_NAMES, checkHttpOptionNames } from '../1-transport/http/optionNames.ts';

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
  /** True when `version` is its group's preferred version (always true for the core group). */
  readonly preferred?: boolean;
}

/** One group version discovery could not read: reported, not fatal. */
export interface DiscoveryFailure {
  readonly groupVersion: string;
  readonly error: InformerError;
}

/** What discovery found, and the group versions it could not read (reported, not fatal). */
export interface Discovery {
  /**
   * One entry per group and resource, as client-go's `ServerPreferredResources`:
   * the group's preferred version, or, for a resource the preferred version does
   * not serve (batch/v1beta1 cronjobs on 1.20), the first version that does.
   */
  readonly resources: readonly DiscoveredResource[];
  /** Every resource of every served group version, in the server's group order. */
  readonly all: readonly DiscoveredResource[];
  readonly failures: readonly DiscoveryFailure[];
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/**
 * A resource's plural as the API server allows a CRD's (apiextensions' validation: a DNS-1035 label, at most 63
 * characters): lower-case letters, digits and `-`, from a letter. A name from discovery becomes a URL path, an
 * informer's name and a `/metrics` label value; a peer could send one of megabytes.
 */
const DNS1035_LABEL = /^[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?$/;
/** A group as the API server allows a CRD's (a DNS-1123 subdomain, at most 253 characters); the core group is "". */
const DNS1123_LABEL = '[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?';
const DNS1123_SUBDOMAIN = new RegExp(`^${DNS1123_LABEL}(?:\\.${DNS1123_LABEL})*$`);

/** Whether `name` can be a resource's plural (see {@link DNS1035_LABEL}). */
export function isResourceName(name: string): boolean {
  return name.length <= 63 && DNS1035_LABEL.test(name);
}

/** Whether `group` can be an API group ("" the core group; else see {@link DNS1123_SUBDOMAIN}). */
export function isGroupName(group: string): boolean {
  return group === '' || (group.length <= 253 && DNS1123_SUBDOMAIN.test(group));
}

/**
 * A name an aggregated API may serve a listable resource by, which is no CRD plural (client-go checks none): at most
 * 253 characters (a DNS-1123 subdomain's bound) of letters, digits, `-` and `_`, which a URL path holds unescaped and a
 * terminal prints as they are. No dot: `a.b` of group `c.d` and `a` of group `b.c.d` would both be `a.b.c.d`.
 */
const SERVED_NAME = /^[A-Za-z0-9_-]{1,253}$/;

/** Whether a listable and watchable resource named `name` is kept: a plural, or else a name {@link SERVED_NAME} allows. */
function isServedName(name: string): boolean {
  return isResourceName(name) || SERVED_NAME.test(name);
}

/**
 * Reads an APIResourceList, leaving out subresources (`pods/status`), quietly a resource that cannot be informed (no
 * `list` and `watch`) whose name is no plural (an external metrics API serves one get-only resource per metric,
 * `queue_messages_ready`), and a listable one whose name {@link isServedName} refuses (counted: a hostile peer's).
 */
export function parseResourceList(group: string, version: string, body: unknown, preferred = true): DiscoveredResource[] {
  return readResourceList(group, version, body, preferred).resources;
}

/** {@link parseResourceList}, with how many listable resources were left out for their name. */
function readResourceList(
  group: string,
  version: string,
  body: unknown,
  preferred: boolean,
): { resources: DiscoveredResource[]; invalidNames: number } {
  if (!isRecord(body) || !Array.isArray(body.resources)) return { resources: [], invalidNames: 0 };
  const out: DiscoveredResource[] = [];
  let invalidNames = 0;
  for (const r of body.resources) {
    if (!isRecord(r) || typeof r.name !== 'string' || r.name.includes('/') || typeof r.kind !== 'string') continue;
    if (!isResourceName(r.name)) {
      const verbs = strings(r.verbs);
      if (!verbs.includes('list') || !verbs.includes('watch')) continue;
      if (!isServedName(r.name)) {
        invalidNames++;
        continue;
      }
    }
    out.push({
      group,
      version,
      plural: r.name,
      // Built-in kinds have singularName "" (01b); kubectl derives it from the kind.
      singular: typeof r.singularName === 'string' && r.singularName ? r.singularName : r.kind.toLowerCase(),
      kind: r.kind,
      namespaced: r.namespaced === true,
      verbs: strings(r.verbs),
      shortNames: strings(r.shortNames),
      categories: strings(r.categories),
      preferred,
    });
  }
  return { resources: out, invalidNames };
}

/** A group version to read: where, and whether it is its group's preferred one. */
export interface GroupVersion {
  readonly group: string;
  readonly version: string;
  readonly preferred: boolean;
}

/** The group versions of `/api` (APIVersions) and `/apis` (APIGroupList), in the server's order. */
export function parseGroupVersions(api: unknown, apis: unknown): GroupVersion[] {
  const list: GroupVersion[] = [];
  const core = isRecord(api) ? strings(api.versions) : [];
  core.forEach((version, i) => list.push({ group: '', version, preferred: i === 0 }));
  const groups = isRecord(apis) && Array.isArray(apis.groups) ? apis.groups : [];
  for (const g of groups) {
    if (!isRecord(g) || typeof g.name !== 'string') continue;
    const versions = (Array.isArray(g.versions) ? g.versions : []).flatMap((v) =>
      isRecord(v) && typeof v.version === 'string' ? [v.version] : [],
    );
    const preferred =
      isRecord(g.preferredVersion) && typeof g.preferredVersion.version === 'string' ? g.preferredVersion.version : versions[0];
    for (const version of versions) list.push({ group: g.name, version, preferred: version === preferred });
  }
  return list;
}

/**
 * Puts discovery together from the resource lists of every group version
 * (pure: the fixtures and the emulator feed it alike).
 */
export function assembleDiscovery(
  lists: readonly { readonly groupVersion: GroupVersion; readonly body: unknown }[],
  failures: readonly DiscoveryFailure[] = [],
): Discovery {
  return fromResources(
    lists.flatMap(({ groupVersion: gv, body }) => parseResourceList(gv.group, gv.version, body, gv.preferred)),
    failures,
  );
}

/** Discovery from every resource of every group version, in the server's group order. */
function fromResources(all: readonly DiscoveredResource[], failures: readonly DiscoveryFailure[]): Discovery {
  const chosen = new Map<string, DiscoveredResource>();
  // Preferred versions first, then the others in the server's order: the first one seen wins.
  for (const r of [...all.filter((r) => r.preferred), ...all.filter((r) => !r.preferred)]) {
    const key = `${r.plural}.${r.group}`;
    if (!chosen.has(key)) chosen.set(key, r);
  }
  // In the server's group order.
  const resources = all.filter((r) => chosen.get(`${r.plural}.${r.group}`) === r);
  return { resources, all, failures };
}

/**
 * The bounds of one discovery round as a whole (each document is bounded by the transport's `maxDocumentBytes`).
 * Past `maxGroupVersions`, `discover()` fails with an `InformerError` naming it. A group-version document that would
 * take the round past `maxResources` or `maxTotalBytes` is that group version's failure (a `DiscoveryFailure` naming
 * the cap, its resources left out, as for a 503): one oversized group version does not fail discovery for the whole
 * cluster, and what discovery keeps stays within the caps.
 */
export interface DiscoveryLimits {
  /** Group-version documents requested at once (default 16); the others wait for one of them to end. */
  readonly maxConcurrentRequests?: number;
  /** Group versions `/api` and `/apis` may list (default 2,000); past it: `ListTooLong`, nothing else is requested. */
  readonly maxGroupVersions?: number;
  /** Resources (subresources left out) all group versions may list together (default 20,000); past it: `ListTooLong`, of that group version. */
  readonly maxResources?: number;
  /** Bytes of JSON all group-version documents may hold together (default 64 MiB); past it: `ResponseTooLarge`, of that group version. */
  readonly maxTotalBytes?: number;
}

/** The defaults of {@link DiscoveryLimits}. */
export const DISCOVERY_LIMITS: Required<DiscoveryLimits> = {
  maxConcurrentRequests: 16,
  maxGroupVersions: 2000,
  maxResources: 20_000,
  maxTotalBytes: 64 * 1024 * 1024,
};

/**
 * The transport options discovery's requests use (each request is bounded by `requestTimeoutMs`, default 30 s,
 * each document by `maxDocumentBytes`, default 4 MiB, each error body by `maxErrorBodyBytes`, default 1 MiB): every
 * option of a JSON request (`getJson`'s: timeouts, byte limits, `protocol`, `http2`, `http1IdleTimeoutMs`,
 * `compression`, `userAgent`), and the bounds of the round as a whole ({@link DiscoveryLimits}).
 */
export type DiscoveryOptions = JsonRequestOptions & DiscoveryLimits;

/** Every option of a JSON request, once: what discovery takes of an informer's transport options. */
const JSON_REQUEST_OPTIONS = [
  'userAgent',
  'requestTimeoutMs',
  'tlsHandshakeTimeoutMs',
  'listIdleTimeoutMs',
  'minBodyBytesPerSecond',
  'maxDocumentBytes',
  'maxErrorBodyBytes',
  'protocol',
  'http2',
  'http1IdleTimeoutMs',
  'compression',
] as const satisfies readonly (keyof JsonRequestOptions)[];
// A JSON request option missing from the list above is a type error here.
const listsEveryOption: Exclude<keyof JsonRequestOptions, (typeof JSON_REQUEST_OPTIONS)[number]> extends never ? true : never = true;
void listsEveryOption;

/**
 * The option names {@link discover} accepts: every transport option (`HTTP_OPTION_NAMES`, tied to
 * `HttpTransportOptions` by its type), read when a JSON request's and unread otherwise (`maxListBytes`: one object is
 * often handed to the informers and discovery both, and a variable gets no excess-property check), and the round's
 * bounds (`DISCOVERY_LIMITS` has every one, by its type). A misspelt name is still refused.
 */
export const DISCOVERY_OPTION_NAMES: readonly string[] = [...HTTP_OPTION_NAMES, ...Object.keys(DISCOVERY_LIMITS)];

/**
 * The options of discovery's requests taken from an informer's transport options (`http`): the same timeouts,
 * limits, protocol, HTTP/2 and HTTP/1.1 connection options as the informers' requests. Options not given stay unset.
 */
export function discoveryRequestOptions(http: HttpTransportOptions | undefined): JsonRequestOptions {
  const out: Record<string, unknown> = {};
  for (const key of JSON_REQUEST_OPTIONS) if (http?.[key] !== undefined) out[key] = http[key];
  return out as JsonRequestOptions;
}

/** A limit as given, or its default when it is not a positive number (`Infinity` turns a cap off). */
function limitsOf(options: DiscoveryLimits): Required<DiscoveryLimits> {
  const pick = (value: number | undefined, fallback: number) => (value !== undefined && value > 0 ? value : fallback);
  return {
    maxConcurrentRequests: Math.max(1, Math.floor(pick(options.maxConcurrentRequests, DISCOVERY_LIMITS.maxConcurrentRequests))),
    maxGroupVersions: pick(options.maxGroupVersions, DISCOVERY_LIMITS.maxGroupVersions),
    maxResources: pick(options.maxResources, DISCOVERY_LIMITS.maxResources),
    maxTotalBytes: pick(options.maxTotalBytes, DISCOVERY_LIMITS.maxTotalBytes),
  };
}

/** What a JSON value is, for a message (never the value itself: it may be huge). */
function shapeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/**
 * A discovery document that is not what `path` serves: not an object, or `field` (a list; `null`
 * or missing is an empty one, as Kubernetes decodes it) of another type. Reported as a
 * `MalformedLine` error, the way a 503 is reported, instead of read as "nothing served".
 */
function invalidDocument(path: string, body: unknown, kind: string, field: string): InformerError | undefined {
  const member = isRecord(body) ? body[field] : undefined;
  const wrongMember = member !== undefined && member !== null && !Array.isArray(member);
  const wrong = !isRecord(body) ? shapeOf(body) : wrongMember ? `${field} is ${shapeOf(member)}` : undefined;
  if (wrong === undefined) return undefined;
  return new InformerError('MalformedLine', `GET ${path}: the response is not an ${kind} (${wrong})`, { phase: 'list' });
}

/** Fetches one discovery document: the transport's `getJson` (a fake in the spec). */
export type FetchDocument = (path: string) => Observable<unknown>;

/** The document at `path`, or an error if it is not the `kind` it should be. */
function getDocument(fetch: FetchDocument, path: string, kind: string, field: string): Observable<unknown> {
  return fetch(path).pipe(
    map((body) => {
      const invalid = invalidDocument(path, body, kind, field);
      if (invalid) throw invalid;
      return body;
    }),
  );
}

/** `group/version`, each cut at 253 characters (a peer's may be megabytes: it is a failure's name and message). */
function groupVersionName(gv: Pick<GroupVersion, 'group' | 'version'>): string {
  const cut = (s: string) => (s.length > 253 ? `${s.slice(0, 253)}…` : s);
  return gv.group ? `${cut(gv.group)}/${cut(gv.version)}` : cut(gv.version);
}

/** One group version read: its resources (the document itself is not kept) and its size, or why it could not be. */
interface GroupVersionRead {
  readonly index: number;
  readonly resources: readonly DiscoveredResource[];
  readonly bytes: number;
  readonly failure?: DiscoveryFailure;
}

/**
 * One group version's resources. A group that is no API group name, or a version that is no DNS-1035 label, is its
 * failure unread (nothing of it could be an informer's name or a label); listable resources whose name is refused
 * ({@link readResourceList}) are left out and counted in its failure, the others kept.
 */
function readGroupVersion(fetch: FetchDocument, groupVersion: GroupVersion, index: number): Observable<GroupVersionRead> {
  const name = groupVersionName(groupVersion);
  const malformed = (what: string) => ({
    groupVersion: name,
    error: new InformerError('MalformedLine', `discovery: ${name}: ${what}`, { phase: 'list' }),
  });
  if (!isGroupName(groupVersion.group) || !isResourceName(groupVersion.version)) {
    const what = 'its group is not a DNS-1123 subdomain of at most 253 characters, or its version not a DNS-1035 label of at most 63';
    return of({ index, resources: [], bytes: 0, failure: malformed(`${what}: not read`) });
  }
  const path = groupVersion.group ? `/apis/${groupVersion.group}/${groupVersion.version}` : `/api/${groupVersion.version}`;
  return getDocument(fetch, path, 'APIResourceList', 'resources').pipe(
    map((body) => {
      const { resources, invalidNames } = readResourceList(groupVersion.group, groupVersion.version, body, groupVersion.preferred);
      const what = `${invalidNames} listable resources whose name is not one of at most 253 letters, digits, - and _: left out`;
      return {
        index,
        resources,
        // The document's JSON as read (bar whitespace): what it cost, whatever of it discovery keeps.
        bytes: Buffer.byteLength(JSON.stringify(body)),
        ...(invalidNames > 0 ? { failure: malformed(what) } : {}),
      };
    }),
    catchError((error: unknown) =>
      of({
        index,
        resources: [],
        bytes: 0,
        failure: {
          groupVersion: groupVersionName(groupVersion),
          error: error instanceof InformerError ? error : new InformerError('Unknown', String(error)),
        },
      }),
    ),
  );
}

/** What the group versions read so far add up to. */
interface Tally {
  readonly reads: GroupVersionRead[];
  resources: number;
  bytes: number;
}

/**
 * Adds one group version to the tally. One whose document would take the tally past `maxResources` or `maxTotalBytes`
 * is added as that group version's failure instead (its resources and bytes left out): the tally never passes a cap.
 */
function tallied(tally: Tally, read: GroupVersionRead, limits: Required<DiscoveryLimits>, groupVersion: string): Tally {
  const over = overCap(tally, read, limits, groupVersion);
  const kept = over ? { index: read.index, resources: [], bytes: 0, failure: { groupVersion, error: over } } : read;
  tally.reads.push(kept);
  tally.resources += kept.resources.length;
  tally.bytes += kept.bytes;
  return tally;
}

/** Why `read` cannot be added to `tally` (the cap it would pass), or undefined. */
function overCap(tally: Tally, read: GroupVersionRead, limits: Required<DiscoveryLimits>, groupVersion: string): InformerError | undefined {
  const before = `the ${tally.reads.length} group versions read before it`;
  if (tally.resources + read.resources.length > limits.maxResources)
    return new InformerError(
      'ListTooLong',
      `discovery: ${groupVersion} lists ${read.resources.length} resources, which with the ${tally.resources} of ${before} ` +
        `is more than maxResources (${limits.maxResources}): left out`,
      { phase: 'list' },
    );
  if (tally.bytes + read.bytes > limits.maxTotalBytes)
    return new InformerError(
      'ResponseTooLarge',
      `discovery: ${groupVersion}'s document holds ${read.bytes} bytes, which with the ${tally.bytes} of ${before} ` +
        `is more than maxTotalBytes (${formatBytes(limits.maxTotalBytes)}): left out`,
      { phase: 'list' },
    );
  return undefined;
}

/**
 * Discovers the resources a server serves: the core group's versions from
 * `/api`, every named group's versions from `/apis`, then each group version's
 * resource list. A group version that cannot be read is a `failure`, not an
 * error (aggregated APIs are often down); `/api` or `/apis` failing is an error.
 * Bounded as a whole by {@link DiscoveryLimits}: a few requests at once, a cap on
 * group versions (an error past it), and caps on resources and bytes (the group
 * version whose document would pass one is a failure).
 */
export function discover(kc: KubeConfig, options: DiscoveryOptions = {}): Observable<Discovery> {
  checkHttpOptionNames('discover', options, '', DISCOVERY_OPTION_NAMES);
  return discoverWith((path) => getJson(kc, path, options), options);
}

/** {@link discover} with its requests made by `fetch`. */
export function discoverWith(fetch: FetchDocument, options: DiscoveryLimits = {}): Observable<Discovery> {
  const limits = limitsOf(options);
  return forkJoin([getDocument(fetch, '/api', 'APIVersions', 'versions'), getDocument(fetch, '/apis', 'APIGroupList', 'groups')]).pipe(
    map(([api, apis]) => {
      const groupVersions = parseGroupVersions(api, apis);
      if (groupVersions.length > limits.maxGroupVersions)
        throw new InformerError(
          'ListTooLong',
          `discovery: /api and /apis list ${groupVersions.length} group versions, more than maxGroupVersions (${limits.maxGroupVersions})`,
          { phase: 'list' },
        );
      return groupVersions;
    }),
    switchMap((groupVersions) =>
      from(groupVersions).pipe(
        mergeMap((groupVersion, index) => readGroupVersion(fetch, groupVersion, index), limits.maxConcurrentRequests),
        reduce((tally: Tally, read) => tallied(tally, read, limits, groupVersionName(groupVersions[read.index]!)), {
          reads: [],
          resources: 0,
          bytes: 0,
        }),
        map(({ reads }) => {
          const inOrder = [...reads].sort((a, b) => a.index - b.index);
          return fromResources(
            inOrder.flatMap((r) => r.resources),
            inOrder.flatMap((r) => (r.failure ? [r.failure] : [])),
          );
        }),
      ),
    ),
  );
}

/** True if the resource can be listed and watched. */
export function isWatchable(resource: DiscoveredResource): boolean {
  return resource.verbs.includes('list') && resource.verbs.includes('watch');
}

/** Every resource that can be listed and watched, one per group (see {@link Discovery.resources}). */
export function watchableResources(discovery: Pick<Discovery, 'resources'>): DiscoveredResource[] {
  return discovery.resources.filter(isWatchable);
}

// ---------------------------------------------------------------------------
// Resolving names

/**
 * Why a name could not be resolved: no resource by that name, several equally good ones, or none among what
 * discovery read while a group version that may serve it could not be read (client-go's `ErrGroupDiscoveryFailed`).
 */
export type ResourceNameReason = 'Unknown' | 'Ambiguous' | 'GroupDiscoveryFailed';

/** A resource name discovery cannot resolve: no resource by that name, or several equally good ones. */
export class ResourceNameError extends Error {
  override readonly name: string = 'ResourceNameError';
  readonly reason: ResourceNameReason;
  /** The name asked for. */
  readonly resourceName: string;
  /** For `Ambiguous`: the equally good candidates (`ingresses.example.com`, …). */
  readonly candidates: readonly DiscoveredResource[];
  constructor(reason: ResourceNameReason, resourceName: string, message: string, candidates: readonly DiscoveredResource[] = []) {
    super(message);
    this.reason = reason;
    this.resourceName = resourceName;
    this.candidates = candidates;
  }
}

/** No resource of that name is served. */
export class UnknownResourceError extends ResourceNameError {
  override readonly name = 'UnknownResourceError';
  constructor(resourceName: string) {
    super('Unknown', resourceName, `the server doesn't have a resource type "${resourceName}"`);
  }
}

/** Several groups serve a resource of that name and no rule prefers one: qualify it with its group. */
export class AmbiguousResourceError extends ResourceNameError {
  override readonly name = 'AmbiguousResourceError';
  constructor(resourceName: string, candidates: readonly DiscoveredResource[]) {
    const names = candidates.map((c) => `${c.plural}.${c.version}.${c.group}`).join(', ');
    super(
      'Ambiguous',
      resourceName,
      `"${resourceName}" is ambiguous: it could be ${names}; name the group (e.g. ${candidates[0]?.plural}.${candidates[0]?.group})`,
      candidates,
    );
  }
}

/** The group versions named in a message at most; the others are counted. */
const MAX_NAMED_FAILURES = 3;

/**
 * No resource of that name among what discovery read, and a group version that may serve it could not be read
 * (a 503 on an aggregated API, a flaky webhook): not known to be absent. `failures`: those group versions.
 */
export class GroupDiscoveryFailedError extends ResourceNameError {
  override readonly name = 'GroupDiscoveryFailedError';
  readonly failures: readonly DiscoveryFailure[];
  constructor(resourceName: string, failures: readonly DiscoveryFailure[]) {
    const named = failures.slice(0, MAX_NAMED_FAILURES).map((f) => `${f.groupVersion} (${f.error.reason})`);
    const more = failures.length > MAX_NAMED_FAILURES ? ` and ${failures.length - MAX_NAMED_FAILURES} more` : '';
    super(
      'GroupDiscoveryFailed',
      resourceName,
      `"${resourceName}" is not among the resources discovery read; it could not read ${named.join(', ')}${more}, which may serve it`,
    );
    this.failures = failures;
  }
}

/** Groups whose resources are deprecated copies of resources served elsewhere (ingresses moved to networking.k8s.io). */
const DEPRECATED_GROUPS: ReadonlySet<string> = new Set(['extensions']);

/**
 * Kubernetes' version order (apimachinery's CompareKubeAwareVersionStrings):
 * GA before beta before alpha, higher numbers first, anything else last.
 * Negative when `a` is preferred.
 */
export function compareVersions(a: string, b: string): number {
  const rank = (v: string): [number, number, number] => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return [3, 0, 0];
    const stability = m[2] === undefined ? 0 : m[2] === 'beta' ? 1 : 2;
    return [stability, -Number(m[1]), -Number(m[3] ?? 0)];
  };
  const [x, y] = [rank(a), rank(b)];
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i]! - y[i]!;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** How well a resource matches a name: 0 by plural, 1 by singular or kind, 2 by short name; undefined for no match. */
function matchStrength(r: DiscoveredResource, name: string): number | undefined {
  if (r.plural === name) return 0;
  if (r.singular === name || r.kind.toLowerCase() === name) return 1;
  if (r.shortNames.includes(name)) return 2;
  return undefined;
}

/**
 * Resolves a resource name as kubectl accepts it, against what discovery found:
 * `pods`, `pod`, `Pod`, `po`; with a group, `deployments.apps`; with a version
 * and a group, `cronjobs.v1beta1.batch`. Case-insensitive.
 *
 * Without a version, each group's preferred version is used. When several
 * groups serve the name, the best is kept by these rules, in order:
 * a plural beats a singular or kind, which beats a short name; a GA version
 * beats beta, beta beats alpha; the core group wins; a deprecated group
 * (`extensions`) loses. So `ingresses` is networking.k8s.io's, not
 * extensions', and `events` the core group's. Candidates still equal are
 * `Ambiguous`. Returns the resource, or the error as a value.
 */
export function resolveResource(discovery: Pick<Discovery, 'all'>, name: string): DiscoveredResource | ResourceNameError {
  const wanted = name.trim().toLowerCase();
  if (!wanted) return new UnknownResourceError(name);
  const matches: Match[] = [];
  for (const r of discovery.all) {
    const m = matchOf(r, wanted);
    if (m) matches.push(m);
  }
  if (matches.length === 0) return new UnknownResourceError(name);
  // An explicit version names exactly that group version.
  const explicit = matches.filter((m) => m.explicitVersion);
  const named = explicit.length > 0 ? explicit : matches;
  // Within a group: its preferred version if that serves the name, else its best version.
  const byGroup = new Map<string, Match[]>();
  for (const m of named) byGroup.set(m.r.group, [...(byGroup.get(m.r.group) ?? []), m]);
  let pool = [...byGroup.values()].map(
    (ms) => ms.find((m) => m.r.preferred !== false) ?? [...ms].sort((a, b) => compareVersions(a.r.version, b.r.version))[0]!,
  );
  for (const score of RULES) {
    const best = Math.min(...pool.map(score));
    pool = pool.filter((m) => score(m) === best);
    if (pool.length === 1) return pool[0]!.r;
  }
  return new AmbiguousResourceError(
    name,
    pool.map((m) => m.r),
  );
}

interface Match {
  readonly r: DiscoveredResource;
  readonly strength: number;
  readonly explicitVersion: boolean;
}

/** The best reading of `wanted` as this resource: bare, `name.group` or `name.version.group`. */
function matchOf(r: DiscoveredResource, wanted: string): Match | undefined {
  const bare = matchStrength(r, wanted);
  if (bare !== undefined) return { r, strength: bare, explicitVersion: false };
  if (r.group === '') return undefined;
  const versioned = `.${r.version}.${r.group}`;
  if (wanted.endsWith(versioned)) {
    const s = matchStrength(r, wanted.slice(0, -versioned.length));
    if (s !== undefined) return { r, strength: s, explicitVersion: true };
  }
  const grouped = `.${r.group}`;
  if (wanted.endsWith(grouped)) {
    const s = matchStrength(r, wanted.slice(0, -grouped.length));
    if (s !== undefined) return { r, strength: s, explicitVersion: false };
  }
  return undefined;
}

/** The tie-breakers across groups, in order (lower is better). */
const RULES: readonly ((m: Match) => number)[] = [
  (m) => m.strength,
  (m) => stabilityOf(m.r.version),
  (m) => (m.r.group === '' ? 0 : 1),
  (m) => (DEPRECATED_GROUPS.has(m.r.group) ? 1 : 0),
];

/** 0 for GA, 1 beta, 2 alpha, 3 anything else. */
function stabilityOf(version: string): number {
  const m = /^v\d+(?:(alpha|beta)\d+)?$/.exec(version);
  return !m ? 3 : m[1] === 'alpha' ? 2 : m[1] === 'beta' ? 1 : 0;
}

/**
 * Finds a resource by name (see {@link resolveResource}); undefined when the
 * name is unknown or ambiguous. Prefer `resolveResource`, which says which.
 */
export function findResource(resources: readonly DiscoveredResource[], name: string): DiscoveredResource | undefined {
  const found = resolveResource({ all: resources }, name);
  return found instanceof ResourceNameError ? undefined : found;
}

/** An unstructured resource descriptor (metadata validated) for a discovered resource. */
export function toResource(discovered: DiscoveredResource): Resource {
  const { group, version, plural, kind, namespaced } = discovered;
  return customResource({ group, version, plural, kind, namespaced });
}
