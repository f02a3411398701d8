/**
 * Protobuf list pages for the bench's workload server (issue #36 step 2): each pod encoded once, as the list entry
 * (`items`, field 2 of PodList) it will be on the wire, and a page assembled from its entries between a head
 * (`k8s\0`, runtime.Unknown's typeMeta, the raw list's length and its ListMeta) and a tail (the empty
 * contentEncoding and contentType), so serving a page copies bytes and encodes nothing. The result is the bytes the
 * emulator's encoder writes for the same list (checked in spec/bench/protobufPages.spec.ts).
 */
import { encodeMessage } from '../../packages/emulator/src/protobuf/encode.ts';
import { message } from '../../packages/emulator/src/protobuf/schema.ts';

const MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

function varint(value: number): Buffer {
  const bytes: number[] = [];
  while (value >= 0x80) {
    bytes.push((value % 128) | 0x80);
    value = Math.floor(value / 128);
  }
  bytes.push(value);
  return Buffer.from(bytes);
}

function field(n: number, bytes: Buffer): Buffer {
  return Buffer.concat([Buffer.from([(n << 3) | 2]), varint(bytes.length), bytes]);
}

const text = (s: string) => Buffer.from(s, 'utf8');

/** A pod (without kind and apiVersion) as a PodList entry: tag, length, Pod message. */
export function podEntry(pod: Record<string, unknown>): Buffer {
  return field(2, encodeMessage(message('Pod'), pod).done());
}

const TYPE_META = field(1, Buffer.concat([field(1, text('v1')), field(2, text('PodList'))]));
const TAIL = Buffer.from([0x1a, 0x00, 0x22, 0x00]);

/** The bytes before and after a page's entries, whose lengths add up to `entryBytes`. */
export function pageFrame(
  meta: { resourceVersion: string; continue?: string; remainingItemCount?: number },
  entryBytes: number,
): { head: Buffer; tail: Buffer } {
  const listMeta = field(1, encodeMessage(message('ListMeta'), meta).done());
  return { head: Buffer.concat([MAGIC, TYPE_META, Buffer.from([0x12]), varint(listMeta.length + entryBytes), listMeta]), tail: TAIL };
}
