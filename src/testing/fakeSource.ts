/**
 * What `fakeInformer` does to each marble value before its informer sees it: decodes every object with the decoder a real
 * informer's reflector uses (`decoder` in 2-source/decode.ts), so an object failing the resource's schema or of
 * another kind is reported on `errors$` and skipped, as a real informer does.
 */
import { InformerError } from '../0-model/errors.ts';
import { typeMetaOf } from '../0-model/metadata.ts';
import type { KubeObject } from '../0-model/objects.ts';
import type { Resource } from '../0-model/resources.ts';
import { rawKey } from '../0-model/keys.ts';
import { decoder, isOtherKind, type Decoder } from '../2-source/decode.ts';
import type { SourceEvent } from '../2-source/sourceEvent.ts';

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
