/**
 * The benchmark's workload server: a lean, streaming stand-in for the API
 * server's pod collection, on 127.0.0.1, in its own process (the runner
 * forks it). It is deliberately not the emulator in packages/emulator:
 * everything is serialized once at startup, so serving costs the server
 * almost no CPU and the contenders, not the server, set the pace.
 *
 * - `GET /api/v1/pods?limit=&continue=`: the list, paged (a continue token
 *   pins the snapshot it started from), or in one streamed response without
 *   `limit`. Items carry no `kind`/`apiVersion`, as the API server's do not.
 * - `GET /api/v1/pods?watch=1&resourceVersion=RV`: the M events after RV,
 *   written as fast as the socket takes them. A watch from the list's
 *   resourceVersion waits for `GET /_bench/go` (sent by the contender once it
 *   has measured its synced heap) so GC pauses are not counted as watch time.
 *   After the last event: in a relist workload, an ERROR event (410 Expired)
 *   and the end of the response, after which lists return the state after
 *   the M events; otherwise the response stays open, idle.
 * - A watch from an older resourceVersion gets the 410 ERROR event at once.
 *
 * - Metadata-only answers, as kube-apiserver gives them: a list whose `Accept`
 *   asks for `as=PartialObjectMetadataList` gets a PartialObjectMetadataList
 *   of PartialObjectMetadata items; a watch asking for `as=PartialObjectMetadata`
 *   gets events whose objects are PartialObjectMetadata. They are serialized
 *   once at startup too (counted in `setupMs`), so serving them is as cheap as
 *   serving full objects, and the contenders, not the server, set the pace.
 *
 * - Protobuf (`protobuf`, off by default) to an `Accept` that asks for it first: lists, each pod encoded once at startup,
 *   and watches, each event encoded once at startup as its frame (a 4-byte big-endian length, then a WatchEvent around
 *   a `k8s\0` runtime.Unknown envelope; the emulator's encoder), the 410 as an ERROR frame of a Status. Requests and
 *   bytes answered in protobuf are counted apart (`protobufRequests`, `protobufBytesWritten`).
 * - Compression (`gzip`, off by default), as kube-apiserver: a list whose request sends `Accept-Encoding: gzip` is gzipped
 *   (level 1, streamed; kube-apiserver gzips bodies over 128 KiB, and every page here is larger).
 *   Watches stay plain, as kube-apiserver's do. Bytes written are counted on the wire (compressed).
 * - `linkMbit`: response bodies are paced to that rate, one link for all (see {@link WorkloadConfig.linkMbit}).
 *
 * IPC from the runner: `{ type: 'reset', maxEvents? }` (before each contender
 * run: closes every connection, re-arms the go gate and the 410, zeroes the
 * counters, and optionally sends only the first `maxEvents` events on a
 * watch, with no 410), answered with the previous run's counters.
 */
import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createGzip } from 'node:zlib';
import { makePod, playEvents, type PodState } from './pods.ts';
import { pageFrame, podEntry } from '../protobuf/listPages.ts';
import { encodeWatchFrame } from '../../packages/emulator/src/protobuf/encode.ts';

export interface WorkloadConfig {
  /** Pods in the initial list. */
  readonly pods: number;
  /** Watch events after the list. */
  readonly events: number;
  /** End the watch with a 410 Expired after the events, forcing one relist. */
  readonly relist: boolean;
  readonly seed: number;
  /**
   * Generate list items as they are served instead of serializing every pod
   * once at startup (watch events are still serialized once). For stores of
   * hundreds of thousands of objects, whose serialized lists would take
   * gigabytes: the server then holds a small state record per pod. It costs
   * the server CPU (on its own core) while it serves a list.
   */
  readonly generate?: boolean;
  /**
   * Pace every response body to this many Mbit/s, as one link all responses share (a token bucket),
   * to play a network instead of loopback. Default: as fast as the socket takes it.
   */
  readonly linkMbit?: number;
  /** Gzip lists for requests that accept it (rx-gzip, and client-node, whose fetch asks for gzip). Default: never. */
  readonly gzip?: boolean;
  /**
   * Answer lists and watches in protobuf to requests whose `Accept` asks for it first (issue #36; every pod encoded
   * once at startup as its list entry, bench/protobuf/listPages.ts, and every watch event as its frame). Default:
   * JSON only, and nothing encoded.
   */
  readonly protobuf?: boolean;
}

export interface ServerReady {
  readonly type: 'ready';
  readonly port: number;
  /** Live pods after the M events (what a relist returns). */
  readonly finalCount: number;
  readonly listBytes: number;
  readonly watchBytes: number;
  readonly meanPodBytes: number;
  /** The initial list's protobuf entries (0 without `protobuf`, or when generated). */
  readonly pbListBytes: number;
  /** The watch events' protobuf frames (0 without `protobuf`). */
  readonly pbWatchBytes: number;
  /** The same, metadata-only (PartialObjectMetadata). */
  readonly metaListBytes: number;
  readonly metaWatchBytes: number;
  readonly meanMetaPodBytes: number;
  readonly setupMs: number;
}

export interface ServerCounters {
  listRequests: number;
  watchRequests: number;
  goRequests: number;
  expiredSent: number;
  watchBytesWritten: number;
  listBytesWritten: number;
  /** Requests answered metadata-only. */
  metadataRequests: number;
  /** Requests (lists and watches) answered in protobuf. */
  protobufRequests: number;
  /** Of the bytes written (lists and watches), those of protobuf answers. */
  protobufBytesWritten: number;
}

const CHUNK_BYTES = 512 * 1024;

interface Snapshot {
  /** How many items; `item(i)` serializes the i-th (generated on demand, or held). */
  readonly count: number;
  readonly item: (i: number) => Buffer;
  readonly resourceVersion: number;
  readonly tag: 'i' | 'f';
}

/** A snapshot whose items are serialized already. */
function held(items: readonly Buffer[], resourceVersion: number, tag: 'i' | 'f'): Snapshot {
  return { count: items.length, item: (i) => items[i]!, resourceVersion, tag };
}

/** A snapshot whose items are serialized from their states when served. */
function generated(
  states: (i: number) => PodState,
  count: number,
  serialize: (state: PodState) => Buffer,
  resourceVersion: number,
  tag: 'i' | 'f',
): Snapshot {
  return { count, item: (i) => serialize(states(i)), resourceVersion, tag };
}

const metaItem = (state: PodState): Buffer => Buffer.from(partialJson(makePod(state)));
const initialState = (i: number): PodState => ({ index: i, resourceVersion: i + 1, revision: 0 });

/** A list item in protobuf: its PodList entry. */
function pbItem(state: PodState): Buffer {
  const { kind: _kind, apiVersion: _apiVersion, ...item } = makePod(state);
  return podEntry(item);
}

/** A list item: like the API server, without `kind`/`apiVersion` (those are on the list). */
function listItem(state: PodState): Buffer {
  const { kind: _kind, apiVersion: _apiVersion, ...item } = makePod(state);
  return Buffer.from(JSON.stringify(item));
}

/** A pod as a PartialObjectMetadata, as kube-apiserver writes it (list items and watch objects alike). */
function partialJson(pod: Record<string, unknown>): string {
  return `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":${JSON.stringify(pod['metadata'])}}`;
}

/** Watch lines (JSON) or frames (protobuf) packed into ~512 KiB chunks, with where each event starts. */
class EventStream {
  readonly chunks: Buffer[] = [];
  readonly eventChunk: Uint32Array;
  readonly eventOffset: Uint32Array;
  bytes = 0;
  private parts: (string | Buffer)[] = [];
  private partBytes = 0;
  private e = 0;
  constructor(events: number) {
    this.eventChunk = new Uint32Array(events);
    this.eventOffset = new Uint32Array(events);
  }
  /** One event: a JSON line (ASCII only: characters are bytes) or a protobuf frame. */
  push(line: string | Buffer): void {
    if (this.partBytes + line.length > CHUNK_BYTES) this.flush();
    this.eventChunk[this.e] = this.chunks.length;
    this.eventOffset[this.e] = this.partBytes;
    this.parts.push(line);
    this.partBytes += line.length;
    this.e++;
  }
  flush(): void {
    if (this.parts.length === 0) return;
    const buffer =
      typeof this.parts[0] === 'string'
        ? Buffer.from(this.parts.join(''))
        : Buffer.concat(this.parts.map((part) => (typeof part === 'string' ? Buffer.from(part) : part)));
    this.chunks.push(buffer);
    this.bytes += buffer.length;
    this.parts = [];
    this.partBytes = 0;
  }
}

/** Serializes the workload once, whole and metadata-only. */
function build(config: WorkloadConfig) {
  const { pods, events } = config;
  const keep = !config.generate;
  const initial: Buffer[] = keep ? new Array(pods) : [];
  const metaInitial: Buffer[] = keep ? new Array(pods) : [];
  let listBytes = 0;
  let metaListBytes = 0;
  for (let i = 0; i < pods; i++) {
    // Generated lists are serialized here too, once, only to count their bytes.
    const pod = makePod(initialState(i));
    const { kind: _kind, apiVersion: _apiVersion, ...item } = pod;
    const buffer = Buffer.from(JSON.stringify(item));
    listBytes += buffer.length;
    const meta = Buffer.from(partialJson(pod));
    metaListBytes += meta.length;
    if (keep) {
      initial[i] = buffer;
      metaInitial[i] = meta;
    }
  }
  const pbInitial = config.protobuf && keep ? Array.from({ length: pods }, (_, i) => pbItem(initialState(i))) : [];
  const full = new EventStream(events);
  const meta = new EventStream(events);
  const pb = new EventStream(config.protobuf ? events : 0);
  const play = playEvents(pods, events, config.seed);
  let final: PodState[] = [];
  for (;;) {
    const step = play.next();
    if (step.done) {
      final = step.value;
      break;
    }
    const pod = makePod(step.value.pod);
    full.push(`{"type":"${step.value.type}","object":${JSON.stringify(pod)}}\n`);
    meta.push(`{"type":"${step.value.type}","object":${partialJson(pod)}}\n`);
    if (config.protobuf) pb.push(encodeWatchFrame(step.value.type, pod));
  }
  full.flush();
  meta.flush();
  pb.flush();
  const finalStates = config.relist ? final : [];
  const finalState = (i: number) => finalStates[i]!;
  return {
    initial: keep ? held(initial, pods, 'i') : generated(initialState, pods, listItem, pods, 'i'),
    final: keep
      ? held(finalStates.map(listItem), pods + events, 'f')
      : generated(finalState, finalStates.length, listItem, pods + events, 'f'),
    metaInitial: keep ? held(metaInitial, pods, 'i') : generated(initialState, pods, metaItem, pods, 'i'),
    metaFinal: keep
      ? held(finalStates.map(metaItem), pods + events, 'f')
      : generated(finalState, finalStates.length, metaItem, pods + events, 'f'),
    pbInitial: keep ? held(pbInitial, pods, 'i') : generated(initialState, pods, pbItem, pods, 'i'),
    pbFinal: generated(finalState, finalStates.length, pbItem, pods + events, 'f'),
    pbListBytes: pbInitial.reduce((sum, entry) => sum + entry.length, 0),
    finalCount: final.length,
    full,
    meta,
    pb,
    listBytes,
    watchBytes: full.bytes,
    metaListBytes,
    metaWatchBytes: meta.bytes,
    pbWatchBytes: pb.bytes,
  };
}

/** Whether a request's Accept asks for protobuf first (what rx-informer sends with `http.encoding: 'protobuf'`). */
function wantsProtobuf(request: http.IncomingMessage): boolean {
  return (request.headers.accept ?? '').trim().startsWith('application/vnd.kubernetes.protobuf');
}

/** Whether a request's Accept asks for metadata only (what rx-informer and client-go's metadata client send). */
function wantsMetadata(request: http.IncomingMessage, list: boolean): boolean {
  const accept = request.headers.accept ?? '';
  return accept.includes(list ? 'as=PartialObjectMetadataList;g=meta.k8s.io;v=v1' : 'as=PartialObjectMetadata;g=meta.k8s.io;v=v1');
}

function statusObject(code: number, reason: string, message: string) {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
}

function status(code: number, reason: string, message: string): string {
  return JSON.stringify(statusObject(code, reason, message));
}

const PROTOBUF = 'application/vnd.kubernetes.protobuf';
/** A protobuf watch's Content-Type, as kube-apiserver writes it. */
const PROTOBUF_WATCH = 'application/vnd.kubernetes.protobuf;stream=watch';

export async function serve(
  config: WorkloadConfig,
): Promise<{ ready: ServerReady; reset: (maxEvents?: number) => ServerCounters; close: () => Promise<void> }> {
  const started = performance.now();
  const data = build(config);
  const lastRV = config.pods + config.events;
  let go = false;
  let expired = false;
  let waiting: (() => void)[] = [];
  /** Events a watch sends at most (set per run: the 100 client-node informers take fewer). */
  let eventLimit = config.events;
  const counters: ServerCounters = {
    listRequests: 0,
    watchRequests: 0,
    goRequests: 0,
    expiredSent: 0,
    watchBytesWritten: 0,
    listBytesWritten: 0,
    metadataRequests: 0,
    protobufRequests: 0,
    protobufBytesWritten: 0,
  };
  const sockets = new Set<Socket>();

  /** When the simulated link is free again (ms, performance.now()); every paced byte pushes it on. */
  let linkFreeAt = 0;
  const bytesPerMs = config.linkMbit ? (config.linkMbit * 1e6) / 8 / 1000 : undefined;
  const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
  /** Writes `buffer` in pieces of at most 64 KiB, each when the link has carried the ones before it. */
  const write = async (response: http.ServerResponse, buffer: Buffer): Promise<boolean> => {
    if (bytesPerMs === undefined) return writeNow(response, buffer);
    for (let at = 0; at < buffer.length; at += 64 * 1024) {
      const piece = buffer.subarray(at, at + 64 * 1024);
      const now = performance.now();
      const start = Math.max(now, linkFreeAt);
      linkFreeAt = start + piece.length / bytesPerMs;
      if (start - now >= 1) await sleep(start - now);
      if (!(await writeNow(response, piece))) return false;
    }
    return true;
  };
  /**
   * A list body's sink: `write` and `end` it as it is, or gzipped (level 1, as kube-apiserver) when the
   * request accepts gzip; `wire` counts what went out.
   */
  const bodyOf = (
    request: http.IncomingMessage,
    response: http.ServerResponse,
    onWire: (bytes: number) => void,
    type = 'application/json',
  ) => {
    const gzip = config.gzip === true && /\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''));
    response.writeHead(200, {
      'Content-Type': type,
      ...(gzip ? { 'Content-Encoding': 'gzip', Vary: 'Accept-Encoding' } : {}),
    });
    if (!gzip) {
      return {
        write: async (buffer: Buffer) => (await write(response, buffer)) && (onWire(buffer.length), true),
        end: async (last: Buffer) => {
          if (await write(response, last)) onWire(last.length);
          response.end();
        },
      };
    }
    const zip = createGzip({ level: 1 });
    let open = true;
    const pumped = (async () => {
      for await (const chunk of zip as AsyncIterable<Buffer>) {
        if (!(await write(response, chunk))) {
          open = false;
          zip.destroy();
          return;
        }
        onWire(chunk.length);
      }
      response.end();
    })().catch(() => undefined);
    const put = (buffer: Buffer) =>
      new Promise<boolean>((resolve) => {
        if (!open) return resolve(false);
        if (zip.write(buffer)) return resolve(true);
        zip.once('drain', () => resolve(open));
      });
    return {
      write: put,
      end: async (last: Buffer) => {
        if (open) zip.end(last);
        await pumped;
      },
    };
  };

  const writeNow = (response: http.ServerResponse, buffer: Buffer): Promise<boolean> =>
    new Promise((resolve) => {
      if (response.destroyed || response.writableEnded) return resolve(false);
      if (response.write(buffer)) return resolve(true);
      const done = (ok: boolean) => {
        response.off('drain', onDrain);
        response.off('close', onClose);
        resolve(ok);
      };
      const onDrain = () => done(true);
      const onClose = () => done(false);
      response.on('drain', onDrain);
      response.on('close', onClose);
    });

  const list = async (url: URL, request: http.IncomingMessage, response: http.ServerResponse, metadata: boolean) => {
    counters.listRequests++;
    if (metadata) counters.metadataRequests++;
    const limit = Number(url.searchParams.get('limit') ?? '0');
    const token = url.searchParams.get('continue');
    const [initial, final] = metadata ? [data.metaInitial, data.metaFinal] : [data.initial, data.final];
    let snapshot: Snapshot = expired ? final : initial;
    let offset = 0;
    if (token) {
      const decoded = JSON.parse(Buffer.from(token, 'base64url').toString()) as { s: 'i' | 'f'; o: number };
      snapshot = decoded.s === 'f' ? final : initial;
      offset = decoded.o;
    }
    const total = snapshot.count;
    const end = limit > 0 ? Math.min(total, offset + limit) : total;
    const meta: Record<string, unknown> = { resourceVersion: String(snapshot.resourceVersion) };
    if (end < total) {
      meta.continue = Buffer.from(JSON.stringify({ s: snapshot.tag, o: end })).toString('base64url');
      // kube-apiserver v1.20 does not copy remainingItemCount into a PartialObjectMetadataList (10d).
      if (!metadata) meta.remainingItemCount = total - end;
    }
    if (config.protobuf && !metadata && wantsProtobuf(request)) {
      counters.protobufRequests++;
      const pb = snapshot.tag === 'f' ? data.pbFinal : data.pbInitial;
      const entries = Array.from({ length: end - offset }, (_, k) => pb.item(offset + k));
      const { head, tail } = pageFrame(
        meta as { resourceVersion: string },
        entries.reduce((sum, e) => sum + e.length, 0),
      );
      const onWire = (bytes: number) => {
        counters.listBytesWritten += bytes;
        counters.protobufBytesWritten += bytes;
      };
      const body = bodyOf(request, response, onWire, PROTOBUF);
      for (let at = 0; at < entries.length || at === 0; at += 400) {
        if (!(await body.write(Buffer.concat([...(at === 0 ? [head] : []), ...entries.slice(at, at + 400)])))) return;
      }
      await body.end(tail);
      return;
    }
    const body = bodyOf(request, response, (bytes) => (counters.listBytesWritten += bytes));
    const head = Buffer.from(
      metadata
        ? `{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/v1","metadata":${JSON.stringify(meta)},"items":[`
        : `{"kind":"PodList","apiVersion":"v1","metadata":${JSON.stringify(meta)},"items":[`,
    );
    const comma = Buffer.from(',');
    const BATCH = 400;
    let first = true;
    for (let at = offset; at < end; at += BATCH) {
      const parts: Buffer[] = at === offset ? [head] : [];
      for (let i = at; i < Math.min(end, at + BATCH); i++) {
        if (!first) parts.push(comma);
        first = false;
        parts.push(snapshot.item(i));
      }
      if (!(await body.write(Buffer.concat(parts)))) return;
    }
    if (offset >= end && !(await body.write(head))) return;
    await body.end(Buffer.from(']}\n'));
  };

  const watch = async (url: URL, request: http.IncomingMessage, response: http.ServerResponse, metadata: boolean) => {
    counters.watchRequests++;
    if (metadata) counters.metadataRequests++;
    const protobuf = config.protobuf === true && !metadata && wantsProtobuf(request);
    if (protobuf) counters.protobufRequests++;
    const stream = protobuf ? data.pb : metadata ? data.meta : data.full;
    const rvParam = url.searchParams.get('resourceVersion') ?? '';
    const timeoutSeconds = Number(url.searchParams.get('timeoutSeconds') ?? '0');
    const current = expired ? data.final.resourceVersion : data.initial.resourceVersion;
    const from = rvParam === '' || rvParam === '0' ? current : Number(rvParam);
    response.writeHead(200, { 'Content-Type': protobuf ? PROTOBUF_WATCH : 'application/json', 'Cache-Control': 'no-cache' });
    response.flushHeaders();
    const gone = () => {
      counters.expiredSent++;
      const message = `too old resource version: ${from} (${current})`;
      if (!protobuf) return response.end(`{"type":"ERROR","object":${status(410, 'Expired', message)}}\n`);
      // Not counted in the bytes written, as the JSON line is not.
      response.end(encodeWatchFrame('ERROR', statusObject(410, 'Expired', message)));
    };
    if (!Number.isFinite(from) || from < config.pods || (expired && from < lastRV)) return gone();
    const end = Math.min(config.events, eventLimit);
    if (from < config.pods + end) {
      if (from === config.pods && !go) await new Promise<void>((resolve) => waiting.push(resolve));
      const first = from - config.pods;
      // Whole pre-serialized chunks, cut at the first and the last event sent.
      const lastChunk = end < config.events ? stream.eventChunk[end]! : stream.chunks.length - 1;
      for (let chunk = stream.eventChunk[first]!; chunk <= lastChunk; chunk++) {
        const whole = stream.chunks[chunk]!;
        const buffer = whole.subarray(
          chunk === stream.eventChunk[first] ? stream.eventOffset[first]! : 0,
          end < config.events && chunk === lastChunk ? stream.eventOffset[end]! : whole.length,
        );
        if (buffer.length > 0 && !(await write(response, buffer))) return;
        counters.watchBytesWritten += buffer.length;
        if (protobuf) counters.protobufBytesWritten += buffer.length;
      }
      if (config.relist && end === config.events) {
        expired = true;
        return gone();
      }
    }
    // Caught up: stay open, idle, until the client goes or the timeout passes.
    if (timeoutSeconds > 0) {
      const timer = setTimeout(() => response.end(), timeoutSeconds * 1000);
      response.on('close', () => clearTimeout(timer));
    }
  };

  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    response.on('error', () => undefined);
    if (url.pathname === '/_bench/go') {
      counters.goRequests++;
      go = true;
      const release = waiting;
      waiting = [];
      for (const resolve of release) resolve();
      response.writeHead(200, { 'Content-Type': 'text/plain' });
      response.end('go\n');
      return;
    }
    if (url.pathname === '/api/v1/pods' && request.method === 'GET') {
      const isWatch = url.searchParams.get('watch');
      const watching = isWatch === '1' || isWatch === 'true';
      void (
        watching ? watch(url, request, response, wantsMetadata(request, false)) : list(url, request, response, wantsMetadata(request, true))
      ).catch((error: unknown) => {
        if (!response.headersSent) response.writeHead(500, { 'Content-Type': 'application/json' });
        response.end(status(500, 'InternalError', String(error)));
      });
      return;
    }
    response.writeHead(404, { 'Content-Type': 'application/json' });
    response.end(status(404, 'NotFound', `${url.pathname} is not served by the bench workload`));
  });
  server.keepAliveTimeout = 60_000;
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const n = data.initial.count;
  const ready: ServerReady = {
    type: 'ready',
    port,
    finalCount: data.finalCount,
    listBytes: data.listBytes,
    watchBytes: data.watchBytes,
    meanPodBytes: Math.round(n > 0 ? data.listBytes / n : data.watchBytes / Math.max(1, config.events)),
    pbListBytes: data.pbListBytes,
    pbWatchBytes: data.pbWatchBytes,
    metaListBytes: data.metaListBytes,
    metaWatchBytes: data.metaWatchBytes,
    meanMetaPodBytes: Math.round(n > 0 ? data.metaListBytes / n : data.metaWatchBytes / Math.max(1, config.events)),
    setupMs: Math.round(performance.now() - started),
  };
  return {
    ready,
    reset(maxEvents?: number) {
      eventLimit = maxEvents ?? config.events;
      for (const socket of sockets) socket.destroy();
      sockets.clear();
      const previous = { ...counters };
      go = false;
      expired = false;
      linkFreeAt = 0;
      for (const resolve of waiting) resolve();
      waiting = [];
      counters.listRequests =
        counters.watchRequests =
        counters.goRequests =
        counters.expiredSent =
        counters.watchBytesWritten =
        counters.listBytesWritten =
        counters.metadataRequests =
        counters.protobufRequests =
        counters.protobufBytesWritten =
          0;
      return previous;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

// Run as a forked child: the config comes as argv[2] (JSON), control over IPC.
if (process.argv[1] && import.meta.filename === process.argv[1] && process.send) {
  const config = JSON.parse(process.argv[2] ?? '{}') as WorkloadConfig;
  const handle = await serve(config);
  process.on('message', (message: { type: string; maxEvents?: number }) => {
    if (message.type === 'reset') process.send!({ type: 'reset-ok', counters: handle.reset(message.maxEvents) });
    if (message.type === 'close') void handle.close().then(() => process.exit(0));
  });
  process.on('disconnect', () => process.exit(0));
  process.send(handle.ready);
}
