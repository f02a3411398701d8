/**
 * Lazy protobuf objects (issue #36), as lazyJson.ts makes them from JSON: `metadata` (but for `managedFields`) and
 * short scalar members are decoded at once; every other member is an own enumerable accessor that decodes its
 * bytes on first read and then replaces itself with a plain data property (assigning to it does the same). The
 * object was walked by `checkMessage` (check.ts) first, so reading a member never fails and never differs from an eager decode.
 *
 * A lazy object holds one copy of the bytes of its lazy fields (a one-byte-per-character string), never a view of
 * the frame or the page.
 */
import { K, type Field, type Message } from './schema.ts';
import { decodeInto, field, fillAlways } from './values.ts';
import { begin, buf, latin1, lengthEnd, pos, restore, save, seek, skip, varint } from './wire.ts';
import { lazyAccessors } from '../../util/lazyAccessors.ts';

interface LazySource {
  readonly msg: Message;
  /** The bytes of the lazy fields, one character each. */
  readonly bytes: string;
  /** Values read from a frozen object, which cannot take them as data properties. */
  frozen?: Map<string, unknown>;
  /** The bytes of each member not read yet (what a measure of size reads instead of decoding it). */
  readonly unread: Map<string, number>;
}

const sources = new WeakMap<object, LazySource>();

function materialize(target: object, key: string): unknown {
  const source = sources.get(target);
  if (source === undefined)
    throw new TypeError(
      `member "${key}" of a lazily decoded object read on a copy of its property descriptors, which does not hold its bytes: ` +
        'copy the object by spreading, structuredClone or JSON instead',
    );
  if (source.frozen?.has(key)) return source.frozen.get(key);
  const saved = save();
  const bytes = Buffer.from(source.bytes, 'latin1');
  begin(bytes, 0);
  const scratch: Record<string, unknown> = {};
  const end = bytes.length;
  try {
    while (pos < end) {
      const tag = varint(end);
      const f = source.msg.byNumber[tag >>> 3];
      if (f?.json === key) field(scratch, f, tag & 7, end);
      else skip(tag & 7, end);
    }
  } finally {
    restore(saved);
  }
  const value = scratch[key] ?? null;
  settle(target, key, value, source);
  return value;
}

function settle(target: object, key: string, value: unknown, source: LazySource | undefined): void {
  source?.unread.delete(key);
  if (!Reflect.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true }) && source)
    (source.frozen ??= new Map()).set(key, value);
}

/** The protobuf bytes of `object`'s member `key` while it is unread, else undefined (see `unparsedText` for JSON). */
export function unreadProtobufBytes(object: object, key: string): number | undefined {
  return sources.get(object)?.unread.get(key);
}

/** True when `object` is a lazily decoded protobuf object with members not read yet. */
export function hasUnreadProtobufMembers(object: object): boolean {
  return (sources.get(object)?.unread.size ?? 0) > 0;
}

const accessorFor = lazyAccessors(materialize, (target, key, value) => settle(target, key, value, sources.get(target)));

/**
 * A shallow copy of a lazily decoded protobuf object with `metadata` replaced, its unread members still unread (they
 * share the original's bytes); undefined for any other object (see `withMetadata` in lazyJson.ts).
 */
export function protobufWithMetadata(object: object, metadata: unknown): Record<string, unknown> | undefined {
  const source = sources.get(object);
  if (!source || source.frozen) return undefined;
  const copy: Record<string, unknown> = {};
  const unread = new Map<string, number>();
  for (const key of Object.keys(object)) {
    const bytes = source.unread.get(key);
    if (bytes !== undefined && Object.getOwnPropertyDescriptor(object, key)!.get) {
      unread.set(key, bytes);
      Object.defineProperty(copy, key, accessorFor(key));
    } else copy[key] = key === 'metadata' ? metadata : (object as Record<string, unknown>)[key];
  }
  if (!Object.prototype.hasOwnProperty.call(copy, 'metadata')) copy.metadata = metadata;
  if (unread.size > 0) sources.set(copy, { msg: source.msg, bytes: source.bytes, unread });
  return copy;
}

/** Whether a field is kept as bytes: at the top, every message, list or map but metadata; in metadata, managedFields. */
function isLazy(f: Field, top: boolean): boolean {
  return (top ? f.json !== 'metadata' : f.json === 'managedFields') && (f.kind === K.msg || f.rep || f.map);
}

/** The object's fields from pos to `end` into `target`, lazily (the object was checked). */
export function decodeLazyInto(target: Record<string, unknown>, end: number, msg: Message, top = true): void {
  const spans: number[] = [];
  const keys: string[] = [];
  const unread = new Map<string, number>();
  while (pos < end) {
    const tagStart = pos;
    const tag = varint(end);
    const f = msg.byNumber[tag >>> 3];
    if (f === undefined) skip(tag & 7, end);
    else if (isLazy(f, top)) {
      skip(tag & 7, end);
      spans.push(tagStart, pos);
      unread.set(f.json, (unread.get(f.json) ?? 0) + pos - tagStart);
      if (!keys.includes(f.json)) keys.push(f.json);
    } else if (top && f.json === 'metadata' && (tag & 7) === 2) {
      const e = lengthEnd(end);
      const meta: Record<string, unknown> = {};
      decodeLazyInto(meta, e, f.msg!, false);
      target.metadata = meta;
      seek(e);
    } else field(target, f, tag & 7, end);
  }
  fillAlways(target, msg, keys);
  if (keys.length === 0) return;
  sources.set(target, { msg, bytes: copyOf(spans), unread });
  for (const key of keys) Object.defineProperty(target, key, accessorFor(key));
}

/** The bytes of `spans` (start, end pairs), joined, as a one-byte string. */
function copyOf(spans: readonly number[]): string {
  let contiguous = true;
  let bytes = 0;
  for (let i = 0; i < spans.length; i += 2) {
    bytes += spans[i + 1]! - spans[i]!;
    if (i > 0 && spans[i] !== spans[i - 1]) contiguous = false;
  }
  if (contiguous) return latin1(buf, spans[0]!, spans[spans.length - 1]!);
  const joined = Buffer.allocUnsafe(bytes);
  let at = 0;
  for (let i = 0; i < spans.length; i += 2) at += buf.copy(joined, at, spans[i], spans[i + 1]);
  return latin1(joined, 0, bytes);
}

/** The object's fields from pos to `end`, all decoded now. */
export function decodeEagerInto(target: Record<string, unknown>, end: number, msg: Message): void {
  decodeInto(target, end, msg);
}
