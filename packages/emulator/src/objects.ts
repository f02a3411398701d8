/**
 * Object semantics shared by the HTTP handlers and the programmatic API:
 * create / update / patch / delete with kube-apiserver's validation, metadata
 * bookkeeping (uid, resourceVersion, generation, creationTimestamp), finalizers,
 * status subresources and custom-resource schemas.
 */
import { randomUUID } from 'node:crypto';
import { clone, deepEqual, isPlainObject, jsonPatch, mergePatch, orderKeys, sortKeysDeep } from './json.ts';
import type { ResourceDef, ResourceRegistry } from './resources.ts';
import { prune, validate } from './schema.ts';
import { alreadyExists, badRequest, conflict, invalid, notFound, unsupportedMediaType, type StatusCause } from './status.ts';
import { type Collection, type HistoryEvent, objectKey, type Store } from './store.ts';
import type { StoredObject, StoredObjectMeta } from './types.ts';

/**
 * A core Secret's `stringData` is write-only, as on kube-apiserver: each value is folded into `data` (the
 * base64 of its UTF-8, over a `data` value of the same key) and `stringData` is not stored, so reads, lists
 * and watch events never carry it. Anything but a map of strings is invalid (422).
 */
export function foldStringData(def: Pick<ResourceDef, 'builtin' | 'group' | 'plural' | 'kind'>, obj: StoredObject): StoredObject {
  if (!def.builtin || def.group !== '' || def.plural !== 'secrets' || !('stringData' in obj)) return obj;
  const { stringData, ...rest } = obj;
  if (stringData === null || stringData === undefined) return rest as StoredObject;
  if (!isPlainObject(stringData) || Object.values(stringData).some((v) => typeof v !== 'string')) {
    const name = metaOf(obj).name ?? '';
    throw invalid(def.kind, def.group, name, [
      { reason: 'FieldValueInvalid', message: 'Invalid value: must be a map of strings', field: 'stringData' },
    ]);
  }
  const entries = Object.entries(stringData as Record<string, string>);
  if (entries.length === 0) return rest as StoredObject;
  const data = isPlainObject(rest['data']) ? (rest['data'] as Record<string, unknown>) : {};
  const folded = Object.fromEntries(entries.map(([key, value]) => [key, Buffer.from(value, 'utf8').toString('base64')]));
  return { ...rest, data: { ...data, ...folded } } as StoredObject;
}

const META_ORDER = [
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
];

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and " +
  "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is " +
  "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start " +
  "and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

export function nowTimestamp(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

const GENERATE_CHARS = 'bcdfghjklmnpqrstvwxz2456789';
function randomSuffix(): string {
  let s = '';
  for (let i = 0; i < 5; i++) s += GENERATE_CHARS[Math.floor(Math.random() * GENERATE_CHARS.length)];
  return s;
}

export function metaOf(obj: StoredObject): StoredObjectMeta {
  return isPlainObject(obj.metadata) ? obj.metadata : {};
}

export type PatchType = 'merge' | 'strategic' | 'json';

export function patchTypeOf(contentType: string | undefined): PatchType {
  const ct = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  switch (ct) {
    case 'application/merge-patch+json':
      return 'merge';
    case 'application/strategic-merge-patch+json':
      return 'strategic';
    case 'application/json-patch+json':
      return 'json';
    default:
      throw unsupportedMediaType(ct);
  }
}

export interface UpdateOptions {
  /** PUT/PATCH …/status: only the status changes. */
  subresource?: 'status';
  /** Programmatic writes: spec and status in one write, even with a status subresource. */
  whole?: boolean;
}

export interface DeleteResult {
  /** The object as it was deleted (resourceVersion = deletion revision), or with deletionTimestamp if pending. */
  object: StoredObject;
  /** True when finalizers keep the object around (deletionTimestamp set, MODIFIED event). */
  pending: boolean;
}

export interface ObjectsOptions {
  autoCreateNamespaces: boolean;
  /** Called when a CustomResourceDefinition object is created or deleted via the API. */
  onCrd?: (event: 'created' | 'deleted', crd: StoredObject) => void;
}

export class Objects {
  private readonly store: Store;
  private readonly registry: ResourceRegistry;
  private readonly opts: ObjectsOptions;

  constructor(store: Store, registry: ResourceRegistry, opts: ObjectsOptions) {
    this.store = store;
    this.registry = registry;
    this.opts = opts;
  }

  private nsDef(): ResourceDef {
    return this.registry.get('', 'v1', 'namespaces')!;
  }

  // --- reads ------------------------------------------------------------------

  find(def: ResourceDef, namespace: string | undefined, name: string): StoredObject | undefined {
    return this.store.collection(def).items.get(objectKey(def, namespace, name));
  }

  get(def: ResourceDef, namespace: string | undefined, name: string): StoredObject {
    const obj = this.find(def, namespace, name);
    if (!obj) throw notFound(ref(def), name);
    return obj;
  }

  // --- shaping ----------------------------------------------------------------

  /** Canonical form: kind/apiVersion set, metadata keys ordered, defaults applied, key order as the server's. */
  private shape(def: ResourceDef, obj: StoredObject): StoredObject {
    const meta = orderKeys({ ...metaOf(obj) }, META_ORDER);
    const withMeta: StoredObject = { ...obj, kind: def.kind, apiVersion: def.apiVersion, metadata: meta };
    if (!def.builtin) return sortKeysDeep(withMeta);
    return def.normalize ? def.normalize(withMeta) : orderKeys(withMeta, ['kind', 'apiVersion', 'metadata']);
  }

  private checkBody(def: ResourceDef, body: unknown): StoredObject {
    if (!isPlainObject(body)) throw badRequest(`the body of the request was not a ${def.kind} object`);
    const b = body as StoredObject;
    if (b.kind !== undefined && b.kind !== '' && b.kind !== def.kind) {
      throw badRequest(`the kind in the body (${String(b.kind)}) does not match the expected kind (${def.kind})`);
    }
    if (b.apiVersion !== undefined && b.apiVersion !== '' && b.apiVersion !== def.apiVersion) {
      throw badRequest(`the API version in the data (${String(b.apiVersion)}) does not match the expected API version (${def.apiVersion})`);
    }
    if (b.metadata !== undefined && !isPlainObject(b.metadata)) throw badRequest('metadata must be an object');
    return clone(b);
  }

  private validateCommon(def: ResourceDef, obj: StoredObject, name: string): void {
    const causes: StatusCause[] = [];
    const meta = metaOf(obj);
    const label = def.plural === 'namespaces';
    if (!(label ? DNS_LABEL : DNS_SUBDOMAIN).test(name) || name.length > (label ? 63 : 253)) {
      causes.push({
        reason: 'FieldValueInvalid',
        message: `Invalid value: ${JSON.stringify(name)}: ${label ? LABEL_MSG : SUBDOMAIN_MSG}`,
        field: 'metadata.name',
      });
    }
    for (const field of ['labels', 'annotations'] as const) {
      const m = meta[field];
      if (m === undefined) continue;
      if (!isPlainObject(m) || Object.values(m).some((v) => typeof v !== 'string')) {
        causes.push({
          reason: 'FieldValueInvalid',
          message: `Invalid value: ${JSON.stringify(m)}: must be a map of strings`,
          field: `metadata.${field}`,
        });
      }
    }
    if (meta.finalizers !== undefined && (!Array.isArray(meta.finalizers) || meta.finalizers.some((f) => typeof f !== 'string'))) {
      causes.push({ reason: 'FieldValueInvalid', message: 'Invalid value: must be a list of strings', field: 'metadata.finalizers' });
    }
    if (!def.builtin && def.schema) causes.push(...validate(def.schema, obj));
    if (causes.length) throw invalid(def.kind, def.group, name, causes);
  }

  private prepareCustom(def: ResourceDef, obj: StoredObject): StoredObject {
    return def.builtin || !def.schema ? obj : (prune(def.schema, obj, true) as StoredObject);
  }

  private ensureNamespace(namespace: string): void {
    const nsDef = this.nsDef();
    if (this.find(nsDef, undefined, namespace)) return;
    if (!this.opts.autoCreateNamespaces) throw notFound(ref(nsDef), namespace);
    this.create(nsDef, undefined, { metadata: { name: namespace } });
  }

  // --- writes -----------------------------------------------------------------

  create(def: ResourceDef, namespace: string | undefined, body: unknown): StoredObject {
    const obj = this.prepareCustom(def, foldStringData(def, this.checkBody(def, body)));
    const meta: StoredObjectMeta = { ...metaOf(obj) };
    if (def.namespaced) {
      if (meta.namespace && namespace && meta.namespace !== namespace) {
        throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
      namespace = namespace || meta.namespace || 'default';
      meta.namespace = namespace;
    } else {
      delete meta.namespace;
      namespace = undefined;
    }
    if (!meta.name && meta.generateName) meta.name = `${meta.generateName}${randomSuffix()}`;
    const name = meta.name;
    if (!name) {
      throw invalid(def.kind, def.group, '', [
        { reason: 'FieldValueRequired', message: 'Required value: name or generateName is required', field: 'metadata.name' },
      ]);
    }
    obj.metadata = meta;
    this.validateCommon(def, obj, name);
    if (def.namespaced) this.ensureNamespace(namespace!);
    const coll = this.store.collection(def);
    const key = objectKey(def, namespace, name);
    if (coll.items.has(key)) throw alreadyExists(ref(def), name);
    delete meta.resourceVersion;
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    meta.uid = randomUUID();
    if (def.hasGeneration) meta.generation = 1;
    else delete meta.generation;
    meta.creationTimestamp = nowTimestamp();
    const rv = this.store.nextRevision();
    meta.resourceVersion = String(rv);
    const stored = this.shape(def, obj);
    this.store.commit(coll, rv, 'ADDED', key, stored, undefined);
    if (def.plural === 'customresourcedefinitions') this.opts.onCrd?.('created', stored);
    return stored;
  }

  /**
   * PUT. `subresource: 'status'` replaces only the status. For kinds with a status
   * subresource, a main PUT keeps the stored status.
   */
  update(def: ResourceDef, namespace: string | undefined, name: string, body: unknown, opts: UpdateOptions = {}): StoredObject {
    const obj = this.checkBody(def, body);
    const meta = metaOf(obj);
    if (meta.name !== undefined && meta.name !== name) {
      throw badRequest(`the name of the object (${meta.name}) does not match the name on the URL (${name})`);
    }
    if (def.namespaced && meta.namespace && namespace && meta.namespace !== namespace) {
      throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    const coll = this.store.collection(def);
    const key = objectKey(def, namespace, name);
    const existing = coll.items.get(key);
    if (!existing) throw notFound(ref(def), name);
    const oldMeta = metaOf(existing);
    if (meta.resourceVersion && meta.resourceVersion !== oldMeta.resourceVersion) throw conflict(ref(def), name);

    let next: StoredObject;
    if (opts.subresource === 'status') {
      next = { ...clone(existing), status: obj['status'] };
      if (obj['status'] === undefined) delete next['status'];
    } else {
      next = obj;
      if (def.statusSubresource && !opts.whole) {
        if (existing['status'] !== undefined) next['status'] = clone(existing['status']);
        else delete next['status'];
      }
      const m: StoredObjectMeta = { ...metaOf(next) };
      m.name = name;
      if (def.namespaced) m.namespace = namespace;
      else delete m.namespace;
      m.uid = oldMeta.uid;
      m.creationTimestamp = oldMeta.creationTimestamp;
      if (oldMeta.deletionTimestamp) {
        m.deletionTimestamp = oldMeta.deletionTimestamp;
        m.deletionGracePeriodSeconds = oldMeta.deletionGracePeriodSeconds;
      } else {
        delete m.deletionTimestamp;
        delete m.deletionGracePeriodSeconds;
      }
      if (oldMeta.generation !== undefined) m.generation = oldMeta.generation;
      else delete m.generation;
      next.metadata = m;
    }
    next = this.prepareCustom(def, foldStringData(def, next));
    this.validateCommon(def, next, name);
    return this.write(def, coll, key, existing, next);
  }

  /** Writes `next` over `existing`: generation, no-op detection, finalizer-completed deletion. */
  private write(def: ResourceDef, coll: Collection, key: string, existing: StoredObject, next: StoredObject): StoredObject {
    const oldMeta = metaOf(existing);
    const meta: StoredObjectMeta = { ...metaOf(next), resourceVersion: oldMeta.resourceVersion };
    next.metadata = meta;
    if (def.hasGeneration && specChanged(def, existing, next)) meta.generation = (oldMeta.generation ?? 0) + 1;
    const shaped = this.shape(def, next);
    if (deepEqual(shaped, existing)) return existing; // no-op: no new revision, no event
    const rv = this.store.nextRevision();
    if (meta.deletionTimestamp && !meta.finalizers?.length) {
      // The last finalizer is gone: the object is deleted now.
      const last = this.shape(def, { ...next, metadata: { ...meta, resourceVersion: String(rv) } });
      this.store.commit(coll, rv, 'DELETED', key, last, existing);
      return last;
    }
    meta.resourceVersion = String(rv);
    const stored = this.shape(def, next);
    this.store.commit(coll, rv, 'MODIFIED', key, stored, existing);
    return stored;
  }

  patch(
    def: ResourceDef,
    namespace: string | undefined,
    name: string,
    type: PatchType,
    patchBody: unknown,
    opts: UpdateOptions = {},
  ): StoredObject {
    const existing = this.get(def, namespace, name);
    let patched: unknown;
    if (type === 'json') patched = jsonPatch(existing, patchBody);
    else {
      if (!isPlainObject(patchBody)) throw badRequest('the body of a merge patch must be a JSON object');
      patched = mergePatch(existing, patchBody);
    }
    if (!isPlainObject(patched)) throw badRequest('the patch did not produce an object');
    const result = patched as StoredObject;
    const meta = { ...metaOf(result) };
    const requestedRv = type === 'json' ? undefined : getPath(patchBody, ['metadata', 'resourceVersion']);
    // A resourceVersion in the patch is a precondition; otherwise the patch applies to the current object.
    const oldRv = metaOf(existing).resourceVersion;
    if (typeof requestedRv === 'string' && requestedRv !== '' && requestedRv !== oldRv) throw conflict(ref(def), name);
    meta.resourceVersion = oldRv;
    result.metadata = meta;
    return this.update(def, namespace, name, result, opts);
  }

  delete(
    def: ResourceDef,
    namespace: string | undefined,
    name: string,
    options: { preconditions?: { uid?: string; resourceVersion?: string } } = {},
  ): DeleteResult {
    const coll = this.store.collection(def);
    const key = objectKey(def, namespace, name);
    const existing = coll.items.get(key);
    if (!existing) throw notFound(ref(def), name);
    const oldMeta = metaOf(existing);
    const pre = options.preconditions;
    if (pre?.uid && pre.uid !== oldMeta.uid) {
      throw conflict(ref(def), name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${oldMeta.uid}`);
    }
    if (pre?.resourceVersion && pre.resourceVersion !== oldMeta.resourceVersion) {
      throw conflict(
        ref(def),
        name,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${oldMeta.resourceVersion}`,
      );
    }
    if (oldMeta.finalizers?.length) {
      if (oldMeta.deletionTimestamp) return { object: existing, pending: true };
      const rv = this.store.nextRevision();
      const meta: StoredObjectMeta = {
        ...oldMeta,
        resourceVersion: String(rv),
        deletionTimestamp: nowTimestamp(),
        deletionGracePeriodSeconds: 0,
      };
      if (def.hasGeneration) meta.generation = (oldMeta.generation ?? 0) + 1;
      const stored = this.shape(def, { ...existing, metadata: meta });
      this.store.commit(coll, rv, 'MODIFIED', key, stored, existing);
      return { object: stored, pending: true };
    }
    if (def.plural === 'namespaces') this.deleteNamespaceContents(name);
    if (def.plural === 'customresourcedefinitions') this.opts.onCrd?.('deleted', existing);
    const rv = this.store.nextRevision();
    const last = this.shape(def, { ...existing, metadata: { ...oldMeta, resourceVersion: String(rv) } });
    this.store.commit(coll, rv, 'DELETED', key, last, existing);
    return { object: last, pending: false };
  }

  /** Namespace deletion cascades at once (the real server goes through Terminating). */
  private deleteNamespaceContents(namespace: string): void {
    for (const def of this.registry.all()) {
      if (!def.namespaced) continue;
      const coll = this.store.collection(def);
      for (const key of [...coll.sortedKeys()]) {
        if (!key.startsWith(`${namespace}/`)) continue;
        const obj = coll.items.get(key)!;
        this.forceDelete(coll, key, obj);
      }
    }
  }

  /** Deletes regardless of finalizers (cascades). */
  forceDelete(coll: Collection, key: string, obj: StoredObject): HistoryEvent {
    const rv = this.store.nextRevision();
    const last = this.shape(coll.def, { ...obj, metadata: { ...metaOf(obj), resourceVersion: String(rv) } });
    return this.store.commit(coll, rv, 'DELETED', key, last, obj);
  }
}

export function ref(def: ResourceDef): { group: string; resource: string; kind: string } {
  return { group: def.group, resource: def.plural, kind: def.kind };
}

function getPath(value: unknown, keys: string[]): unknown {
  let cur = value;
  for (const k of keys) {
    if (!isPlainObject(cur)) return undefined;
    cur = cur[k];
  }
  return cur;
}

/** Whether anything but metadata (and status, when it is a subresource) changed. */
function specChanged(def: ResourceDef, a: StoredObject, b: StoredObject): boolean {
  const strip = (o: StoredObject): Record<string, unknown> => {
    const { metadata: _m, kind: _k, apiVersion: _a, ...rest } = o;
    if (def.statusSubresource || def.builtin) delete rest['status'];
    return rest;
  };
  return !deepEqual(strip(a), strip(b));
}
