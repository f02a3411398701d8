// The names of the transport's options, from their types: what an options object may hold (checkOptionNames).
import type { Http2Options } from '../http2/health.ts';
import type { HttpTransportOptions } from './options.ts';

/** Every member of each nested options object, from its type: a member added to the type is an error here until listed. */
export const HTTP_OPTION_NAMES = Object.keys({
  requestTimeoutMs: true,
  tlsHandshakeTimeoutMs: true,
  listIdleTimeoutMs: true,
  minBodyBytesPerSecond: true,
  maxLineBytes: true,
  maxListBytes: true,
  maxListTotalBytes: true,
  random: true,
  maxErrorBodyBytes: true,
  maxDocumentBytes: true,
  userAgent: true,
  lazyDecode: true,
  prefetchPages: true,
  protocol: true,
  http2: true,
  http1IdleTimeoutMs: true,
  keepObject: true,
  compression: true,
  reachability: true,
  encoding: true,
} satisfies Record<keyof HttpTransportOptions, true>);
export const HTTP2_OPTION_NAMES = Object.keys({
  readIdleMs: true,
  pingTimeoutMs: true,
  idleTimeoutMs: true,
  maxConnections: true,
  scheduler: true,
} satisfies Record<keyof Http2Options, true>);
