import type * as tls from 'node:tls';
import { ASSUMED_MAX_STREAMS, Http2Connection } from './connection.ts';
import { DEFAULT_MAX_CONNECTIONS, type Http2Options } from './health.ts';

interface Slot {
  /** Digest of the TLS material these connections were opened with. */
  readonly digest: string;
  readonly connections: Set<Http2Connection>;
  /** The server answered ALPN with HTTP/1.1: requests with this material go over HTTP/1.1 without asking again. */
  http1Only: boolean;
  /** A connection of this slot speaks HTTP/2. */
  h2: boolean;
  /** The `SETTINGS_MAX_CONCURRENT_STREAMS` the server last sent a connection of this slot as it opened. */
  advertised: number | undefined;
}

/** Per KubeConfig (any object), per cluster and user: the HTTP/2 connections for the TLS material seen last. */
const slots = new WeakMap<object, Map<string, Slot>>();

/**
 * Where a request goes: the HTTP/2 connection it reserved a stream on, HTTP/1.1, or nowhere (`full`: every connection
 * this slot may open is open and none may take this request: `refused` of them refused its stream (`avoid`), the
 * others have no room; the request fails rather than dial another).
 */
export type Route =
  | { readonly connection: Http2Connection; readonly full?: undefined }
  | { readonly connection?: undefined; readonly full?: undefined }
  | { readonly connection?: undefined; readonly full: { readonly open: number; readonly refused: number } };

/** `http2.maxConnections` as a count: a positive integer, else the default. */
function maxConnections(options: Http2Options): number {
  const max = options.maxConnections;
  return max !== undefined && max >= 1 ? Math.floor(max) : DEFAULT_MAX_CONNECTIONS;
}

/**
 * Reserves a stream on a connection to this server with this TLS material,
 * as the keep-alive agents of HTTP/1.1 do (same key, same digest rule): an
 * open connection with room under the server's `SETTINGS_MAX_CONCURRENT_STREAMS`,
 * else a new one (requests that start together share the one being opened), at most
 * `http2.maxConnections` of them open at once (past it: `full`).
 * When the material changed, the previous connections are retired: streams
 * in flight finish on them, new ones go to a new connection. `avoid`: connections
 * not to use (they refused this request's stream). `handshakeTimeoutMs`: a new connection's TLS handshake bound.
 */
export function reserveStream(
  owner: object,
  slotKey: string,
  digest: string,
  url: URL,
  tlsOptions: tls.ConnectionOptions,
  forceH2: boolean,
  options: Http2Options,
  avoid: ReadonlySet<Http2Connection> = new Set(),
  handshakeTimeoutMs?: number,
): Route {
  let bySlot = slots.get(owner);
  if (!bySlot) slots.set(owner, (bySlot = new Map()));
  let slot = bySlot.get(slotKey);
  if (slot && slot.digest !== digest) {
    for (const connection of slot.connections) connection.retire();
    slot = undefined;
  }
  if (!slot) bySlot.set(slotKey, (slot = { digest, connections: new Set(), http1Only: false, h2: false, advertised: undefined }));
  if (slot.http1Only && !forceH2) return {};
  let connection = [...slot.connections].find((candidate) => candidate.usable && !avoid.has(candidate));
  if (!connection) {
    const connections = slot.connections;
    // Retired, GOAWAY'd and closed connections are out of the set: those left are open (or opening).
    if (connections.size >= maxConnections(options)) {
      let refused = 0;
      for (const open of connections) if (avoid.has(open)) refused++;
      return { full: { open: connections.size, refused } };
    }
    connection = new Http2Connection(url, tlsOptions, forceH2, options, (closed) => connections.delete(closed), handshakeTimeoutMs);
    connections.add(connection);
    const opened = connection;
    const owningSlot = slot;
    void opened.ready.then(
      (negotiated) => {
        if (!negotiated.h2) owningSlot.http1Only = true;
        else {
          owningSlot.h2 = true;
          owningSlot.advertised = opened.advertised;
        }
      },
      () => undefined,
    );
  }
  connection.reserve();
  return { connection };
}

/**
 * What the server of this slot answered ALPN, as far as known now: `h2`, `http1`, or undefined (not asked
 * yet, or no answer yet).
 */
export function negotiatedProtocol(owner: object, slotKey: string): 'h2' | 'http1' | undefined {
  const slot = slots.get(owner)?.get(slotKey);
  if (slot?.http1Only) return 'http1';
  return slot?.h2 ? 'h2' : undefined;
}

/**
 * How many streams this slot's connections may carry at once: `http2.maxConnections` × the server's
 * `SETTINGS_MAX_CONCURRENT_STREAMS` (the fewest an open connection was told, else what the last one opened was told,
 * else the 100 assumed before the server says).
 */
export function streamCapacity(owner: object, slotKey: string, options: Http2Options): number {
  const slot = slots.get(owner)?.get(slotKey);
  let perConnection: number | undefined;
  for (const connection of slot?.connections ?? [])
    if (connection.advertised !== undefined) perConnection = Math.min(perConnection ?? Infinity, connection.advertised);
  return maxConnections(options) * (perConnection ?? slot?.advertised ?? ASSUMED_MAX_STREAMS);
}

/** Every HTTP/2 connection of `owner` (tests and diagnostics). */
export function http2Connections(owner: object): Http2Connection[] {
  const out: Http2Connection[] = [];
  for (const slot of slots.get(owner)?.values() ?? []) out.push(...slot.connections);
  return out;
}
