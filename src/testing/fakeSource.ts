/**
 * What `fakeInformer` does to each marble value before its informer sees it: checks that it is a source event
 * (a test's mistake fails the test with a message naming the value and the helpers to use, not a TypeError deep in
 * the pipeline), drops a cluster-scoped resource's namespaces, and decodes every object with the decoder a real
 * informer's reflector uses (`decoder` in 2-source/decode.ts), so an object failing the resource's schema or of
 * another kind is reported on `errors$` and skipped, as a real informer does.
 */
import { InformerError } from '../0-model/errors.ts';
import { typeMetaOf } from '../0-model/metadata.ts';
import type { KubeObject } from '../0-model/objects.ts';
import { resourceName, type Resource } from '../0-model/resources.ts';
import { rawKey } from '../0-model/keys.ts';
import { decoder, isOtherKind, type Decoder } from '../2-source/decode.ts';
import type { SourceEvent } from '../2-source/sourceEvent.ts';
import { isRecord } from '../util/isRecord.ts';

const HELPERS = 'listed(), added(), modified(), deleted(), bookmark() or failure() from rx-informer/testing';
const OBJECT_EVENTS: ReadonlySet<unknown> = new Set(['added', 'modified', 'deleted']);

/** A short, bounded picture of a marble value for a message. */
function describeValue(value: unknown): string {
  if (value === undefined) return 'undefined (is its letter missing from the values map?)';
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = Object.prototype.toString.call(value);
  }
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

/** Why a marble value is not a source event, or undefined when it is one. */
function notASourceEvent(value: unknown): string | undefined {
  if (!isRecord(value)) return 'not a source event';
  const { type } = value;
  if (type === 'replace') {
    if (!Array.isArray(value.items)) return 'a replace without an items array';
    if (typeof value.resourceVersion !== 'string') return 'a list without a resourceVersion (listed(resourceVersion, ...objects))';
    const bad = value.items.findIndex((item) => !isRecord(item));
    return bad < 0 ? undefined : `a list whose item ${bad} is not an object`;
  }
  if (OBJECT_EVENTS.has(type))
    return isRecord(value.object) ? undefined : `${type === 'added' ? 'an' : 'a'} ${String(type)} event without an object`;
  if (type === 'error') return value.error instanceof InformerError ? undefined : 'an error event without an InformerError';
  if (type === 'deletedKey') return typeof value.key === 'string' ? undefined : 'a deletedKey event without a key';
  if (type === 'bookmark' || type === 'watch')
    return typeof value.resourceVersion === 'string' ? undefined : `a ${type} without a resourceVersion`;
  if (type === 'resync') return undefined;
  return 'not a source event (an object itself, or a value without a known type)';
}

/**
 * Checks one marble value: a source event is returned as it is; anything else throws a `Config` InformerError naming
 * the resource, the virtual time, the value and the helpers that make source events.
 */
export function checkedSourceEvent<T>(resource: Resource, value: unknown, now: number): SourceEvent<T> {
  const why = notASourceEvent(value);
  if (why === undefined) return value as SourceEvent<T>;
  throw new InformerError(
    'Config',
    `fakeInformer(${resourceName(resource)}): the marble value at ${now} ms is ${why}: ${describeValue(value)}; make each value with ${HELPERS}`,
    { phase: 'config' },
  );
}

/** The decoder of a real informer of this resource (no transform: fakeInformer takes none). */
export function fakeDecoder<T extends KubeObject>(resource: Resource<T>): Decoder<T> {
  return decoder(resource.schema, undefined, typeMetaOf(resource));
}

/**
 * One object through the decoder: decoded from a shallow copy (the decoder fills in a missing apiVersion and kind in
 * place, and the test's object is the test's); the test's own object is cached when the decoder accepts the copy as
 * it is (a schema that rebuilds objects caches what it rebuilt, as on a real informer).
 */
function decodeOne<T extends KubeObject>(decode: Decoder<T>, object: T, phase: 'list' | 'watch'): T | InformerError {
  const copy = { ...object };
  const decoded = decode(copy, phase);
  return decoded === copy ? object : decoded;
}

/**
 * A source event's objects decoded as a real informer's reflector decodes them: the errors first (each an error
 * event), then the event without the rejected objects. A list keeps its rejected keys (they exist on the server); a
 * watch event of another kind is dropped; a rejected DELETED still deletes its key (`deletedKey`).
 */
export function decodedSourceEvents<T extends KubeObject>(decode: Decoder<T>, event: SourceEvent<T>): SourceEvent<T>[] {
  if (event.type === 'replace') {
    const out: SourceEvent<T>[] = [];
    const items: T[] = [];
    const rejectedKeys: string[] = [...(event.rejectedKeys ?? [])];
    for (const item of event.items) {
      const decoded = decodeOne(decode, item, 'list');
      if (decoded instanceof InformerError) {
        out.push({ type: 'error', error: decoded });
        const key = rawKey(item);
        if (key !== undefined) rejectedKeys.push(key);
      } else items.push(decoded);
    }
    if (out.length === 0) return [event];
    out.push({ ...event, items, ...(rejectedKeys.length > 0 ? { rejectedKeys } : {}) });
    return out;
  }
  if (event.type !== 'added' && event.type !== 'modified' && event.type !== 'deleted') return [event];
  const decoded = decodeOne(decode, event.object, 'watch');
  if (!(decoded instanceof InformerError)) return decoded === event.object ? [event] : [{ ...event, object: decoded }];
  const key = rawKey(event.object);
  const deletion: SourceEvent<T>[] =
    event.type === 'deleted' && !isOtherKind(decoded) && key !== undefined
      ? [{ type: 'deletedKey', key, resourceVersion: event.resourceVersion }]
      : [];
  return [{ type: 'error', error: decoded }, ...deletion];
}
