import { K, message, type Field, type Message } from '../../../src/1-transport/protobuf/schema.ts';
import { KINDS as SCHEMA_KINDS } from '../../../src/1-transport/protobuf/schema.generated.ts';
import { seededRandom } from '../../../src/util/seededRandom.ts';

/**
 * Generated objects of any kind the protobuf schema knows (issue #36), as Go's encoding/json writes a value: fields
 * that are always written present, `omitempty` ones absent or non-zero, pointers absent or any value, nil lists and
 * maps `null`. Used by sameAsJson.spec.ts (protobuf and JSON give the same objects) and check.spec.ts (the walk).
 */
export type Json = Record<string, unknown>;
const MAX_DEPTH = 6;

/** A generated value of one Go type, as encoding/json writes it. */
export class Generator {
  private readonly random: () => number;
  constructor(seed: number) {
    this.random = seededRandom(seed);
  }
  private int(n: number): number {
    return Math.floor(this.random() * n);
  }
  private chance(p: number): boolean {
    return this.random() < p;
  }
  private pick<T>(values: readonly T[]): T {
    return values[this.int(values.length)]!;
  }
  private string(): string {
    return this.pick([
      '',
      'a',
      'app',
      'kube-system',
      'registry.example.com/shop:1.2',
      'é ünïcode ✓',
      'line\nbreak "quoted"',
      'x'.repeat(40),
    ]);
  }
  private time(micro: boolean): string {
    // 0001-01-01 … 9999-12-31, whole seconds (Time) or microseconds (MicroTime).
    const seconds = -62_135_596_800 + this.int(315_537_897_599);
    const text = new Date(seconds * 1000).toISOString().slice(0, 19);
    return micro ? `${text}.${String(this.int(1_000_000)).padStart(6, '0')}Z` : `${text}Z`;
  }

  /** One value of field `f`'s kind (not a list or map), `zero` allowed. */
  private scalar(f: Field, depth: number, zero: boolean): unknown {
    switch (f.kind) {
      case K.string:
        return zero ? this.string() : this.string() || 'v';
      case K.bytes:
        return Buffer.from(Array.from({ length: this.int(6) + (zero ? 0 : 1) }, () => this.int(256))).toString('base64');
      case K.int32:
        return (this.chance(0.3) ? -1 : 1) * this.int(2 ** 31 - 1) || (zero ? 0 : 1);
      case K.int64:
        return (this.chance(0.3) ? -1 : 1) * this.int(2 ** 53 - 1) || (zero ? 0 : 1);
      case K.bool:
        return zero ? this.chance(0.5) : true;
      case K.time:
      case K.microTime:
        return this.time(f.kind === K.microTime);
      case K.quantity:
        return this.pick(['0', '1', '250m', '1.5', '512Mi', '1Gi', '100k']);
      case K.intOrString:
        return this.chance(0.5) ? this.int(65536) : this.pick(['http', '50%', '8080a']);
      case K.fieldsV1:
        return this.pick([{}, { 'f:metadata': { 'f:labels': { '.': {} } } }, { 'k:{"name":"c"}': { 'f:x': {} } }]);
      case K.raw:
        // A RawExtension (ControllerRevision.data): any JSON value, `null` when empty.
        return this.pick([null, {}, { spec: { template: { metadata: { labels: { app: 'a' } } } } }, [1, 'x'], 'text', 2.5]);
      case K.msg:
        return this.message(f.msg!, depth + 1);
      default:
        throw new Error(`no generator for kind ${f.kind} (${f.json})`);
    }
  }

  /** A value of field `f` with its presence, or undefined for absent. */
  private value(f: Field, depth: number): unknown {
    const deep = depth >= MAX_DEPTH;
    if (f.rep || f.map) {
      // A nil list or map: `null` when always written, absent when omitempty; a non-empty one otherwise.
      if (deep || this.chance(0.5)) return f.presence === 'always' ? null : undefined;
      const n = 1 + this.int(3);
      if (f.rep) return Array.from({ length: n }, () => this.scalar(f, depth, true));
      // Keys sorted, as Go's encoding/json and a server's protobuf write a map (by code unit, as the emulator sorts).
      const entries = Array.from({ length: n }, (_, i): [string, unknown] => [`${this.string()}${i}`, this.scalar(f, depth, true)]);
      return Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    }
    if (f.presence === 'ptr') return deep || this.chance(0.5) ? undefined : this.scalar(f, depth, true);
    if (f.presence === 'omit') return deep || this.chance(0.5) ? undefined : this.scalar(f, depth, false);
    // Always written: a Time that is zero is `null` (creationTimestamp), a struct is written whole.
    if ((f.kind === K.time || f.kind === K.microTime) && (deep || this.chance(0.3))) return null;
    if (f.kind === K.msg) return this.message(f.msg!, depth + 1);
    if (deep) return f.kind === K.string ? '' : f.kind === K.bool ? false : f.kind === K.quantity ? '0' : 0;
    return this.scalar(f, depth, true);
  }

  message(msg: Message, depth: number): Json {
    const out: Json = {};
    // In Go struct order, as encoding/json writes a struct's fields (schema.ts's `inJsonOrder`).
    for (const f of msg.inJsonOrder) {
      if (f.inline) Object.assign(out, this.message(f.msg!, depth));
      else {
        const value = this.value(f, depth);
        if (value !== undefined) out[f.json] = value;
      }
    }
    return out;
  }
}

export function object(kind: string, seed: number): Json {
  const generated = new Generator(seed).message(message(kind), 0);
  const given: Json = { ...(generated.metadata as Json), name: `obj-${seed}`, namespace: `ns-${seed % 3}`, resourceVersion: String(seed) };
  // Metadata's keys in ObjectMeta's order, and `kind` before `apiVersion` (TypeMeta's order): what the server's JSON writes.
  const metadata = Object.fromEntries(message('ObjectMeta').order.flatMap((key) => (key in given ? [[key, given[key]]] : [])));
  return { kind, apiVersion: SCHEMA_KINDS[kind]!, ...generated, metadata };
}
