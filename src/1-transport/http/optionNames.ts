// The names of the transport's options, from their types: what an options object may hold (checkOptionNames).
import { checkOptionNames } from '../../util/optionNames.ts';
import type { Http2Options } from '../http2/health.ts';
import type { ListWatchTarget } from '../paths.ts';
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
/** What `httpListWatch()`'s target holds besides its resource. */
const TARGET_NAMES = Object.keys({
  resource: true,
  namespace: true,
  labelSelector: true,
  fieldSelector: true,
} satisfies Record<keyof ListWatchTarget, true>);

/**
 * The names of transport options (`HttpTransportOptions`, or a part of them such as discovery's, `known`) and of
 * their nested `http2`, each prefixed by `path` (`http.` in an informer's options), by {@link checkOptionNames}.
 */
export function checkHttpOptionNames(caller: string, options: unknown, path = '', known: readonly string[] = HTTP_OPTION_NAMES): void {
  checkOptionNames(caller, options, known, path);
  const http2 = (options as { readonly http2?: unknown } | null | undefined)?.http2;
  checkOptionNames(caller, http2, HTTP2_OPTION_NAMES, `${path}http2.`);
}

/** `httpListWatch()`'s target and options: a misspelt `labelselector` or `maxListByte` was ignored, unread. */
export function checkListWatchOptionNames(caller: string, target: unknown, options: unknown): void {
  checkOptionNames(caller, target, TARGET_NAMES);
  checkHttpOptionNames(caller, options);
}
