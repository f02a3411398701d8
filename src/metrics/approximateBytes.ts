import { unparsedText } from '../1-transport/lazyJson.ts';
import { unreadProtobufBytes } from '../1-transport/protobuf/lazy.ts';

/** JSON bytes per protobuf byte of a Kubernetes object: about 1.55 (4,706 against 3,044 for the bench's pods, docs/performance.md). */
const JSON_BYTES_PER_PROTOBUF_BYTE = 1.55;

/**
 * About how many bytes `value` takes as JSON: string lengths (in UTF-16 code
 * units) plus punctuation, 8 per number. Iterative, so any depth is safe.
 * A measure to compare informers by, not the heap size (V8's objects take
 * roughly two to four times their JSON). A lazily decoded member that was
 * not read yet counts as its JSON text (protobuf: its bytes, times
 * {@link JSON_BYTES_PER_PROTOBUF_BYTE}) and stays unparsed.
 */
export function approximateBytes(value: unknown): number {
  let total = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    switch (typeof v) {
      case 'string':
        total += v.length + 2;
        break;
      case 'number':
        total += 8;
        break;
      case 'boolean':
        total += 5;
        break;
      case 'object':
        if (v === null) {
          total += 4;
        } else if (Array.isArray(v)) {
          total += 1 + v.length;
          for (const item of v) stack.push(item);
        } else {
          total += 1;
          for (const key of Object.keys(v)) {
            const text = unparsedText(v, key);
            if (text !== undefined) {
              total += key.length + 4 + text.length;
              continue;
            }
            // An unread protobuf member: its bytes, scaled to JSON's (not decoded to be measured).
            const bytes = unreadProtobufBytes(v, key);
            if (bytes !== undefined) {
              total += key.length + 4 + Math.round(bytes * JSON_BYTES_PER_PROTOBUF_BYTE);
              continue;
            }
            const item: unknown = (v as Record<string, unknown>)[key];
            if (item === undefined) continue;
            total += key.length + 4;
            stack.push(item);
          }
        }
        break;
      default:
        break;
    }
  }
  return total;
}
