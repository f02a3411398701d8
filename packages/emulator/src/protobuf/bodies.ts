/**
 * What the emulator answers in Kubernetes' protobuf (`application/vnd.kubernetes.protobuf`, issue #36), for the
 * built-in kinds the schema knows (schema.generated.ts, from k8s.io/api v0.20.2: core/v1, apps/v1, coordination/v1): list bodies, watch frames
 * and Status bodies, written by encode.ts as kube-apiserver writes them (checked byte for byte against the
 * recordings of spec/fixtures/protobuf). Custom resources are JSON only, as on a real server.
 *
 * Watch frames are handed to the watch session as one-byte-per-character strings (its writes are strings), and
 * turned into bytes with `latin1` when written; an event's frame is encoded once for all watchers (store.ts).
 */
import type { ResourceDef } from '../resources.ts';
import type { Status } from '../status.ts';
import { encodeEnvelope, encodeWatchFrame } from './encode.ts';
import { knowsKind } from './schema.ts';

export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';
/** A protobuf watch's Content-Type (11a). */
export const PROTOBUF_WATCH_TYPE = 'application/vnd.kubernetes.protobuf;stream=watch';

/** Whether the emulator answers `def` in protobuf when asked: a built-in kind the schema knows (core/v1, apps/v1, coordination.k8s.io/v1). */
export function servesProtobuf(def: ResourceDef | undefined): boolean {
  return def !== undefined && def.builtin && knowsKind(def.apiVersion, def.kind) && def.listKind === `${def.kind}List`;
}

/** A list body: `k8s\0` + Unknown{typeMeta{v1, …List}, raw: the list (ListMeta, items)}. */
export function protobufList(
  def: ResourceDef,
  meta: { resourceVersion: string; continue?: string; remainingItemCount?: number },
  items: readonly object[],
): Buffer {
  return encodeEnvelope({ apiVersion: def.apiVersion, kind: def.listKind, metadata: meta, items });
}

/** One object (a created or read object) as a body. */
export function protobufObject(object: object): Buffer {
  return encodeEnvelope(object as Record<string, unknown>);
}

/** A Status body. */
export function protobufStatus(status: Status): Buffer {
  return encodeEnvelope({ ...status, apiVersion: 'v1', kind: 'Status' });
}

/** One watch frame (length and WatchEvent), as a one-byte-per-character string. */
export function protobufFrame(type: string, object: object): string {
  return encodeWatchFrame(type, object as Record<string, unknown>).toString('latin1');
}

/** A watch frame whose bytes are not a WatchEvent (the malformedLine fault): its length, then `text`. */
export function garbageFrame(text: string): string {
  const body = Buffer.from(text, 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32BE(body.length, 0);
  return Buffer.concat([length, body]).toString('latin1');
}

/** A frame of `bytes` bytes (the oversizeLine fault): a real length, then filler a client should never buffer. */
export function oversizeFrame(bytes: number): string {
  const frame = Buffer.alloc(4 + bytes);
  frame.writeUInt32BE(bytes, 0);
  return frame.toString('latin1');
}
