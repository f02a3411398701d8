/**
 * Lists: resourceVersion / resourceVersionMatch semantics, limit + continue
 * paging with etcd-compatible tokens, selectors, and the list encodings of
 * built-in kinds (02c) and custom resources (07e).
 */
import { decodeContinue, encodeContinue } from './continueToken.ts';
import { protobufList } from './protobuf/bodies.ts';
import type { ResourceDef } from './resources.ts';
import type { FieldSelector, LabelSelector } from './selectors.ts';
import { badRequest, CONTINUE_TOO_OLD, expired, invalidListOptions, malformedResourceVersion, tooLargeResourceVersion } from './status.ts';
import { builtinItemJson, type Collection, lowerBound, objectJson, partialJson, type Snapshot, type Store } from './store.ts';
import type { StoredObject } from './types.ts';
import { matchesFilter, type WatchFilter } from './watch.ts';

export interface ListParams {
  namespace: string | undefined;
  labels: LabelSelector;
  fields: FieldSelector;
  resourceVersion: string | undefined;
  resourceVersionMatch: string | undefined;
  limit: number;
  continueToken: string | undefined;
}

export interface ListResult {
  rv: number;
  items: StoredObject[];
  continueToken?: string;
  remainingItemCount?: number;
}

/** Parses a resourceVersion query value: undefined when empty, 500 like 06f when not an unsigned integer. */
export function parseRv(raw: string | undefined): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d+$/.test(raw)) throw malformedResourceVersion(raw);
  return Number(raw);
}

export function list(store: Store, coll: Collection, p: ListParams): ListResult {
  const def = coll.def;
  if (p.resourceVersionMatch !== undefined && p.resourceVersionMatch !== '') {
    if (p.continueToken) {
      throw invalidListOptions([
        { field: 'resourceVersionMatch', message: 'Forbidden: resourceVersionMatch is forbidden when continue is provided' },
      ]);
    }
    if (p.resourceVersion === undefined || p.resourceVersion === '') {
      throw invalidListOptions([
        { field: 'resourceVersionMatch', message: 'Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided' },
      ]);
    }
    if (p.resourceVersionMatch !== 'Exact' && p.resourceVersionMatch !== 'NotOlderThan') {
      throw invalidListOptions([
        {
          field: 'resourceVersionMatch',
          message: `Unsupported value: ${JSON.stringify(p.resourceVersionMatch)}: supported values: "Exact", "NotOlderThan"`,
        },
      ]);
    }
    if (p.resourceVersionMatch === 'Exact' && p.resourceVersion === '0') {
      throw invalidListOptions([
        { field: 'resourceVersionMatch', message: 'Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"' },
      ]);
    }
  }
  const rv = parseRv(p.resourceVersion);
  let snap: Snapshot;
  let start = '';
  let paging = p.limit > 0;
  if (p.continueToken) {
    if (rv !== undefined) throw badRequest('specifying resource version is not allowed when using continue');
    const token = decodeContinue(p.continueToken);
    start = token.start;
    if (token.rv === -1) snap = store.snapshot(coll, store.revision);
    else {
      const restart = encodeContinue({ rv: -1, start: token.start });
      snap = store.snapshot(coll, token.rv, () => expired(CONTINUE_TOO_OLD, restart));
    }
  } else if (rv === undefined) {
    snap = store.snapshot(coll, store.revision);
  } else if (rv === 0) {
    // "any": served from the cache, limit ignored (02h)
    snap = store.snapshot(coll, store.revision);
    paging = false;
  } else if (p.resourceVersionMatch === 'Exact' || (paging && p.resourceVersionMatch !== 'NotOlderThan')) {
    snap = store.snapshot(coll, rv);
  } else {
    // NotOlderThan (explicit, or legacy semantics without a limit): the latest state (04j)
    if (rv > store.revision) throw tooLargeResourceVersion(rv, store.revision);
    snap = store.snapshot(coll, store.revision);
  }

  const filter: WatchFilter = { namespace: p.namespace, labels: p.labels, fields: p.fields };
  const selective = p.labels.length > 0 || p.fields.length > 0;
  // Keys are `ns/name` for namespaced kinds; a namespaced list is the `ns/` prefix range.
  const prefix = def.namespaced && p.namespace !== undefined ? `${p.namespace}/` : '';
  const keys = snap.keys;
  let i = lowerBound(keys, prefix + start);
  const items: StoredObject[] = [];
  let lastKey: string | undefined;
  for (; i < keys.length; i++) {
    const key = keys[i]!;
    if (prefix && !key.startsWith(prefix)) break;
    if (paging && items.length >= p.limit) break;
    const obj = snap.get(key);
    if (selective && !matchesFilter(def, filter, obj)) continue;
    items.push(obj);
    lastKey = key;
  }
  const result: ListResult = { rv: snap.rv, items };
  if (paging && items.length >= p.limit && lastKey !== undefined) {
    // Anything left in range? Without a selector, counted by where the range ends (a page costs its own items, not the rest).
    let remaining = 0;
    let more = false;
    if (!selective) remaining = (prefix ? lowerBound(keys, rangeEnd(prefix)) : keys.length) - i;
    else
      for (let j = i; j < keys.length; j++) {
        const key = keys[j]!;
        if (prefix && !key.startsWith(prefix)) break;
        if (matchesFilter(def, filter, snap.get(key))) {
          more = true;
          break;
        }
      }
    if (remaining > 0 || more) {
      result.continueToken = encodeContinue({ rv: snap.rv, start: `${lastKey.slice(prefix.length)}\u0000` });
      // etcd counts the remaining keys only when there is no selector
      if (!selective) result.remainingItemCount = remaining;
    }
  }
  return result;
}

/** The first key after every key that starts with `prefix` (its last character, `/`, one up). */
function rangeEnd(prefix: string): string {
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}

/** The list body (with its trailing newline): built-in (02c) or custom-resource (07e) shape. */
export function encodeList(def: ResourceDef, r: ListResult, metadataOnly = false): string {
  if (metadataOnly) {
    // v1.20 copies resourceVersion and continue into a PartialObjectMetadataList, not remainingItemCount (10d).
    const meta: Record<string, unknown> = { resourceVersion: String(r.rv) };
    if (r.continueToken !== undefined) meta['continue'] = r.continueToken;
    // An empty one says `"items": null` (its Go slice is nil; full lists say `[]`), as v1.20 does.
    const items = r.items.length === 0 ? 'null' : `[${r.items.map(partialJson).join(',')}]`;
    return `{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":${JSON.stringify(meta)},"items":${items}}\n`;
  }
  if (def.builtin) {
    const meta: Record<string, unknown> = { resourceVersion: String(r.rv) };
    if (r.continueToken !== undefined) meta['continue'] = r.continueToken;
    if (r.remainingItemCount !== undefined) meta['remainingItemCount'] = r.remainingItemCount;
    const items = r.items.map(builtinItemJson).join(',');
    return `{"kind":"${def.listKind}","apiVersion":"${def.apiVersion}","metadata":${JSON.stringify(meta)},"items":[${items}]}\n`;
  }
  const meta: Record<string, unknown> = { continue: r.continueToken ?? '' };
  if (r.remainingItemCount !== undefined) meta['remainingItemCount'] = r.remainingItemCount;
  meta['resourceVersion'] = String(r.rv);
  const items = r.items.map(objectJson).join(',');
  return `{"apiVersion":"${def.apiVersion}","items":[${items}],"kind":"${def.listKind}","metadata":${JSON.stringify(meta)}}\n`;
}

/** The list body in protobuf (a built-in kind the schema knows, see protobuf/bodies.ts): ListMeta as the JSON list's. */
export function protobufListOf(def: ResourceDef, r: ListResult): Buffer {
  const meta: { resourceVersion: string; continue?: string; remainingItemCount?: number } = { resourceVersion: String(r.rv) };
  if (r.continueToken !== undefined) meta.continue = r.continueToken;
  if (r.remainingItemCount !== undefined) meta.remainingItemCount = r.remainingItemCount;
  return protobufList(def, meta, r.items);
}
