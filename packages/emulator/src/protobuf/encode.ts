/**
 * The prototype's encoder (bench only): a JSON-shaped object to the bytes kube-apiserver (Go, gogo-protobuf)
 * would send for it: every non-pointer field written even when zero (strings, numbers, booleans, structs), pointer
 * fields when set, repeated fields one entry each, maps as entries sorted by key. Checked against the recordings
 * byte for byte (spec/bench/protobufPrototype.spec.ts); used to turn the bench workload's pods into protobuf.
 */
import { K, message, type Field, type Message } from './schema.ts';

/** `k8s\0`, the magic of every protobuf body and of a watch event's object. */
const MAGIC = [0x6b, 0x38, 0x73, 0x00] as const;

type Json = Record<string, unknown>;

/** Encoded bytes as a list of pieces (nested messages are written once, their pieces moved, never re-copied). */
class Out {
  readonly pieces: Uint8Array[] = [];
  length = 0;
  private scratch: number[] = [];
  byte(b: number): void {
    this.scratch.push(b);
  }
  private flush(): void {
    if (this.scratch.length === 0) return;
    this.pieces.push(Uint8Array.from(this.scratch));
    this.length += this.scratch.length;
    this.scratch = [];
  }
  bytes(bytes: Uint8Array): void {
    this.flush();
    this.pieces.push(bytes);
    this.length += bytes.length;
  }
  out(other: Out): void {
    other.flush();
    this.flush();
    for (const p of other.pieces) this.pieces.push(p);
    this.length += other.length;
  }
  done(): Buffer {
    this.flush();
    return Buffer.concat(this.pieces, this.length);
  }
  size(): number {
    this.flush();
    return this.length;
  }
}

function varint(out: Out, value: number): void {
  if (value < 0) {
    // Two's complement over 64 bits: ten bytes.
    let lo = value >>> 0;
    let hi = Math.floor(value / 2 ** 32) >>> 0;
    for (let i = 0; i < 9; i++) {
      out.byte((lo & 0x7f) | 0x80);
      lo = (lo >>> 7) | ((hi & 0x7f) << 25);
      hi >>>= 7;
    }
    out.byte(lo & 0x01);
    return;
  }
  while (value >= 0x80) {
    out.byte((value % 128) | 0x80);
    value = Math.floor(value / 128);
  }
  out.byte(value);
}

function bytesField(out: Out, n: number, bytes: Uint8Array | Out): void {
  varint(out, (n << 3) | 2);
  if (bytes instanceof Out) {
    varint(out, bytes.size());
    out.out(bytes);
  } else {
    varint(out, bytes.length);
    out.bytes(bytes);
  }
}

function stringField(out: Out, n: number, s: string): void {
  bytesField(out, n, Buffer.from(s, 'utf8'));
}

function scalarField(out: Out, n: number, v: number): void {
  varint(out, n << 3);
  varint(out, v);
}

function timestamp(value: unknown): Out {
  if (value === null || value === undefined) return new Out();
  const text = String(value);
  const ms = Date.parse(text);
  const seconds = Math.floor(ms / 1000);
  const fraction = /\.(\d+)Z$/.exec(text)?.[1] ?? '';
  const nanos = fraction === '' ? 0 : Number(fraction.padEnd(9, '0'));
  const out = new Out();
  scalarField(out, 1, seconds);
  scalarField(out, 2, nanos);
  return out;
}

function lengthDelimited(f: Field, value: unknown): Out {
  switch (f.kind) {
    case K.msg:
      return encodeMessage(f.msg!, (value ?? {}) as Json);
    case K.time:
    case K.microTime:
      return timestamp(value);
    case K.quantity: {
      const out = new Out();
      stringField(out, 1, String(value ?? '0'));
      return out;
    }
    case K.intOrString: {
      const out = new Out();
      const isString = typeof value === 'string';
      scalarField(out, 1, isString ? 1 : 0);
      scalarField(out, 2, isString ? 0 : Number(value ?? 0));
      stringField(out, 3, isString ? value : '');
      return out;
    }
    case K.fieldsV1:
    case K.raw: {
      const out = new Out();
      if (value !== null && value !== undefined) bytesField(out, 1, Buffer.from(JSON.stringify(value)));
      return out;
    }
    case K.duration:
      throw new Error('encode: durations are not supported by the prototype');
    default:
      throw new Error(`encode: kind ${f.kind}`);
  }
}

function writeOne(out: Out, f: Field, value: unknown): void {
  switch (f.kind) {
    case K.string:
      stringField(out, f.n, String(value ?? ''));
      return;
    case K.bytes:
      bytesField(out, f.n, Buffer.from(String(value ?? ''), 'base64'));
      return;
    case K.int32:
    case K.int64:
      scalarField(out, f.n, Number(value ?? 0));
      return;
    case K.bool:
      scalarField(out, f.n, value === true ? 1 : 0);
      return;
    case K.double: {
      varint(out, (f.n << 3) | 1);
      const b = Buffer.alloc(8);
      b.writeDoubleLE(Number(value ?? 0));
      out.bytes(b);
      return;
    }
    default:
      bytesField(out, f.n, lengthDelimited(f, value));
  }
}

/** Fields the schema adds to its Kubernetes version (generateSchema.ts): that version's servers never write them. */
const LATER = new Set(['ManagedFieldsEntry.subresource']);

export function encodeMessage(msg: Message, object: Json): Out {
  const out = new Out();
  for (const f of msg.fields) {
    if (LATER.has(`${msg.name}.${f.json}`) && !object[f.json]) continue;
    if (f.inline) {
      bytesField(out, f.n, encodeMessage(f.msg!, object));
      continue;
    }
    const value = object[f.json];
    if (f.map) {
      if (value === null || value === undefined) continue;
      const entries = Object.entries(value as Json).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      for (const [key, v] of entries) {
        const entry = new Out();
        stringField(entry, 1, key);
        writeOne(entry, { ...f, n: 2 }, v);
        bytesField(out, f.n, entry);
      }
    } else if (f.rep) {
      for (const element of (value ?? []) as unknown[]) writeOne(out, f, element);
    } else if (f.presence === 'ptr') {
      if (value !== undefined && (value !== null || f.kind === K.time || f.kind === K.microTime)) writeOne(out, f, value);
    } else writeOne(out, f, value);
  }
  return out;
}

/** `k8s\0` + runtime.Unknown{typeMeta, raw, contentEncoding "", contentType ""} of a JSON-shaped object. */
export function encodeEnvelope(object: Json): Buffer {
  const { apiVersion, kind, ...rest } = object;
  const typeMeta = new Out();
  stringField(typeMeta, 1, String(apiVersion ?? ''));
  stringField(typeMeta, 2, String(kind ?? ''));
  const unknown = new Out();
  bytesField(unknown, 1, typeMeta);
  bytesField(unknown, 2, encodeMessage(message(String(kind)), rest));
  stringField(unknown, 3, '');
  stringField(unknown, 4, '');
  const body = new Out();
  body.bytes(Uint8Array.from(MAGIC));
  body.out(unknown);
  return body.done();
}

/** One watch frame: a 4-byte big-endian length, then WatchEvent{type, object: RawExtension{raw: envelope}}. */
export function encodeWatchFrame(type: string, object: Json): Buffer {
  const rawExtension = new Out();
  bytesField(rawExtension, 1, encodeEnvelope(object));
  const event = new Out();
  stringField(event, 1, type);
  bytesField(event, 2, rawExtension);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(event.size(), 0);
  const frame = new Out();
  frame.bytes(length);
  frame.out(event);
  return frame.done();
}
