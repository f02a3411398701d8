import { InformerError } from '../../0-model/errors.ts';
import { isRecord } from '../../util/isRecord.ts';
import { MAX_DEPTH, mayNestTooDeep, NestingGauge } from '../jsonScanner.ts';
import { lazyParseWatchLine, type KeepObject } from '../lazyJson.ts';
import { decodeWatchFrame } from '../protobuf/decode.ts';
import type { ListPage, RawWatchEvent, WatchFrame } from '../listWatch.ts';

// Decoding: a list response as a page, a watch line as a frame.

/**
 * A list response as a page. As Kubernetes' decoders do, `"items": null` (kube-apiserver's
 * empty PartialObjectMetadataList) and a missing `items` are an empty list, and a missing
 * or empty `metadata` means no resourceVersion. A body without a `kind` is no list (as
 * apimachinery's unstructured decoder: "Object 'Kind' is missing"; every list a real server
 * sends names its kind, `PartialObjectMetadataList` too), nor is a Status, answered with 200:
 * `{}`, `{"metadata":{}}` or a failure Status must not empty the cache.
 */
export function toListPage(body: unknown, shape?: (item: unknown) => unknown): ListPage | undefined {
  // A Status (even `metadata: {}`, as a real server sends it) is never a list; a failure Status is its error (httpTransport).
  if (!isRecord(body) || typeof body.kind !== 'string' || body.kind === '' || body.kind === 'Status') return undefined;
  const raw = body.items;
  if (raw !== null && raw !== undefined && !Array.isArray(raw)) return undefined;
  const listed: readonly unknown[] = Array.isArray(raw) ? raw : [];
  const metadata = isRecord(body.metadata) ? body.metadata : {};
  const resourceVersion = typeof metadata.resourceVersion === 'string' ? metadata.resourceVersion : '';
  const items = shape && body.kind !== 'PartialObjectMetadataList' ? listed.map(shape) : listed;
  const page: { -readonly [K in keyof ListPage]: ListPage[K] } = { items, resourceVersion };
  if (typeof metadata.continue === 'string' && metadata.continue !== '') page.continue = metadata.continue;
  // A count (Go's *int64): 1.5, 1e400 (Infinity) or a negative one is no count; past 2^53 it cannot be exact.
  const remaining = metadata.remainingItemCount;
  if (typeof remaining === 'number' && Number.isSafeInteger(remaining) && remaining >= 0) page.remainingItemCount = remaining;
  return page;
}

/**
 * Where JSON.parse gave up, without its message: V8 quotes the text around the
 * fault, and a Secret's line would put its data into the error (and the logs).
 */
export function syntaxErrorAt(error: unknown): string {
  const at = /position (\d+)/.exec(error instanceof Error ? error.message : '');
  return at ? `, invalid at position ${at[1]}` : '';
}

/**
 * Reads one watch line: an event `{type, object}` with a string type and an
 * object, or a `MalformedLine` error describing what was wrong with it.
 */
export function parseWatchLine(line: string): WatchFrame {
  // Only a line longer than twice the limit can nest past it: the bench's ~4.9 KB pods are never counted.
  if (mayNestTooDeep(line.length) && nestsTooDeep(Buffer.from(line, 'utf8'))) {
    const message = `watch line nests deeper than ${MAX_DEPTH} (${line.length} chars), as client-go refuses it`;
    return new InformerError('MalformedLine', message, { phase: 'watch' });
  }
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    return new InformerError('MalformedLine', `watch line is not JSON (${line.length} chars${syntaxErrorAt(error)})`, { phase: 'watch' });
  }
  return toWatchFrame(value);
}

/**
 * {@link parseWatchLine} for the `lazyDecode` option: reads the line's bytes
 * (which may be reused once it returns) into a lazily decoded event. A line
 * the scanner rejects goes through {@link parseWatchLine}, so that it is
 * reported exactly as without lazy decoding.
 */
export function parseWatchLineLazily(line: Buffer, keep?: KeepObject): WatchFrame {
  let value: unknown;
  try {
    value = lazyParseWatchLine(line, keep);
  } catch {
    return parseWatchLine(line.toString('utf8'));
  }
  return toWatchFrame(value);
}

/**
 * Reads one protobuf watch frame (a WatchEvent, without its length; the bytes may be reused once it returns): the
 * object dropped by `keep`, or checked whole and decoded lazily; a frame that cannot be read is a `MalformedLine`.
 */
export function parseWatchFrame(frame: Buffer, keep?: KeepObject): WatchFrame {
  let value: unknown;
  try {
    value = decodeWatchFrame(frame, keep);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    return new InformerError('MalformedLine', `watch frame is not a protobuf WatchEvent (${frame.length} bytes; ${detail})`, {
      phase: 'watch',
    });
  }
  return toWatchFrame(value);
}

function nestsTooDeep(bytes: Buffer): boolean {
  const gauge = new NestingGauge();
  gauge.push(bytes);
  return gauge.tooDeep;
}

function toWatchFrame(value: unknown): WatchFrame {
  if (!isRecord(value) || typeof value.type !== 'string' || !isRecord(value.object)) {
    return new InformerError('MalformedLine', 'watch line is not an event {type, object}', { phase: 'watch' });
  }
  return value as unknown as RawWatchEvent;
}

/** A watch event whose object is a full object where metadata was asked for, cut down (ERROR events stay as they are). */
export function shapeFrame(frame: WatchFrame, shape: (object: unknown) => unknown): WatchFrame {
  if (frame instanceof InformerError || frame.type === 'ERROR') return frame;
  const object = shape(frame.object);
  return object === frame.object ? frame : { type: frame.type, object };
}
