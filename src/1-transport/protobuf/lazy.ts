/**
 * Lazy protobuf objects (issue #36), as lazyJson.ts makes them from JSON: `metadata` (but for `managedFields`) and
 * short scalar members are decoded at once; every other member is an own enumerable accessor that decodes its
 * bytes on first read and then replaces itself with a plain data property (assigning to it does the same). The
 * object was walked by `checkMessage` (check.ts) first, so reading a member never fails and never differs from an eager decode.
 *
 * The decode is planned per message, once, from the schema (as check.ts's walk): a table by tag of what to do, so that
 * metadata's strings, times and maps of strings cost one varint and one table read each, and a lazy member's bytes
 * are noted without a lookup by name. Anything the plan does not name goes through values.ts's `field`, as before.
 *
 * A lazy object holds one copy of the bytes of its lazy fields (a one-byte-per-character string), never a view of
 * the frame or the page: a frame is a view of the socket's chunk or of the splitter's buffer, which is reused.
 */
import { VOUCHED_ANNOTATIONS, VOUCHED_LABELS, VOUCHED_OWNER_REFERENCES } from '../../0-model/isKubeObject.ts';
import { K, message, type Field, type Message } from './schema.ts';
import { decodeInto, DISORDERED, field, fillAlways, inOrder, one, timestamp } from './values.ts';
import { begin, buf, latin1, lengthEnd, pos, restore, save, seek, skip, str, stringValue, utf8, varint } from './wire.ts';
import { lazyAccessors } from '../../util/lazyAccessors.ts';
import { privateSlot } from '../../util/privateSlot.ts';

interface LazySource {
  readonly msg: Message;
  /** The bytes of the lazy fields, one character each. */
  readonly bytes: string;
  /** Values read from a frozen object, which cannot take them as data properties. */
  frozen?: Map<string, unknown>;
  /** The lazy members, in the order they were defined (often the plan's own array, shared). */
  readonly keys: readonly string[];
  /** Bit i set once `keys[i]` is read (a plan has at most {@link MAX_LAZY} lazy members). */
  read: number;
  /** How many members are unread. */
  unread: number;
  /**
   * By index in `keys`: each member's bytes, what a measure of size reads instead of decoding it; counted from `bytes`
   * on the first such measure (`memberSizes`), not per object on arrival: few objects are ever measured.
   */
  sizes?: readonly number[];
  /**
   * Metadata's members whose check the decode vouches for, as 2-source's decoder asks it (`VOUCHED_*` bits of
   * 0-model/isKubeObject.ts): present, lazy, and by their bytes well-formed when read (see {@link vouchedMembers}).
   */
  readonly vouched: number;
}

/** The most lazy members a plan keeps, one bit each in {@link LazySource.read}; the fields past them are decoded now. */
const MAX_LAZY = 31;

/**
 * Each lazy object's source, in a private field of the plain object itself rather than in a `WeakMap`: invisible to
 * its keys, symbols, spreading, `structuredClone` and deep equality, as a `WeakMap` entry is, but nothing for the
 * collector to trace as an ephemeron (a `WeakMap` of two entries per cached object cost ~4 µs an event in process).
 */
const sources = privateSlot<LazySource>();

function materialize(target: object, key: string): unknown {
  const source = sources.get(target);
  if (source === undefined)
    throw new TypeError(
      `member "${key}" of a lazily decoded object read on a copy of its property descriptors, which does not hold its bytes: ` +
        'copy the object by spreading, structuredClone or JSON instead',
    );
  if (source.frozen?.has(key)) return source.frozen.get(key);
  const saved = save();
  const bytes = bytesOf(source);
  begin(bytes, 0);
  const scratch: Record<string, unknown> = {};
  const end = bytes.length;
  // Metadata's small members are decoded together, on the first read of one (see TOGETHER).
  const together = source.msg === OBJECT_META && TOGETHER.has(key);
  let others: string[] | undefined;
  try {
    while (pos < end) {
      const tag = varint(end);
      const f = source.msg.byNumber[tag >>> 3];
      if (f === undefined) skip(tag & 7, end);
      else if (f.json === key) field(scratch, f, tag & 7, end);
      else if (together && TOGETHER.has(f.json) && untouched(target, source, f.json, accessorFor(f.json).get)) {
        if (!Object.hasOwn(scratch, f.json)) (others ??= []).push(f.json);
        field(scratch, f, tag & 7, end);
      } else skip(tag & 7, end);
    }
  } finally {
    restore(saved);
  }
  const value = scratch[key] ?? null;
  settle(target, key, value, source);
  if (others !== undefined) for (const other of others) settle(target, other, scratch[other] ?? null, source);
  return value;
}

const OBJECT_META = message('ObjectMeta');
/**
 * Metadata's members kept as bytes that are small (all but managedFields): the first read of one decodes the others
 * still unread in the same pass, so that a handler or a copy reading several (`stripManagedFields` copies metadata key
 * by key) pays one pass over the bytes, not one each.
 */
const TOGETHER = new Set(['labels', 'annotations', 'ownerReferences', 'finalizers']);

/**
 * The last source read and its bytes as a Buffer: an object's members are often read one after another (a copy of
 * metadata key by key, as `stripManagedFields` makes; a handler reading labels, then annotations), each read decoding
 * from the same bytes. One entry: what it keeps alive is one object's bytes.
 */
let lastSource: LazySource | undefined;
let lastBytes = Buffer.alloc(0);
function bytesOf(source: LazySource): Buffer {
  if (source !== lastSource) {
    lastBytes = Buffer.from(source.bytes, 'latin1');
    lastSource = source;
  }
  return lastBytes;
}

function settle(target: object, key: string, value: unknown, source: LazySource | undefined): void {
  const i = source === undefined ? -1 : source.keys.indexOf(key);
  if (i >= 0 && (source!.read & (1 << i)) === 0) {
    source!.read |= 1 << i;
    source!.unread--;
  }
  if (!Reflect.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true }) && source)
    (source.frozen ??= new Map()).set(key, value);
}

/** The protobuf bytes of `object`'s member `key` while it is unread, else undefined (see `unparsedText` for JSON). */
export function unreadProtobufBytes(object: object, key: string): number | undefined {
  const source = sources.get(object);
  const i = source === undefined ? -1 : source.keys.indexOf(key);
  return i < 0 || (source!.read & (1 << i)) !== 0 ? undefined : (source!.sizes ??= memberSizes(source!))[i];
}

/** Each member's bytes in `source.bytes` (tag included, every occurrence), by index in its keys. */
function memberSizes(source: LazySource): number[] {
  const sizes = new Array<number>(source.keys.length).fill(0);
  const saved = save();
  const bytes = Buffer.from(source.bytes, 'latin1');
  begin(bytes, 0);
  try {
    while (pos < bytes.length) {
      const start = pos;
      const tag = varint(bytes.length);
      skip(tag & 7, bytes.length);
      const i = source.keys.indexOf(source.msg.byNumber[tag >>> 3]?.json ?? '');
      if (i >= 0) sizes[i]! += pos - start;
    }
  } finally {
    restore(saved);
  }
  return sizes;
}

/** True when `object` is a lazily decoded protobuf object with members not read yet. */
export function hasUnreadProtobufMembers(object: object): boolean {
  return (sources.get(object)?.unread ?? 0) > 0;
}

const accessorFor = lazyAccessors(materialize, (target, key, value) => settle(target, key, value, sources.get(target)));
/** The getters of the members {@link vouchedMembers} answers for. */
const LABELS = accessorFor('labels').get;
const ANNOTATIONS = accessorFor('annotations').get;
const OWNER_REFERENCES = accessorFor('ownerReferences').get;

/**
 * A shallow copy of a lazily decoded protobuf object with `metadata` replaced, its unread members still unread (they
 * share the original's bytes); undefined for any other object (see `withMetadata` in lazyJson.ts).
 */
export function protobufWithMetadata(object: object, metadata: unknown): Record<string, unknown> | undefined {
  const source = sources.get(object);
  if (!source || source.frozen) return undefined;
  const copy: Record<string, unknown> = {};
  const keys: string[] = [];
  for (const key of Object.keys(object)) {
    const i = source.keys.indexOf(key);
    if (i >= 0 && (source.read & (1 << i)) === 0 && Object.getOwnPropertyDescriptor(object, key)!.get) {
      keys.push(key);
      Object.defineProperty(copy, key, accessorFor(key));
    } else copy[key] = key === 'metadata' ? metadata : (object as Record<string, unknown>)[key];
  }
  if (!Object.prototype.hasOwnProperty.call(copy, 'metadata')) copy.metadata = metadata;
  if (keys.length > 0) sources.stamp(copy, { msg: source.msg, bytes: source.bytes, keys, read: 0, unread: keys.length, vouched: 0 });
  return copy;
}

/**
 * Whether a field is kept as bytes: at the top, every message, list or map but metadata; in metadata, every list and map
 * but labels (annotations, ownerReferences, finalizers, managedFields). Its scalars (the store's key, resourceVersion,
 * the namespace index) are decoded on arrival, and so are its labels: their keys and values recur from object to object
 * (strings shared through wire.ts's cache), so decoded they hold less heap than their bytes would (measured: kept as
 * bytes too, a cached pod of the bench held 68 bytes more than before, without them 37 fewer).
 */
function isLazy(f: Field, top: boolean): boolean {
  return top ? f.json !== 'metadata' && (f.kind === K.msg || f.rep || f.map) : f.rep || (f.map && f.json !== 'labels');
}

/**
 * The members of metadata the decode can vouch for (0-model's `VOUCHED_*` bit by name), what 2-source's decoder would
 * otherwise read of every object: a map of strings (its values strings by the schema and the walk; a `__proto__` key,
 * which its decode defines as an own property, seen in its entries) and the owner references (their four strings are
 * `always` fields, written even when absent, their booleans booleans).
 */
const VOUCHABLE: Readonly<Record<string, { bit: number; map: boolean }>> = {
  labels: { bit: VOUCHED_LABELS, map: true },
  annotations: { bit: VOUCHED_ANNOTATIONS, map: true },
  ownerReferences: { bit: VOUCHED_OWNER_REFERENCES, map: false },
};

/** The bit of a lazy member of metadata the decode vouches for, by its field (0 for others). */
function vouchBit(f: Field): number {
  const known = Object.hasOwn(VOUCHABLE, f.json) ? VOUCHABLE[f.json] : undefined;
  if (known === undefined) return 0;
  if (known.map) return f.map && f.kind === K.string ? known.bit : 0;
  return f.rep && f.kind === K.msg && f.msg?.name === 'OwnerReference' ? known.bit : 0;
}

/** What the lazy decode does with a tag (field number and wire type). */
const Do = {
  /** Anything the plan does not name (an unknown field, a rarer kind, a wire type the check walk refused): `field`. */
  Field: 0,
  /** A lazy member: its bytes kept. */
  Lazy: 1,
  /** The top's metadata, decoded now by its own plan. */
  Metadata: 2,
  /** A string that is written when not empty (`omitempty`), through the short-string cache. */
  StringOmit: 3,
  /** The same for a string that rarely recurs (name, uid, resourceVersion): sliced fresh, past the cache. */
  UniqueOmit: 4,
  /** A Time or MicroTime, written whatever it holds. */
  Time: 5,
  MicroTime: 6,
  /** An entry of a map of strings. */
  StringEntry: 7,
} as const;
type Do = (typeof Do)[keyof typeof Do];

/** ObjectMeta's strings that are one per object: a cache slot would only evict the strings that do recur. */
const UNIQUE = new Set(['name', 'uid', 'resourceVersion']);

/** Per message and level, once, from the schema: what to do by tag, the field by tag, the lazy members in JSON order. */
interface Plan {
  readonly msg: Message;
  readonly actions: Uint8Array;
  readonly fields: (Field | undefined)[];
  /** By tag of a lazy field: its index in `keys`. */
  readonly lazyIndex: Int8Array;
  /** The lazy members' names, in JSON order (the message's `order`: Go struct order, what the server's JSON writes). */
  readonly keys: readonly string[];
  /** By index in `keys`: its rank in the message's JSON order. */
  readonly keyRanks: Int16Array;
  /** By tag of the top's metadata: its plan. */
  readonly metadata: Plan | undefined;
  /**
   * This message's objects, when its plan makes them (metadata: see {@link plainObjects}). Not the top's: a list's items
   * get `apiVersion` and `kind` after their decode (2-source's decoder), so a constructor would be sized without them
   * by its first objects, and every later object would grow a property array for them (measured: the sync's CPU up).
   */
  readonly Make: PlainObjects;
  /** By tag of a map of strings: its objects' constructor. */
  readonly maps: (PlainObjects | undefined)[];
  /** By tag (wire type 2) of a lazy member the decode vouches for: its `VOUCHED_*` bit; a map's entries are looked at. */
  readonly vouches: Uint8Array;
  /** The names of some of the lazy members, by the bits of those present (see {@link keysSeen}). */
  readonly keySets: Map<number, readonly string[]>;
}

export type PlainObjects = new () => Record<string, unknown>;

/**
 * A constructor of plain objects of its own: `Object.prototype` their prototype, nothing in them, nothing to tell them
 * from `{}` (keys, descriptors, prototype, `constructor`, spreading, `structuredClone`, deep equality). What differs is
 * V8's layout: `{}` has room for 4 properties and grows a property array 3 at a time (metadata's 10 properties and the
 * private field: 3 arrays, each a copy of the last), where a constructor's objects get room for 10, trimmed after its
 * first objects to what they held (slack tracking). One per message, level and map, so that each is sized by its own.
 * Only for objects whose every property is written by the decode itself (slack tracking ends after a few objects).
 */
export function plainObjects(): PlainObjects {
  const Make = function () {} as unknown as PlainObjects;
  Make.prototype = Object.prototype;
  return Make;
}

const plans = [new Map<Message, Plan>(), new Map<Message, Plan>()];
function planOf(msg: Message, top: boolean): Plan {
  let plan = plans[top ? 1 : 0]!.get(msg);
  if (plan !== undefined) return plan;
  const size = 8 * (msg.byNumber.length + 1);
  const actions = new Uint8Array(size);
  const fields = new Array<Field | undefined>(size);
  const lazyIndex = new Int8Array(size).fill(-1);
  const keys: string[] = [];
  const maps = new Array<PlainObjects | undefined>(size);
  const vouches = new Uint8Array(size);
  let metadata: Plan | undefined;
  for (const f of msg.inJsonOrder) {
    const tag = f.n * 8 + 2;
    fields[tag] = f;
    if (isLazy(f, top) && keys.length < MAX_LAZY) {
      for (let wireType = 0; wireType < 8; wireType++) {
        actions[f.n * 8 + wireType] = Do.Lazy;
        lazyIndex[f.n * 8 + wireType] = keys.length;
      }
      keys.push(f.json);
      if (!top) vouches[tag] = vouchBit(f);
    } else if (top && f.json === 'metadata' && f.kind === K.msg) {
      actions[tag] = Do.Metadata;
      metadata = planOf(f.msg!, false);
    } else if ((actions[tag] = valueAction(f)) === Do.StringEntry) maps[tag] = plainObjects();
  }
  const keyRanks = Int16Array.from(keys, (key) => msg.rank.get(key)!);
  plan = { msg, actions, fields, lazyIndex, keys, keyRanks, metadata, Make: plainObjects(), maps, vouches, keySets: new Map() };
  plans[top ? 1 : 0]!.set(msg, plan);
  return plan;
}

/** A length-delimited field's action when it is neither lazy nor metadata. */
function valueAction(f: Field): Do {
  if (f.inline) return Do.Field;
  if (f.map) return f.kind === K.string ? Do.StringEntry : Do.Field;
  if (f.rep) return Do.Field;
  if (f.kind === K.string && f.presence === 'omit') return UNIQUE.has(f.json) ? Do.UniqueOmit : Do.StringOmit;
  if (f.kind === K.time) return Do.Time;
  if (f.kind === K.microTime) return Do.MicroTime;
  return Do.Field;
}

/**
 * The object's fields from pos to `end` into `target`, lazily (the object was checked): the object, `target` itself or,
 * when its keys were not in JSON order, a new one (values.ts's `decodeInto`).
 */
export function decodeLazyInto(target: Record<string, unknown>, end: number, msg: Message, top = true): Record<string, unknown> {
  return decodePlanned(target, end, planOf(msg, top));
}

function decodePlanned(target: Record<string, unknown>, end: number, plan: Plan): Record<string, unknown> {
  const actions = plan.actions;
  /** The lazy members' bytes: from `first` to `upTo` while no more than {@link MAX_GAP} bytes part them, else `spans` (start, end pairs). */
  let first = -1;
  let upTo = -1;
  let spans: number[] | undefined;
  /** Bit i set once `plan.keys[i]` is seen. */
  let seen = 0;
  /** The highest JSON rank of the members decoded now, or DISORDERED (values.ts's `decodeFields`). */
  let last = -1;
  /** The `VOUCHED_*` bits of the members seen, and of those whose bytes the decode cannot vouch for. */
  let vouched = 0;
  let doubted = 0;
  while (pos < end) {
    const tagStart = pos;
    const whole = varint(end);
    // A tag over 32 bits is read by its low 32 bits, as `tag >>> 3` and `tag & 7` read it (and the check walk).
    const tag = whole >>> 0;
    const action = tag < actions.length ? (actions[tag]! as Do) : Do.Field;
    if (action === Do.Lazy) {
      const bit = plan.vouches[tag]!;
      if (bit !== 0) {
        if (bit === VOUCHED_OWNER_REFERENCES || plainEntry(end)) vouched |= bit;
        else doubted |= bit;
      }
      skip(tag & 7, end);
      const i = plan.lazyIndex[tag]!;
      if (first < 0) first = tagStart;
      else if (tagStart - upTo > MAX_GAP) (spans ??= [first, upTo]).push(tagStart, pos);
      else if (spans !== undefined) spans[spans.length - 1] = pos;
      upTo = pos;
      seen |= 1 << i;
    } else if (action === Do.Field) {
      const f = plan.msg.byNumber[tag >>> 3];
      if (f === undefined) skip(tag & 7, end);
      else {
        // An inline message's members may come in any order: put in order at the end.
        if (last !== DISORDERED) last = f.inline || f.rank < last ? DISORDERED : f.rankEnd;
        field(target, f, tag & 7, end);
      }
    } else {
      const e = lengthEnd(end);
      // An empty string is not written (`omitempty`): a server writes metadata's clusterName so, after annotations.
      if (last !== DISORDERED && (e !== pos || (action !== Do.StringOmit && action !== Do.UniqueOmit))) {
        const rank = plan.fields[tag]!.rank;
        last = rank < last ? DISORDERED : rank;
      }
      value(target, plan, tag, action, e);
      seek(e);
    }
  }
  if (first < 0) return fillAlways(target, plan.msg, undefined, last) === DISORDERED ? inOrder(target, plan.msg, undefined) : target;
  // In the plan's order (JSON's), every member or some: an array of names the plan shares.
  const keys = keysSeen(plan, seen);
  last = fillAlways(target, plan.msg, keys, last);
  const bytes = spans === undefined ? latin1(buf, first, upTo) : copyOf(spans);
  // The lazy members go last, unless a member decoded now follows one of them in JSON order (an Event's reason
  // follows its involvedObject, a Secret's type its data): then a new object takes every member in its place (decided
  // by ranks, one comparison an object).
  const object =
    last === DISORDERED || last > plan.keyRanks[31 - Math.clz32(seen & -seen)]! ? inOrder(target, plan.msg, { keys, define }) : target;
  sources.stamp(object, { msg: plan.msg, bytes, keys, read: 0, unread: keys.length, vouched: vouched & ~doubted });
  if (object === target) for (const key of keys) Object.defineProperty(target, key, accessorFor(key));
  return object;
}

/** Defines lazy member `key` of `target` (see {@link reorder}). */
function define(target: object, key: string): void {
  Object.defineProperty(target, key, accessorFor(key));
}

/**
 * The most bytes of other fields kept with the lazy members' bytes when they lie between two of them, instead of a second
 * span: a server writes metadata's clusterName (field 15, empty: 2 bytes) between finalizers and managedFields, which
 * would otherwise make every object's metadata two spans, an array and a Buffer to join them. A read skips those
 * fields (it decodes only the member read, and metadata's small members unread: never a field decoded on arrival), and
 * a measure counts only the members' own bytes.
 */
const MAX_GAP = 16;

/** The value of the varint at `p` (at most 4 bytes, ending before `end`) and where it ends (`afterVarint`), else -1. */
let afterVarint = 0;
function shortVarint(b: Buffer, p: number, end: number): number {
  let value = 0;
  for (let shift = 0; shift < 28 && p < end; shift += 7) {
    const byte = b[p++]!;
    value |= (byte & 0x7f) << shift;
    if (byte < 0x80) {
      afterVarint = p;
      return value;
    }
  }
  return -1;
}

/** `__proto__`'s bytes. */
const PROTO_KEY = Buffer.from('__proto__', 'latin1');

/**
 * Whether the map entry at pos (its length, then its fields; the walk checked it) is as a server writes it, its key (1)
 * and then its value (2) or nothing, and its key is not `__proto__`: its decode is then an ordinary key with a string
 * value. Anything else (a `__proto__` key, fields in another order or repeated, a tag or length of more bytes than a
 * server writes) is not vouched for, and 2-source's decoder reads the map to check it, as it reads a JSON object's.
 */
function plainEntry(end: number): boolean {
  const b = buf;
  const length = shortVarint(b, pos, end);
  if (length <= 0) return false;
  const e = afterVarint + length;
  let p = afterVarint;
  if (e > end || b[p] !== 0x0a) return false;
  const k = shortVarint(b, p + 1, e);
  if (k < 0 || afterVarint + k > e) return false;
  p = afterVarint;
  if (k === PROTO_KEY.length && b.compare(PROTO_KEY, 0, k, p, p + k) === 0) return false;
  p += k;
  if (p === e) return true;
  if (b[p] !== 0x12) return false;
  const v = shortVarint(b, p + 1, e);
  return v >= 0 && afterVarint + v === e;
}

/**
 * Which of `metadata`'s members (0-model's `VOUCHED_*` bits) pass 2-source's check without being read, as `metadata` is
 * now: those its decode vouched for that are still unread and still its own accessors (a member read, written, or
 * defined anew by any means is the decoder's to read, as any other object's). 0 for an object the decode did not make.
 */
export function vouchedMembers(metadata: Record<string, unknown>): number {
  const source = sources.get(metadata);
  const vouched = source === undefined ? 0 : source.vouched;
  if (vouched === 0) return 0;
  return (
    ((vouched & VOUCHED_LABELS) !== 0 && untouched(metadata, source!, 'labels', LABELS) ? VOUCHED_LABELS : 0) |
    ((vouched & VOUCHED_ANNOTATIONS) !== 0 && untouched(metadata, source!, 'annotations', ANNOTATIONS) ? VOUCHED_ANNOTATIONS : 0) |
    ((vouched & VOUCHED_OWNER_REFERENCES) !== 0 && untouched(metadata, source!, 'ownerReferences', OWNER_REFERENCES)
      ? VOUCHED_OWNER_REFERENCES
      : 0)
  );
}

/**
 * Whether member `key` was never read (a read hands out its value, which may then be changed: on a frozen object the
 * accessor stays) and is its own accessor still (a write, `defineProperty` or `delete` replaces it).
 */
function untouched(metadata: object, source: LazySource, key: string, getter: unknown): boolean {
  const i = source.keys.indexOf(key);
  return i >= 0 && (source.read & (1 << i)) === 0 && Reflect.getOwnPropertyDescriptor(metadata, key)?.get === getter;
}

/**
 * The names of the members seen (bits of `seen`), in the plan's order: one array per set of members, shared by the
 * plan's objects (a pod's metadata has no finalizers: its three lazy members were a new array each, and one more to
 * make it), up to {@link MAX_KEY_SETS} sets a plan; past them (members in every combination) a new array each.
 */
function keysSeen(plan: Plan, seen: number): readonly string[] {
  if (seen === 2 ** plan.keys.length - 1) return plan.keys;
  let keys = plan.keySets.get(seen);
  if (keys === undefined) {
    keys = seenIndices(seen, plan.keys.length).map((i) => plan.keys[i]!);
    if (plan.keySets.size < MAX_KEY_SETS) plan.keySets.set(seen, keys);
  }
  return keys;
}

/** The most sets of lazy members a plan keeps an array of names for (see {@link keysSeen}). */
const MAX_KEY_SETS = 64;

/** The indices of the members seen (their bits set in `seen`), in order. */
function seenIndices(seen: number, count: number): number[] {
  const indices: number[] = [];
  for (let i = 0; i < count; i++) if ((seen & (1 << i)) !== 0) indices.push(i);
  return indices;
}

/** A length-delimited value from pos to `e` (its length read) into `target`, by the plan's action for its tag. */
function value(target: Record<string, unknown>, plan: Plan, tag: number, action: Do, e: number): void {
  const f = plan.fields[tag]!;
  switch (action) {
    case Do.Metadata: {
      target[f.json] = decodePlanned(new plan.metadata!.Make(), e, plan.metadata!);
      return;
    }
    case Do.StringOmit: {
      const s = str(pos, e);
      if (s !== '') target[f.json] = s;
      else if (target[f.json] !== undefined) delete target[f.json]; // the last wins, an empty one too (values.ts's `field`)
      return;
    }
    case Do.UniqueOmit:
      if (e !== pos) target[f.json] = utf8(pos, e);
      else if (target[f.json] !== undefined) delete target[f.json];
      return;
    case Do.Time:
      target[f.json] = timestamp(e, false);
      return;
    case Do.MicroTime:
      target[f.json] = timestamp(e, true);
      return;
    default:
      return stringEntry(target, f, e, plan.maps[tag]!);
  }
}

/** A map entry of strings (key 1, value 2) into `target[f.json]` (a new map made by `Make`), as values.ts's `mapEntry` reads it. */
function stringEntry(target: Record<string, unknown>, f: Field, end: number, Make: PlainObjects): void {
  let key = '';
  let value: unknown = '';
  while (pos < end) {
    const tag = varint(end);
    if (tag === 0x0a) key = stringValue(end);
    else if (tag === 0x12) value = stringValue(end);
    else if (tag >>> 3 === 2) value = one(f, tag & 7, end);
    else skip(tag & 7, end);
  }
  const map = (target[f.json] ??= new Make()) as Record<string, unknown>;
  if (key === '__proto__') Object.defineProperty(map, key, { value, writable: true, enumerable: true, configurable: true });
  else map[key] = value;
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
export function decodeEagerInto(target: Record<string, unknown>, end: number, msg: Message): Record<string, unknown> {
  return decodeInto(target, end, msg);
}
