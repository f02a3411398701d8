/**
 * The compiled protobuf schema (issue #36) the emulator's encoder writes (the library's twin, from the same generated file): per message, its fields by number, each with what
 * encoding/json would emit for it (the JSON shape users get from the API server's JSON today).
 *
 * Presence (from the Go type and `omitempty`): `ptr` (a pointer: emitted exactly when present on the wire, zero
 * values included), `omit` (a non-pointer scalar, slice or map with `omitempty`: emitted when present and non-zero /
 * non-empty), `always` (emitted whatever the wire holds: a zero default when absent; every non-pointer struct is
 * `always`, since `omitempty` never drops a struct).
 */
import { KINDS, KUBERNETES_VERSION, MESSAGES, type SchemaRow } from './schema.generated.ts';

export { KUBERNETES_VERSION, type SchemaRow };

export type Presence = 'ptr' | 'omit' | 'always';

/** Kinds, as small integers for the decoder's switch. */
export const K = {
  string: 0,
  bytes: 1,
  int32: 2,
  int64: 3,
  bool: 4,
  double: 5,
  msg: 6,
  time: 7,
  microTime: 8,
  quantity: 9,
  intOrString: 10,
  fieldsV1: 11,
  raw: 12,
  duration: 13,
} as const;

export interface Field {
  readonly n: number;
  readonly json: string;
  readonly kind: number;
  readonly presence: Presence;
  readonly rep: boolean;
  readonly map: boolean;
  readonly inline: boolean;
  /** For kind msg: the message (for a map: its values' message). */
  msg: Message | undefined;
  /**
   * Its place in its message's JSON order ({@link Message.order}); an inline field's is its first member's, and
   * {@link rankEnd} its last's (a field of its own: the same).
   */
  rank: number;
  rankEnd: number;
}

export interface Message {
  readonly name: string;
  /** Fields by number (sparse). */
  readonly byNumber: (Field | undefined)[];
  /** In number order, as the encoder writes them. */
  readonly fields: Field[];
  /** In the Go struct's order, what kube-apiserver's JSON writes (the generated rows' order). */
  readonly inJsonOrder: Field[];
  /**
   * The JSON names of its members in the order the API server's JSON writes them (Go struct order, inline messages'
   * members in their place): the order of a decoded object's keys, whatever order the wire gave its fields in.
   */
  order: string[];
  /** By JSON name: its index in {@link order}. */
  rank: Map<string, number>;
  /** The `always` fields, inline messages' ones included, filled with defaults when absent. */
  always: Field[];
  /** JSON names of the repeated fields, inline messages' ones included. */
  lists: string[];
}

const compiled = new Map<string, Message>();
for (const [name, rows] of Object.entries(MESSAGES)) {
  const inJsonOrder = rows.map(([n, json, kind, presence, shape, , inline]): Field => ({
    n,
    json,
    kind: K[kind as keyof typeof K],
    presence,
    rep: shape === 'rep',
    map: shape === 'map',
    inline,
    msg: undefined,
    rank: -1,
    rankEnd: -1,
  }));
  const fields = [...inJsonOrder].sort((a, b) => a.n - b.n);
  const byNumber: (Field | undefined)[] = [];
  for (const f of fields) byNumber[f.n] = f;
  compiled.set(name, { name, byNumber, fields, inJsonOrder, order: [], rank: new Map(), always: [], lists: [] });
}
for (const [name, rows] of Object.entries(MESSAGES)) {
  const message = compiled.get(name)!;
  for (const row of rows) {
    if (row[5] === '') continue;
    const target = compiled.get(row[5]);
    if (!target) throw new Error(`schema: ${name}.${row[1]} refers to unknown message ${row[5]}`);
    message.byNumber[row[0]]!.msg = target;
  }
}
/** The JSON names of a message's members in JSON order, inline messages' members in their place. */
function orderOf(message: Message): string[] {
  return message.inJsonOrder.flatMap((f) => (f.inline ? orderOf(f.msg!) : [f.json]));
}
/** In JSON order (see {@link fillAlways} in values.ts: the defaults it adds follow the fields present). */
function alwaysOf(message: Message): Field[] {
  return message.inJsonOrder.flatMap((f) => (f.inline ? alwaysOf(f.msg!) : f.presence === 'always' ? [f] : []));
}
function listsOf(message: Message): string[] {
  return message.fields.flatMap((f) => (f.inline ? listsOf(f.msg!) : f.rep ? [f.json] : []));
}
for (const message of compiled.values()) {
  message.order = orderOf(message);
  message.order.forEach((json, i) => message.rank.set(json, i));
  let at = 0;
  for (const f of message.inJsonOrder) {
    f.rank = at;
    at += f.inline ? orderOf(f.msg!).length : 1;
    f.rankEnd = at - 1;
  }
  message.always = alwaysOf(message);
  message.lists = listsOf(message);
}

export function message(name: string): Message {
  const m = compiled.get(name);
  if (!m) throw new Error(`schema: no message ${name}`);
  return m;
}

export function hasMessage(name: string): boolean {
  return compiled.has(name);
}

/**
 * Whether the schema decodes the objects and lists of `kind` as served at `apiVersion` (`v1`, `apps/v1`,
 * `coordination.k8s.io/v1`: the packages generateSchema.ts read): a custom resource of the same kind name in
 * another group is not one.
 */
export function knowsKind(apiVersion: string, kind: string): boolean {
  return Object.hasOwn(KINDS, kind) && KINDS[kind] === apiVersion;
}

export function allMessages(): Message[] {
  return [...compiled.values()];
}
