/**
 * The prototype protobuf decoder of issue #36, step 1, kept for the figures of docs/performance.md ("Protobuf, step
 * 1"), measured by bench/micro/protobuf.ts. Everything the transport now has is read from its home,
 * src/1-transport/protobuf: the wire reader (wire.ts), the values in their JSON shape and the checked walk
 * (values.ts, check.ts), the lazy objects (lazy.ts), the envelope and an object's identity (decode.ts), the frame splitter
 * (frames.ts). What stays here is what only step 1 measured:
 *
 * - `eager`: the decoders specialised per message (codegen.ts), everything now, into the JSON shape users get today;
 * - `lazy`: metadata now but for managedFields, every other top-level member decoded on first read, with no walk of
 *   the object on arrival (a bad member throws when it is read);
 * - `checked`: the transport's rule, the whole object walked on arrival (`checkMessage`), then lazy;
 * - `peekNameNamespace`: a sharded informer's drop decision, metadata.name and .namespace, the rest skipped by length.
 */
import { compileDecoders, type MessageDecoder } from './codegen.ts';
import { envelope, identity, watchEvent } from '../../src/1-transport/protobuf/decode.ts';
import { FrameSplitter } from '../../src/1-transport/protobuf/frames.ts';
import { decodeLazyInto } from '../../src/1-transport/protobuf/lazy.ts';
import { K, allMessages, message, type Field } from '../../src/1-transport/protobuf/schema.ts';
import { checkMessage } from '../../src/1-transport/protobuf/check.ts';
import { field, lengthDelimited } from '../../src/1-transport/protobuf/values.ts';
import {
  begin,
  fail,
  int64,
  lengthEnd,
  pos,
  ProtobufError,
  release,
  seek,
  skip,
  str,
  stringValue,
  varint,
} from '../../src/1-transport/protobuf/wire.ts';

export { MAGIC, ProtobufError } from '../../src/1-transport/protobuf/wire.ts';

type Mode = 'eager' | 'lazy' | 'checked';

/** The envelope (`k8s\0` + runtime.Unknown) from pos to `end`, its object decoded by `mode`. */
function decodeObject(end: number, mode: Mode): Record<string, unknown> {
  const { apiVersion, kind, rawStart, rawEnd } = envelope(end);
  const object: Record<string, unknown> = { apiVersion, kind };
  const msg = message(kind);
  if (mode === 'checked') {
    seek(rawStart);
    checkMessage(rawEnd, msg);
  }
  seek(rawStart);
  if (mode === 'eager') decoders.get(kind)!(object, rawEnd);
  else return decodeLazyInto(object, rawEnd, msg);
  return object;
}

/** Reads `bytes` with `read`, then lets go of them (the reader's buffer would keep a frame or a page alive). */
function reading<T>(bytes: Buffer, read: (end: number) => T): T {
  begin(bytes, 0);
  try {
    return read(bytes.length);
  } finally {
    release(undefined);
  }
}

/** A whole protobuf body (a list, an object, a Status), eagerly. */
export function decodeBody(bytes: Buffer): Record<string, unknown> {
  return reading(bytes, (end) => decodeObject(end, 'eager'));
}

/** A whole protobuf body whose object is decoded lazily (metadata now, the rest on first access). */
export function decodeBodyLazy(bytes: Buffer): Record<string, unknown> {
  return reading(bytes, (end) => decodeObject(end, 'lazy'));
}

/** One watch frame's WatchEvent (without its 4-byte length), the object decoded by `mode`. */
export function decodeWatchEvent(frame: Buffer, mode: Mode = 'eager'): { type: string; object: Record<string, unknown> } {
  return reading(frame, (end) => {
    const { type, objectEnd } = watchEvent(end);
    return { type, object: decodeObject(objectEnd, mode) };
  });
}

/**
 * A sharded informer's drop decision: metadata.name and .namespace of one watch frame's object, everything else
 * skipped by length (the WatchEvent's other fields, the envelope's, the object's and its metadata's).
 */
export function peekNameNamespace(frame: Buffer): { type: string; name: string; namespace: string } {
  return reading(frame, (end) => {
    const { type, objectEnd } = watchEvent(end);
    const { kind, rawStart, rawEnd } = envelope(objectEnd);
    seek(rawStart);
    const { name = '', namespace = '' } = identity(rawEnd, message(kind)) as { name?: string; namespace?: string };
    return { type, name, namespace };
  });
}

/** Splits a watch body into its frames (4-byte big-endian length, then a WatchEvent), each length checked first. */
export function splitFrames(body: Buffer, maxFrameBytes = 16 << 20): Buffer[] {
  const frames: Buffer[] = [];
  const splitter = new FrameSplitter(maxFrameBytes);
  splitter.push(body, {
    frame: (bytes) => frames.push(bytes),
    oversize: (bytes) => {
      throw new ProtobufError(`protobuf: a frame of ${bytes} bytes over the limit of ${maxFrameBytes}`);
    },
  });
  if (splitter.leftoverBytes > 0) throw new ProtobufError(`protobuf: a truncated frame (${splitter.leftoverBytes} bytes at the end)`);
  return frames;
}

/** A field of each kind (index = kind), for the values the generated code reads by their kind alone. */
const ofKind: Field[] = Object.values(K).map((kind) => ({
  n: 0,
  json: 'value',
  kind,
  presence: 'always',
  rep: false,
  map: false,
  inline: false,
  msg: undefined,
  rank: 0,
  rankEnd: 0,
}));

/** The eager decoders specialised per message (codegen.ts); the transport's schema walker is what they fall back on. */
const decoders: Map<string, MessageDecoder> = compileDecoders(allMessages(), {
  varint,
  int64,
  lengthEnd,
  skip,
  str,
  value: (kind, end) => lengthDelimited(ofKind[kind]!, end),
  getPos: () => pos,
  setPos: seek,
  generic: (target, name, tag, end) => field(target, message(name).byNumber[tag >>> 3]!, tag & 7, end),
});
