/**
 * A builder's mark on the nodes it may change in place. A node it has grown in place (V8 then keeps spare capacity
 * behind the array) carries `grown` instead, so that `done()` finds it and hands out an exact copy.
 */
interface Owner {
  readonly grown: Grown;
}

/** The mark of a node grown in place, so with spare capacity (see {@link Owner}). */
class Grown {}

function newOwner(): Owner {
  return { grown: new Grown() };
}

/**
 * A trie node, one array: `[dataMap, nodeMap, owner, k0, v0, t0, k1, v1, t1, …, child0, child1, …]`. From
 * {@link FIRST} on it holds the node's entries as key/value/tag triples, in the order of their 5-bit hash
 * fragment, then its children in the same order (a tag is what the writer gave with the value, or undefined:
 * the store's is a hash of the object's resourceVersion, read with the value where the object itself is cold);
 * `owner` is the builder allowed to change it in place, if any. Below the last level (shift > 30: all 32 hash bits used), keys whose hashes are equal go on
 * in a second trie under a per-process seeded hash; below its last level, a node with both bitmaps 0
 * holds them as plain pairs.
 *
 * One array rather than an object holding the bitmaps and an array of slots: a write copies the path
 * to its entry, and each node copied was two objects (an object of four fields and its slot array,
 * ~104 bytes besides the slots with Node's 8-byte pointers); it is one now (three slots more, 24 bytes),
 * and a lookup follows one reference a level fewer. The bitmaps are 32-bit integers (`|`, `^`, `<<`
 * give int32), stored as small integers.
 * @internal
 */
export type Node = unknown[];

/** Where the node's fields sit in its array. */
const DATA_MAP = 0;
const NODE_MAP = 1;
const OWNER = 2;
/** The first slot of the pairs and children. */
const FIRST = 3;
/** Slots an entry takes: its key, its value, its tag. */
const PAIR = 3;

const dataMapOf = (node: Node) => node[DATA_MAP] as number;
const nodeMapOf = (node: Node) => node[NODE_MAP] as number;

/** The node's keys and values, pairwise, then its children, without the tags (a copy: for tests and tools). @internal */
export function nodeSlots(node: Node): unknown[] {
  const out: unknown[] = [];
  const data = childrenAt(node);
  for (let i = FIRST; i < data; i += PAIR) out.push(node[i], node[i + 1]);
  for (let j = data; j < node.length; j++) out.push(node[j]);
  return out;
}

/** The node's tags, in the order of its entries (for tests). @internal */
export function nodeTags(node: Node): unknown[] {
  const out: unknown[] = [];
  for (let i = FIRST; i < childrenAt(node); i += PAIR) out.push(node[i + 2]);
  return out;
}

/** The node's bitmaps. @internal */
export function nodeMaps(node: Node): { readonly dataMap: number; readonly nodeMap: number } {
  return { dataMap: dataMapOf(node), nodeMap: nodeMapOf(node) };
}

/** Whether a builder grew `node` in place and has not yet trimmed it (for tests: no map handed out holds one). @internal */
export function nodeGrown(node: Node): boolean {
  return node[OWNER] instanceof Grown;
}

/** Where {@link PersistentMap.put} leaves the value its write replaced: written by the call, read right after it. */
export interface Replaced<V> {
  previous: V | undefined;
  /** The tag written with `previous` (undefined when none was, or when nothing was replaced). */
  previousTag?: unknown;
}

/**
 * A persistent (immutable) map from strings to values: a compressed hash array
 * mapped prefix tree (CHAMP, Steindorfer & Vinju 2015), built for the store.
 *
 * - `set`/`delete` return a new map and leave this one as it was; they copy
 *   only the path to the changed entry (O(log₃₂ n) nodes of ≤ 32 slots).
 * - Entries sit inline in their node's array (`[dataMap, nodeMap, owner, k0,
 *   v0, t0, k1, v1, t1, …, child0, child1, …]`, `t` a tag the writer may give
 *   with the value), with no per-entry wrapper: ~50 bytes
 *   an entry at 100,000 entries (heap used, objects and names aside: 52 built
 *   by a builder, 61 by one `set` after another; a `Store` of 100,000 objects
 *   in 1, 10 or 1,000 namespaces, 52, 43 and 56; measured when a node was an
 *   object around its slot array, ~10 bytes an entry more than one array),
 *   against ~170 for `immutable`'s Map and ~90 for a `Map` with composed keys
 *   (93 measured the same way).
 * - Keys are hashed with FNV-1a plus a final mix, every time: no hash cache
 *   to miss, no per-key allocation. The hash is fixed, so iteration order is
 *   the same in every process; keys whose hashes collide (names made to
 *   collide, by someone who can create objects) are spread by a second hash
 *   seeded at random per process, so they cannot pile up in one linear bucket.
 * - A {@link MapBuilder} applies a batch in place on nodes it created itself
 *   (a transient), so a relist of n objects allocates O(n) once: a node it owns
 *   grows in place, and `done()` trims each grown node to its length once.
 *
 * The layout is canonical: a subtree always holds at least two entries (a
 * delete that leaves one pulls it up into its parent), so equal contents have
 * equal shapes no matter the order of writes.
 */
export class PersistentMap<V> {
  /** @internal */
  readonly root: Node;
  readonly size: number;

  private constructor(root: Node, size: number) {
    this.root = root;
    this.size = size;
  }

  private static readonly EMPTY = new PersistentMap<never>(blank(FIRST, 0, 0, undefined), 0);

  static empty<V>(): PersistentMap<V> {
    return PersistentMap.EMPTY;
  }

  /** @internal */
  static of<V>(root: Node, size: number): PersistentMap<V> {
    return size === 0 ? PersistentMap.EMPTY : new PersistentMap<V>(root, size);
  }

  get(key: string): V | undefined {
    return lookup(this.root, key, 0, key.length, hashString(key)) as V | undefined;
  }

  /** `get(text.slice(start, end))`, without making that string. */
  getIn(text: string, start: number, end: number): V | undefined {
    return lookup(this.root, text, start, end, hashRange(text, start, end)) as V | undefined;
  }

  has(key: string): boolean {
    return lookup(this.root, key, 0, key.length, hashString(key)) !== undefined;
  }

  /**
   * A map with `key` set to `value` (this one, when it already was, with the same `tag`). `value` must not be
   * `undefined`. `tag` is kept beside the value (see {@link put}).
   */
  set(key: string, value: V, tag?: unknown): PersistentMap<V> {
    edit.added = false;
    const root = insert(this.root, 0, key, hashString(key), value, tag, undefined);
    edit.previous = undefined;
    edit.previousTag = undefined;
    return root === this.root ? this : new PersistentMap<V>(root, this.size + (edit.added ? 1 : 0));
  }

  /**
   * {@link set}, also telling what `key` held before (`replaced.previous`, undefined when nothing) and the tag
   * written with it (`replaced.previousTag`): one walk down the trie where `get` then `set` would make two, and
   * the tag is read from the trie's node, which the walk has just read, not from the old value.
   */
  put(key: string, value: V, replaced: Replaced<V>, tag?: unknown): PersistentMap<V> {
    edit.added = false;
    edit.previous = undefined;
    edit.previousTag = undefined;
    const root = insert(this.root, 0, key, hashString(key), value, tag, undefined);
    replaced.previous = edit.previous as V | undefined;
    replaced.previousTag = edit.previousTag;
    edit.previous = undefined;
    edit.previousTag = undefined;
    return root === this.root ? this : new PersistentMap<V>(root, this.size + (edit.added ? 1 : 0));
  }

  /** A map without `key` (this one, when it had none). */
  delete(key: string): PersistentMap<V> {
    const root = remove(this.root, 0, key, hashString(key), undefined);
    return root === this.root ? this : PersistentMap.of<V>(root, this.size - 1);
  }

  /** A builder that starts from this map; the map itself never changes. */
  edit(): MapBuilder<V> {
    return new MapBuilder<V>(this);
  }

  forEach(fn: (value: V, key: string) => void): void {
    walk(this.root, fn as (value: unknown, key: string) => void);
  }

  *entries(): IterableIterator<[string, V]> {
    for (const [key, value] of pairs(this.root)) yield [key, value as V];
  }

  *keys(): IterableIterator<string> {
    for (const [key] of pairs(this.root)) yield key;
  }

  *values(): IterableIterator<V> {
    for (const [, value] of pairs(this.root)) yield value as V;
  }

  [Symbol.iterator](): IterableIterator<[string, V]> {
    return this.entries();
  }
}

/**
 * Writes a batch into a map in place, on nodes it owns (ones it created or
 * already copied), copying a shared node once at most. A node it owns gains
 * a key in place (where a `set` copies it), so V8 gives its array spare room;
 * `done()` replaces each node so grown by an exact copy, and hands back the
 * result as a persistent map of the same contents and shape as one `set` after
 * another would make. The builder may go on from there, and never changes a
 * map it has handed out.
 */
export class MapBuilder<V> {
  /** The map handed out last (or started from): `done()` returns it again when nothing changed since. */
  private base: PersistentMap<V>;
  private root: Node;
  private count: number;
  private owner: Owner = newOwner();

  constructor(from: PersistentMap<V>) {
    this.base = from;
    this.root = from.root;
    this.count = from.size;
  }

  get size(): number {
    return this.count;
  }

  get(key: string): V | undefined {
    return lookup(this.root, key, 0, key.length, hashString(key)) as V | undefined;
  }

  set(key: string, value: V, tag?: unknown): this {
    edit.added = false;
    this.root = insert(this.root, 0, key, hashString(key), value, tag, this.owner);
    edit.previous = undefined;
    edit.previousTag = undefined;
    if (edit.added) this.count++;
    return this;
  }

  delete(key: string): this {
    edit.removed = false;
    this.root = remove(this.root, 0, key, hashString(key), this.owner);
    if (edit.removed) this.count--;
    return this;
  }

  /** The map as written so far (the one it started from, when nothing changed). */
  done(): PersistentMap<V> {
    if (this.root === this.base.root) return this.base;
    this.root = trimmed(this.root, this.owner);
    // Nodes owned so far now belong to the map handed out: later writes copy them.
    this.owner = newOwner();
    this.base = PersistentMap.of<V>(this.root, this.count);
    this.root = this.base.root;
    return this.base;
  }
}

const BITS = 5;
const LAST_SHIFT = 30;

/**
 * What the last `insert` or `remove` did: added a key (rather than replacing
 * a value), removed one, and the value an insert replaced (for `put`). Read right
 * after the call: a builder's in-place writes keep the root's identity, so the root cannot tell.
 */
const edit: { added: boolean; removed: boolean; previous: unknown; previousTag: unknown } = {
  added: false,
  removed: false,
  previous: undefined,
  previousTag: undefined,
};
// (`previous` is cleared after every insert, so that no replaced value stays reachable from here.)

/** The second hash's seed: random per process, so collisions cannot be prepared for it. */
const SEED = crypto.getRandomValues(new Uint32Array(1))[0]! | 0;

/** A seeded 32-bit hash (a multiply-xorshift per code unit, murmur3's finalizer), for keys whose {@link hashString} collides. */
export function seededHash(key: string): number {
  return seededHashRange(key, 0, key.length);
}

/** {@link seededHash} of `text.slice(start, end)`. */
function seededHashRange(text: string, start: number, end: number): number {
  let h = SEED ^ (end - start);
  for (let i = start; i < end; i++) {
    h = Math.imul(h ^ text.charCodeAt(i), 0x5bd1e995);
    h ^= h >>> 15;
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** The hash a trie level uses: the fixed one, or in the collision trie (`deep`) the seeded one. */
function hashFor(key: string, deep: boolean): number {
  return deep ? seededHash(key) : hashString(key);
}

/** 32-bit FNV-1a over UTF-16 code units, then murmur3's finalizer so every bit depends on every character. */
export function hashString(key: string): number {
  return hashRange(key, 0, key.length);
}

/** {@link hashString} of `text.slice(start, end)`. */
function hashRange(text: string, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

function bitCount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}

function bitOf(hash: number, shift: number): number {
  return 1 << ((hash >>> shift) & 31);
}

/** Slot of the pair for `bit` (its key; the value follows). */
function dataSlot(node: Node, bit: number): number {
  return FIRST + PAIR * bitCount(dataMapOf(node) & (bit - 1));
}

/** Slot of the child for `bit`. */
function nodeSlot(node: Node, bit: number): number {
  return FIRST + PAIR * bitCount(dataMapOf(node)) + bitCount(nodeMapOf(node) & (bit - 1));
}

/** Whether the stored key `slot` is `text.slice(start, end)`. */
function keyIs(slot: unknown, text: string, start: number, end: number): boolean {
  if (slot === text) return start === 0 && end === text.length;
  return typeof slot === 'string' && slot.length === end - start && text.startsWith(slot, start);
}

/** The value of the key `text.slice(start, end)` (whose hash is `hash`), without making that string. */
function lookup(root: Node, text: string, start: number, end: number, hash: number): unknown {
  let node = root;
  let deep = false;
  for (let shift = 0; ; shift += BITS) {
    if (shift > LAST_SHIFT) {
      if (deep) return collisionGet(node, text, start, end);
      // Every bit of the fixed hash agreed: go on in the collision trie.
      deep = true;
      hash = seededHashRange(text, start, end);
      shift = 0;
    }
    const bit = bitOf(hash, shift);
    if (dataMapOf(node) & bit) {
      const i = dataSlot(node, bit);
      return keyIs(node[i], text, start, end) ? node[i + 1] : undefined;
    }
    if ((nodeMapOf(node) & bit) === 0) return undefined;
    node = node[nodeSlot(node, bit)] as Node;
  }
}

function collisionGet(node: Node, text: string, start: number, end: number): unknown {
  for (let i = FIRST; i < node.length; i += PAIR) if (keyIs(node[i], text, start, end)) return node[i + 1];
  return undefined;
}

/** Whether `owner` (a builder's) may change `node` in place: it made or copied it, and maybe grew it. */
function owns(node: Node, owner: Owner | undefined): owner is Owner {
  return owner !== undefined && (node[OWNER] === owner || node[OWNER] === owner.grown);
}

/** `node` itself when `owner` may change it in place, else a copy that `owner` may. */
function writable(node: Node, owner: Owner | undefined): Node {
  if (owns(node, owner)) return node;
  const copy = node.slice();
  copy[OWNER] = owner;
  return copy;
}

/** Replaces one slot: in place on an owned node, else on a copy. */
function withSlot(node: Node, slot: number, value: unknown, owner: Owner | undefined): Node {
  const out = writable(node, owner);
  out[slot] = value;
  return out;
}

/** The entry whose key is at slot `i` with a new value and tag: `node` itself when both are the same. */
function withEntry(node: Node, i: number, value: unknown, tag: unknown, owner: Owner | undefined): Node {
  edit.previous = node[i + 1];
  edit.previousTag = node[i + 2];
  if (node[i + 1] === value && node[i + 2] === tag) return node;
  const out = writable(node, owner);
  out[i + 1] = value;
  out[i + 2] = tag;
  return out;
}

/** A new node of `length` slots (its header included) with these bitmaps, its pairs and children to be filled in. */
function blank(length: number, dataMap: number, nodeMap: number, owner: Owner | undefined): Node {
  const node = new Array<unknown>(length);
  node[DATA_MAP] = dataMap;
  node[NODE_MAP] = nodeMap;
  node[OWNER] = owner;
  return node;
}

function insert(
  node: Node,
  shift: number,
  key: string,
  hash: number,
  value: unknown,
  tag: unknown,
  owner: Owner | undefined,
  deep = false,
): Node {
  if (shift > LAST_SHIFT)
    return deep ? collisionSet(node, key, value, tag, owner) : insert(node, 0, key, seededHash(key), value, tag, owner, true);
  const bit = bitOf(hash, shift);
  if (dataMapOf(node) & bit) {
    const i = dataSlot(node, bit);
    const here = node[i] as string;
    if (here === key) return withEntry(node, i, value, tag, owner);
    edit.added = true;
    const child = pair(here, hashFor(here, deep), node[i + 1], node[i + 2], key, hash, value, tag, shift + BITS, owner, deep);
    return owns(node, owner) ? dataToChildInPlace(node, bit, i, child, owner) : dataToChild(node, bit, i, child, owner);
  }
  if (nodeMapOf(node) & bit) {
    const j = nodeSlot(node, bit);
    const child = node[j] as Node;
    const changed = insert(child, shift + BITS, key, hash, value, tag, owner, deep);
    return changed === child ? node : withSlot(node, j, changed, owner);
  }
  edit.added = true;
  const i = dataSlot(node, bit);
  if (owns(node, owner)) return addInPlace(node, bit, i, key, value, tag, owner);
  const out = blank(node.length + PAIR, dataMapOf(node) | bit, nodeMapOf(node), owner);
  for (let s = FIRST; s < i; s++) out[s] = node[s];
  out[i] = key;
  out[i + 1] = value;
  out[i + 2] = tag;
  for (let s = i; s < node.length; s++) out[s + PAIR] = node[s];
  return out;
}

/** A node holding two entries whose hashes agree below `shift`. */
function pair(
  k1: string,
  h1: number,
  v1: unknown,
  t1: unknown,
  k2: string,
  h2: number,
  v2: unknown,
  t2: unknown,
  shift: number,
  owner: Owner | undefined,
  deep: boolean,
): Node {
  if (shift > LAST_SHIFT) {
    if (deep) return pairNode(0, 0, owner, k1, v1, t1, k2, v2, t2);
    return pair(k1, seededHash(k1), v1, t1, k2, seededHash(k2), v2, t2, 0, owner, true);
  }
  const b1 = bitOf(h1, shift);
  const b2 = bitOf(h2, shift);
  if (b1 === b2) {
    const node = blank(FIRST + 1, 0, b1, owner);
    node[FIRST] = pair(k1, h1, v1, t1, k2, h2, v2, t2, shift + BITS, owner, deep);
    return node;
  }
  // Pairs are ordered by fragment (unsigned: bit 31 is negative as a number).
  return b1 >>> 0 < b2 >>> 0 ? pairNode(b1 | b2, 0, owner, k1, v1, t1, k2, v2, t2) : pairNode(b1 | b2, 0, owner, k2, v2, t2, k1, v1, t1);
}

/** A node of two entries. (Every node is made by {@link blank}: one kind of array at every site that reads them.) */
function pairNode(
  dataMap: number,
  nodeMap: number,
  owner: Owner | undefined,
  k1: string,
  v1: unknown,
  t1: unknown,
  k2: string,
  v2: unknown,
  t2: unknown,
): Node {
  const node = blank(FIRST + 2 * PAIR, dataMap, nodeMap, owner);
  node[FIRST] = k1;
  node[FIRST + 1] = v1;
  node[FIRST + 2] = t1;
  node[FIRST + 3] = k2;
  node[FIRST + 4] = v2;
  node[FIRST + 5] = t2;
  return node;
}

/** Replaces the entry at slot `i` (for `bit`) by a child node. */
function dataToChild(node: Node, bit: number, i: number, child: Node, owner: Owner | undefined): Node {
  const dataMap = dataMapOf(node) ^ bit;
  const nodeMap = nodeMapOf(node) | bit;
  const out = blank(node.length - PAIR + 1, dataMap, nodeMap, owner);
  const at = FIRST + PAIR * bitCount(dataMap) + bitCount(nodeMap & (bit - 1));
  let s = FIRST;
  for (let o = FIRST; o < node.length; o++) {
    if (o >= i && o < i + PAIR) continue;
    if (s === at) out[s++] = child;
    out[s++] = node[o];
  }
  if (s === at) out[s] = child;
  return out;
}

/**
 * {@link insert}'s new entry at slot `i` (for `bit`), written into a node the builder owns: the array grows by three
 * slots, where a copy would make a new array for every key a node gains (one a key, a few dozen slots each: most of
 * what a first list allocated). V8 grows the array's store with spare room, which {@link trimmed} drops in `done()`.
 */
function addInPlace(node: Node, bit: number, i: number, key: string, value: unknown, tag: unknown, owner: Owner): Node {
  const end = node.length;
  node.push(undefined, undefined, undefined);
  for (let s = end - 1; s >= i; s--) node[s + PAIR] = node[s];
  node[i] = key;
  node[i + 1] = value;
  node[i + 2] = tag;
  node[DATA_MAP] = dataMapOf(node) | bit;
  node[OWNER] = owner.grown;
  return node;
}

/** {@link dataToChild} in a node the builder owns: the slots move down, the array shrinks by two (spare room to trim). */
function dataToChildInPlace(node: Node, bit: number, i: number, child: Node, owner: Owner): Node {
  const dataMap = dataMapOf(node) ^ bit;
  const nodeMap = nodeMapOf(node) | bit;
  const at = FIRST + PAIR * bitCount(dataMap) + bitCount(nodeMap & (bit - 1));
  const end = node.length;
  // Before the child: the slots after the entry, moved down over it; after the child, one slot less down.
  for (let o = i + PAIR; o < at + PAIR; o++) node[o - PAIR] = node[o];
  node[at] = child;
  for (let o = at + PAIR; o < end; o++) node[o - PAIR + 1] = node[o];
  for (let k = 1; k < PAIR; k++) node.pop();
  node[DATA_MAP] = dataMap;
  node[NODE_MAP] = nodeMap;
  node[OWNER] = owner.grown;
  return node;
}

/**
 * The builder's trie with every node it grew in place replaced by an exact copy (`slice` allocates the array's length,
 * no spare room): the garbage is about the trie's size once, and a map handed out keeps no slack. Walks only the
 * nodes `owner` owns (those it wrote since the last `done()`); their parents are owned too, so are changed in place.
 */
function trimmed(node: Node, owner: Owner): Node {
  for (let j = childrenAt(node); j < node.length; j++) {
    const child = node[j] as Node;
    if (owns(child, owner)) node[j] = trimmed(child, owner);
  }
  if (node[OWNER] !== owner.grown) return node;
  const copy = node.slice();
  copy[OWNER] = owner;
  return copy;
}

/** Replaces the child at slot `j` (for `bit`) by one entry. */
function childToData(node: Node, bit: number, j: number, key: unknown, value: unknown, tag: unknown, owner: Owner | undefined): Node {
  const dataMap = dataMapOf(node) | bit;
  const nodeMap = nodeMapOf(node) ^ bit;
  const out = blank(node.length - 1 + PAIR, dataMap, nodeMap, owner);
  const at = FIRST + PAIR * bitCount(dataMap & (bit - 1));
  let s = FIRST;
  for (let o = FIRST; o < node.length; o++) {
    if (o === j) continue;
    if (s === at) {
      out[s++] = key;
      out[s++] = value;
      out[s++] = tag;
    }
    out[s++] = node[o];
  }
  if (s === at) {
    out[s++] = key;
    out[s++] = value;
    out[s] = tag;
  }
  return out;
}

function collisionSet(node: Node, key: string, value: unknown, tag: unknown, owner: Owner | undefined): Node {
  for (let i = FIRST; i < node.length; i += PAIR) if (node[i] === key) return withEntry(node, i, value, tag, owner);
  edit.added = true;
  const out = blank(node.length + PAIR, 0, 0, owner);
  for (let s = FIRST; s < node.length; s++) out[s] = node[s];
  out[node.length] = key;
  out[node.length + 1] = value;
  out[node.length + 2] = tag;
  return out;
}

/** `node` without the entry at slot `i` (its key, value and tag), with these bitmaps: a new node. */
function withoutPair(node: Node, i: number, dataMap: number, nodeMap: number, owner: Owner | undefined): Node {
  const out = blank(node.length - PAIR, dataMap, nodeMap, owner);
  for (let s = FIRST, o = FIRST; o < node.length; o++) if (o < i || o >= i + PAIR) out[s++] = node[o];
  return out;
}

/** `node` without `key`: the same node when it had no such key. A child left with one pair is pulled up. */
function remove(node: Node, shift: number, key: string, hash: number, owner: Owner | undefined, deep = false): Node {
  if (shift > LAST_SHIFT && !deep) return remove(node, 0, key, seededHash(key), owner, true);
  if (shift > LAST_SHIFT) {
    for (let i = FIRST; i < node.length; i += PAIR) {
      if (node[i] !== key) continue;
      edit.removed = true;
      return withoutPair(node, i, 0, 0, owner);
    }
    return node;
  }
  const bit = bitOf(hash, shift);
  if (dataMapOf(node) & bit) {
    const i = dataSlot(node, bit);
    if (node[i] !== key) return node;
    edit.removed = true;
    return withoutPair(node, i, dataMapOf(node) ^ bit, nodeMapOf(node), owner);
  }
  if ((nodeMapOf(node) & bit) === 0) return node;
  const j = nodeSlot(node, bit);
  const child = node[j] as Node;
  const changed = remove(child, shift + BITS, key, hash, owner, deep);
  if (changed === child) return node;
  // A child never holds fewer than two entries: one left moves up here.
  if (nodeMapOf(changed) === 0 && changed.length === FIRST + PAIR) {
    return childToData(node, bit, j, changed[FIRST], changed[FIRST + 1], changed[FIRST + 2], owner);
  }
  return withSlot(node, j, changed, owner);
}

/** Where a node's children begin: after its pairs (a collision node, both bitmaps 0, has pairs only). */
function childrenAt(node: Node): number {
  const dataMap = dataMapOf(node);
  return dataMap === 0 && nodeMapOf(node) === 0 ? node.length : FIRST + PAIR * bitCount(dataMap);
}

function walk(node: Node, fn: (value: unknown, key: string) => void): void {
  const data = childrenAt(node);
  for (let i = FIRST; i < data; i += PAIR) fn(node[i + 1], node[i] as string);
  for (let j = data; j < node.length; j++) walk(node[j] as Node, fn);
}

function* pairs(node: Node): Generator<[string, unknown]> {
  const data = childrenAt(node);
  for (let i = FIRST; i < data; i += PAIR) yield [node[i] as string, node[i + 1]];
  for (let j = data; j < node.length; j++) yield* pairs(node[j] as Node);
}
