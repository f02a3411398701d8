/**
 * The compiled protobuf schema (issue #36) the transport's decoder walks: per message, its fields by number, each with what
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
}

export interface Message {
  readonly name: string;
  /** Fields by number (sparse). */
  readonly byNumber: (Field | undefined)[];
  /** In number order, as the encoder writes them. */
  readonly fields: Field[];
  /** The `always` fields, inline messages' ones included, filled with defaults when absent. */
  always: Field[];
  /** JSON names of the repeated fields, inline messages' ones included. */
  lists: string[];
}

const compiled = new Map<string, Message>();
for (const [name, rows] of Object.entries(MESSAGES)) {
  const fields = rows
    .map(([n, json, kind, presence, shape, , inline]): Field => ({
      n,
      json,
      kind: K[kind as keyof typeof K],
      presence,
      rep: shape === 'rep',
      map: shape === 'map',
      inline,
      msg: undefined,
    }))
    .sort((a, b) => a.n - b.n);
  const byNumber: (Field | undefined)[] = [];
  for (const f of fields) byNumber[f.n] = f;
  compiled.set(name, { name, byNumber, fields, always: [], lists: [] });
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
function alwaysOf(message: Message): Field[] {
  return message.fields.flatMap((f) => (f.inline ? alwaysOf(f.msg!) : f.presence === 'always' ? [f] : []));
}
function listsOf(message: Message): string[] {
  return message.fields.flatMap((f) => (f.inline ? listsOf(f.msg!) : f.rep ? [f.json] : []));
}
for (const message of compiled.values()) {
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
