/**
 * Resource definitions: the built-in kinds the emulator serves, custom resources
 * registered at run time, and the registry that resolves names to them.
 */
import { createHash } from 'node:crypto';
import { isPlainObject, orderKeys } from './json.ts';
import type { CustomResourceDefinitionSpec, Gvr, GvrLike, JsonSchema, StoredObject } from './types.ts';

export type FieldGetter = (obj: StoredObject) => string | undefined;

export interface ResourceDef {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
  /** `singularName` as served by discovery (`""` for built-in kinds, as in 01b). */
  readonly singular: string;
  readonly kind: string;
  readonly listKind: string;
  readonly namespaced: boolean;
  readonly shortNames: readonly string[];
  readonly categories: readonly string[];
  readonly verbs: readonly string[];
  /** Built-in kinds: Go struct key order, list items without kind/apiVersion. Custom: sorted keys. */
  readonly builtin: boolean;
  readonly statusSubresource: boolean;
  /** Whether `metadata.generation` is maintained. */
  readonly hasGeneration: boolean;
  /** DELETE answers with the deleted object instead of a Status (pods). */
  readonly returnDeletedObject: boolean;
  /** Field selector labels beyond metadata.name / metadata.namespace. */
  readonly fields: Readonly<Record<string, FieldGetter>>;
  /** Server-side defaulting and key ordering of the top level (built-ins). */
  readonly normalize?: (obj: StoredObject) => StoredObject;
  readonly schema?: JsonSchema;
  /** `group/version` or `v1`. */
  readonly apiVersion: string;
  readonly gvr: Gvr;
}

const VERBS_ALL = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
const VERBS_NO_COLLECTION = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];
const CR_VERBS = ['delete', 'deletecollection', 'get', 'list', 'patch', 'create', 'update', 'watch'];

/** `storageVersionHash` as computed by kube-apiserver: base64(sha256("group/version/Kind")[:8]). */
export function storageVersionHash(group: string, version: string, kind: string): string {
  return createHash('sha256').update(`${group}/${version}/${kind}`).digest().subarray(0, 8).toString('base64');
}

const str = (v: unknown): string | undefined => (v === undefined || v === null ? undefined : String(v));
const path =
  (...keys: string[]): FieldGetter =>
  (obj) => {
    let cur: unknown = obj;
    for (const k of keys) {
      if (!isPlainObject(cur)) return undefined;
      cur = cur[k];
    }
    return str(cur);
  };

// --- defaulting -----------------------------------------------------------

const POD_SPEC_ORDER = [
  'volumes',
  'initContainers',
  'containers',
  'ephemeralContainers',
  'restartPolicy',
  'terminationGracePeriodSeconds',
  'activeDeadlineSeconds',
  'dnsPolicy',
  'nodeSelector',
  'serviceAccountName',
  'serviceAccount',
  'automountServiceAccountToken',
  'nodeName',
  'hostNetwork',
  'hostPID',
  'hostIPC',
  'shareProcessNamespace',
  'securityContext',
  'imagePullSecrets',
  'hostname',
  'subdomain',
  'affinity',
  'schedulerName',
  'tolerations',
  'hostAliases',
  'priorityClassName',
  'priority',
  'dnsConfig',
  'readinessGates',
  'runtimeClassName',
  'enableServiceLinks',
  'preemptionPolicy',
  'overhead',
  'topologySpreadConstraints',
  'setHostnameAsFQDN',
];
const CONTAINER_ORDER = [
  'name',
  'image',
  'command',
  'args',
  'workingDir',
  'ports',
  'envFrom',
  'env',
  'resources',
  'volumeMounts',
  'volumeDevices',
  'livenessProbe',
  'readinessProbe',
  'startupProbe',
  'lifecycle',
  'terminationMessagePath',
  'terminationMessagePolicy',
  'imagePullPolicy',
  'securityContext',
  'stdin',
  'stdinOnce',
  'tty',
];
const POD_STATUS_ORDER = [
  'phase',
  'conditions',
  'message',
  'reason',
  'nominatedNodeName',
  'hostIP',
  'podIP',
  'podIPs',
  'startTime',
  'initContainerStatuses',
  'containerStatuses',
  'qosClass',
  'ephemeralContainerStatuses',
];

function topLevel(obj: StoredObject, rest: readonly string[]): StoredObject {
  return orderKeys(obj, ['kind', 'apiVersion', 'metadata', ...rest]);
}

function defaultContainer(c: unknown): unknown {
  if (!isPlainObject(c)) return c;
  const out: Record<string, unknown> = { ...c };
  out['resources'] ??= {};
  out['terminationMessagePath'] ??= '/dev/termination-log';
  out['terminationMessagePolicy'] ??= 'File';
  if (out['imagePullPolicy'] === undefined) {
    const image = typeof out['image'] === 'string' ? out['image'] : '';
    const lastPart = image.slice(image.lastIndexOf('/') + 1);
    const tagged = lastPart.includes(':') && !image.endsWith(':latest');
    out['imagePullPolicy'] = tagged || image.includes('@') ? 'IfNotPresent' : 'Always';
  }
  return orderKeys(out, CONTAINER_ORDER);
}

function qosClass(spec: Record<string, unknown>): string {
  const containers = Array.isArray(spec['containers']) ? spec['containers'] : [];
  let any = false;
  for (const c of containers) {
    const r = isPlainObject(c) && isPlainObject(c['resources']) ? c['resources'] : {};
    if (Object.keys((r['requests'] as object) ?? {}).length || Object.keys((r['limits'] as object) ?? {}).length) any = true;
  }
  return any ? 'Burstable' : 'BestEffort';
}

/** Pod defaults as kube-apiserver v1.20 applies them without admission plugins (08a). */
function normalizePod(obj: StoredObject): StoredObject {
  const spec: Record<string, unknown> = isPlainObject(obj['spec']) ? { ...obj['spec'] } : {};
  if (Array.isArray(spec['containers'])) spec['containers'] = spec['containers'].map(defaultContainer);
  if (Array.isArray(spec['initContainers'])) spec['initContainers'] = spec['initContainers'].map(defaultContainer);
  spec['restartPolicy'] ??= 'Always';
  spec['terminationGracePeriodSeconds'] ??= 30;
  spec['dnsPolicy'] ??= 'ClusterFirst';
  spec['securityContext'] ??= {};
  spec['schedulerName'] ??= 'default-scheduler';
  const tolerations = Array.isArray(spec['tolerations']) ? [...spec['tolerations']] : [];
  for (const key of ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable']) {
    if (!tolerations.some((t) => isPlainObject(t) && t['key'] === key && t['effect'] === 'NoExecute')) {
      tolerations.push({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 });
    }
  }
  spec['tolerations'] = tolerations;
  spec['priority'] ??= 0;
  spec['enableServiceLinks'] ??= true;
  spec['preemptionPolicy'] ??= 'PreemptLowerPriority';
  const status: Record<string, unknown> = isPlainObject(obj['status']) ? { ...obj['status'] } : {};
  status['phase'] ??= 'Pending';
  status['qosClass'] ??= qosClass(spec);
  return topLevel({ ...obj, spec: orderKeys(spec, POD_SPEC_ORDER), status: orderKeys(status, POD_STATUS_ORDER) }, ['spec', 'status']);
}

function normalizeNamespace(obj: StoredObject): StoredObject {
  const spec: Record<string, unknown> = isPlainObject(obj['spec']) ? { ...obj['spec'] } : {};
  spec['finalizers'] ??= ['kubernetes'];
  const status: Record<string, unknown> = isPlainObject(obj['status']) ? { ...obj['status'] } : {};
  status['phase'] ??= 'Active';
  return topLevel({ ...obj, spec, status }, ['spec', 'status']);
}

function normalizeWithReplicas(obj: StoredObject): StoredObject {
  const spec: Record<string, unknown> = isPlainObject(obj['spec']) ? { ...obj['spec'] } : {};
  spec['replicas'] ??= 1;
  const withSpec: StoredObject = { ...obj, spec: orderKeys(spec, ['replicas', 'selector', 'template']) };
  return topLevel(withSpec, ['spec', 'status']);
}

/** CRD defaults and status as kube-apiserver fills them (07a). */
function normalizeCrd(obj: StoredObject): StoredObject {
  const spec: Record<string, unknown> = isPlainObject(obj['spec']) ? { ...obj['spec'] } : {};
  const names: Record<string, unknown> = isPlainObject(spec['names']) ? { ...spec['names'] } : {};
  if (typeof names['kind'] === 'string') names['listKind'] ??= `${names['kind']}List`;
  if (typeof names['kind'] === 'string') names['singular'] ??= names['kind'].toLowerCase();
  spec['names'] = orderKeys(names, ['plural', 'singular', 'shortNames', 'kind', 'listKind', 'categories']);
  spec['conversion'] ??= { strategy: 'None' };
  let status = obj['status'];
  if (!isPlainObject(status) || !Array.isArray(status['conditions'])) {
    const t = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
    const versions = Array.isArray(spec['versions']) ? spec['versions'] : [];
    const stored = versions.filter((v) => isPlainObject(v) && v['storage'] === true).map((v) => (v as { name: unknown }).name);
    status = {
      conditions: [
        { type: 'NamesAccepted', status: 'True', lastTransitionTime: t, reason: 'NoConflicts', message: 'no conflicts found' },
        {
          type: 'Established',
          status: 'True',
          lastTransitionTime: t,
          reason: 'InitialNamesAccepted',
          message: 'the initial names have been accepted',
        },
      ],
      acceptedNames: spec['names'],
      storedVersions: stored,
    };
  }
  return topLevel({ ...obj, spec: orderKeys(spec, ['group', 'names', 'scope', 'versions', 'conversion']), status }, ['spec', 'status']);
}

const order =
  (...rest: string[]) =>
  (obj: StoredObject): StoredObject =>
    topLevel(obj, rest);

// --- built-ins ---------------------------------------------------------------

interface BuiltinInit {
  group: string;
  plural: string;
  kind: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  verbs?: string[];
  statusSubresource?: boolean;
  hasGeneration?: boolean;
  returnDeletedObject?: boolean;
  fields?: Record<string, FieldGetter>;
  normalize?: (obj: StoredObject) => StoredObject;
}

function builtin(init: BuiltinInit): ResourceDef {
  const version = 'v1';
  return {
    group: init.group,
    version,
    plural: init.plural,
    singular: '',
    kind: init.kind,
    listKind: `${init.kind}List`,
    namespaced: init.namespaced,
    shortNames: init.shortNames ?? [],
    categories: init.categories ?? [],
    verbs: init.verbs ?? VERBS_ALL,
    builtin: true,
    statusSubresource: init.statusSubresource ?? false,
    hasGeneration: init.hasGeneration ?? false,
    returnDeletedObject: init.returnDeletedObject ?? false,
    fields: init.fields ?? {},
    normalize: init.normalize ?? order(),
    apiVersion: init.group ? `${init.group}/${version}` : version,
    gvr: { group: init.group, version, resource: init.plural },
  };
}

export const BUILTIN_RESOURCES: readonly ResourceDef[] = [
  builtin({
    group: '',
    plural: 'configmaps',
    kind: 'ConfigMap',
    namespaced: true,
    shortNames: ['cm'],
    normalize: order('immutable', 'data', 'binaryData'),
  }),
  builtin({
    group: '',
    plural: 'events',
    kind: 'Event',
    namespaced: true,
    shortNames: ['ev'],
    fields: {
      'involvedObject.kind': path('involvedObject', 'kind'),
      'involvedObject.namespace': path('involvedObject', 'namespace'),
      'involvedObject.name': path('involvedObject', 'name'),
      'involvedObject.uid': path('involvedObject', 'uid'),
      'involvedObject.apiVersion': path('involvedObject', 'apiVersion'),
      'involvedObject.resourceVersion': path('involvedObject', 'resourceVersion'),
      'involvedObject.fieldPath': path('involvedObject', 'fieldPath'),
      reason: path('reason'),
      reportingComponent: path('reportingComponent'),
      source: path('source', 'component'),
      type: path('type'),
    },
    normalize: order('involvedObject', 'reason', 'message', 'source', 'firstTimestamp', 'lastTimestamp', 'count', 'type'),
  }),
  builtin({
    group: '',
    plural: 'namespaces',
    kind: 'Namespace',
    namespaced: false,
    shortNames: ['ns'],
    verbs: VERBS_NO_COLLECTION,
    statusSubresource: true,
    fields: { 'status.phase': path('status', 'phase') },
    normalize: normalizeNamespace,
  }),
  builtin({
    group: '',
    plural: 'nodes',
    kind: 'Node',
    namespaced: false,
    shortNames: ['no'],
    statusSubresource: true,
    fields: { 'spec.unschedulable': (o) => path('spec', 'unschedulable')(o) ?? 'false' },
    normalize: order('spec', 'status'),
  }),
  builtin({
    group: '',
    plural: 'pods',
    kind: 'Pod',
    namespaced: true,
    shortNames: ['po'],
    categories: ['all'],
    statusSubresource: true,
    returnDeletedObject: true,
    fields: {
      'spec.nodeName': path('spec', 'nodeName'),
      'spec.restartPolicy': path('spec', 'restartPolicy'),
      'spec.schedulerName': path('spec', 'schedulerName'),
      'spec.serviceAccountName': path('spec', 'serviceAccountName'),
      'spec.hostNetwork': (o) => path('spec', 'hostNetwork')(o) ?? 'false',
      'status.phase': path('status', 'phase'),
      'status.podIP': path('status', 'podIP'),
      'status.nominatedNodeName': path('status', 'nominatedNodeName'),
    },
    normalize: normalizePod,
  }),
  builtin({
    group: '',
    plural: 'secrets',
    kind: 'Secret',
    namespaced: true,
    fields: { type: path('type') },
    normalize: (obj) => topLevel({ ...obj, type: obj['type'] ?? 'Opaque' }, ['immutable', 'data', 'type']),
  }),
  builtin({
    group: '',
    plural: 'services',
    kind: 'Service',
    namespaced: true,
    shortNames: ['svc'],
    categories: ['all'],
    verbs: VERBS_NO_COLLECTION,
    statusSubresource: true,
    normalize: order('spec', 'status'),
  }),
  builtin({
    group: 'apps',
    plural: 'deployments',
    kind: 'Deployment',
    namespaced: true,
    shortNames: ['deploy'],
    categories: ['all'],
    statusSubresource: true,
    hasGeneration: true,
    normalize: normalizeWithReplicas,
  }),
  builtin({
    group: 'apps',
    plural: 'replicasets',
    kind: 'ReplicaSet',
    namespaced: true,
    shortNames: ['rs'],
    categories: ['all'],
    statusSubresource: true,
    hasGeneration: true,
    fields: { 'status.replicas': (o) => path('status', 'replicas')(o) ?? '0' },
    normalize: normalizeWithReplicas,
  }),
  builtin({ group: 'coordination.k8s.io', plural: 'leases', kind: 'Lease', namespaced: true, normalize: order('spec') }),
  builtin({
    group: 'apiextensions.k8s.io',
    plural: 'customresourcedefinitions',
    kind: 'CustomResourceDefinition',
    namespaced: false,
    shortNames: ['crd', 'crds'],
    categories: ['api-extensions'],
    statusSubresource: true,
    hasGeneration: true,
    normalize: normalizeCrd,
  }),
];

/** The groups of /apis in kube-apiserver's order (01c); custom groups follow. */
export const BUILTIN_GROUP_ORDER = ['apps', 'apiextensions.k8s.io', 'coordination.k8s.io'];

export function customResourceDef(spec: CustomResourceDefinitionSpec): ResourceDef {
  const singular = spec.singular ?? spec.kind.toLowerCase();
  return {
    group: spec.group,
    version: spec.version,
    plural: spec.plural,
    singular,
    kind: spec.kind,
    listKind: spec.listKind ?? `${spec.kind}List`,
    namespaced: spec.namespaced ?? true,
    shortNames: spec.shortNames ?? [],
    categories: spec.categories ?? [],
    verbs: CR_VERBS,
    builtin: false,
    statusSubresource: spec.subresources?.status ?? false,
    hasGeneration: true,
    returnDeletedObject: false,
    fields: {},
    schema: spec.schema,
    apiVersion: `${spec.group}/${spec.version}`,
    gvr: { group: spec.group, version: spec.version, resource: spec.plural },
  };
}

/** Looks resource definitions up by group/version/plural, short name, or string. */
export class ResourceRegistry {
  private readonly defs = new Map<string, ResourceDef>();

  constructor(defs: readonly ResourceDef[]) {
    for (const d of defs) this.add(d);
  }

  static key(group: string, version: string, plural: string): string {
    return `${group}/${version}/${plural}`;
  }

  add(def: ResourceDef): void {
    this.defs.set(ResourceRegistry.key(def.group, def.version, def.plural), def);
  }

  remove(def: ResourceDef): void {
    this.defs.delete(ResourceRegistry.key(def.group, def.version, def.plural));
  }

  get(group: string, version: string, plural: string): ResourceDef | undefined {
    return this.defs.get(ResourceRegistry.key(group, version, plural));
  }

  all(): ResourceDef[] {
    return [...this.defs.values()];
  }

  /** Resolves a {@link GvrLike}; throws a plain Error when unknown. */
  resolve(like: GvrLike): ResourceDef {
    if (typeof like === 'string') {
      const dot = like.indexOf('.');
      const name = dot >= 0 ? like.slice(0, dot) : like;
      const group = dot >= 0 ? like.slice(dot + 1) : undefined;
      const found = this.all().filter(
        (d) =>
          (group === undefined || d.group === group) &&
          (d.plural === name ||
            d.shortNames.includes(name) ||
            d.kind.toLowerCase() === name.toLowerCase() ||
            (d.singular !== '' && d.singular === name)),
      );
      const preferred = group === undefined ? (found.find((d) => d.group === '') ?? found[0]) : found[0];
      if (!preferred) throw new Error(`unknown resource ${JSON.stringify(like)}`);
      return preferred;
    }
    const plural = 'resource' in like ? like.resource : like.plural;
    const def = this.get(like.group, like.version, plural);
    if (!def) throw new Error(`unknown resource ${like.group || 'core'}/${like.version}/${plural}`);
    return def;
  }
}

/** The well-known built-in resources as {@link Gvr}s. */
export const gvrs = {
  pods: { group: '', version: 'v1', resource: 'pods' },
  configmaps: { group: '', version: 'v1', resource: 'configmaps' },
  secrets: { group: '', version: 'v1', resource: 'secrets' },
  services: { group: '', version: 'v1', resource: 'services' },
  namespaces: { group: '', version: 'v1', resource: 'namespaces' },
  nodes: { group: '', version: 'v1', resource: 'nodes' },
  events: { group: '', version: 'v1', resource: 'events' },
  deployments: { group: 'apps', version: 'v1', resource: 'deployments' },
  replicasets: { group: 'apps', version: 'v1', resource: 'replicasets' },
  leases: { group: 'coordination.k8s.io', version: 'v1', resource: 'leases' },
  customresourcedefinitions: { group: 'apiextensions.k8s.io', version: 'v1', resource: 'customresourcedefinitions' },
} as const satisfies Record<string, Gvr>;
