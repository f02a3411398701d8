import * as http from 'node:http';
import * as https from 'node:https';
import { TLSSocket } from 'node:tls';
import { Observable } from 'rxjs';
import type { KubeConfig } from '@kubernetes/client-node';
import { InformerError, type ErrorPhase } from '../../0-model/errors.ts';
import { http2Get, mayUseHttp2 } from '../http2/request.ts';
import { Http2Error, type HttpResponse } from '../http2/response.ts';
import { http2Route, useAgent } from './agents.ts';
import { decodeResponse } from './encoding.ts';
import { applyCredentials, credentialRejected } from './credentials.ts';
import { JSON_ACCEPT, type RequestSettings } from './options.ts';
import { limitHandshake, TLS_HANDSHAKE_TIMEOUT } from '../tlsHandshake.ts';
import { isUnreachableCode, networkDetail, tlsFailure, type AwaitingStage } from './requestStep.ts';

export { isUnreachableCode, networkDetail, tlsFailure, type AwaitingStage } from './requestStep.ts';

// One request: credentials, the timer before the headers, HTTP/2 or a keep-alive agent, TLS failures in words.

export interface Opened {
  /** An `http.IncomingMessage`, or an HTTP/2 stream's response made to look like one. */
  readonly response: HttpResponse;
}

/** A request other than a plain GET: its method and the JSON body it sends (POST, PUT). */
export interface Outgoing {
  /** `GET`, `POST`, `PUT`, … (then named so in errors). Default `GET`, named by the request's phase. */
  readonly method?: string;
  /** Sent as `application/json`; none for a GET. */
  readonly body?: Buffer;
}

/**
 * One HTTP GET through the KubeConfig's credentials and TLS settings, as an
 * Observable of the response (emitted once headers arrive). One timer bounds
 * everything before the headers. Unsubscribing before the response has been
 * read to its end aborts the request (and an exec plugin it started), destroys
 * its socket and clears its timer; after that, the connection goes back to the pool.
 */
export function get(kc: KubeConfig, path: string, phase: ErrorPhase, settings: RequestSettings, accept = JSON_ACCEPT): Observable<Opened> {
  return send(kc, path, phase, settings, accept, {});
}

/**
 * One HTTP request as {@link get} sends it (the same credentials, timer, HTTP/2 or keep-alive agent and
 * TLS failures in words), with another method and a JSON body: the transport's one request path, which the
 * Lease client's writes take too.
 */
export function send(
  kc: KubeConfig,
  path: string,
  phase: ErrorPhase,
  settings: RequestSettings,
  accept: string,
  outgoing: Outgoing,
): Observable<Opened> {
  const method = outgoing.method ?? 'GET';
  const payload = outgoing.body;
  return new Observable<Opened>((subscriber) => {
    const abort = new AbortController();
    let request: { destroy(): unknown } | undefined;
    let response: HttpResponse | undefined;
    let awaiting: AwaitingStage = 'credentials';
    // Named by its method when given one, else by its phase (`list /api/v1/pods`).
    const verb = outgoing.method ?? phase;
    const what = `${verb} ${path.split('?')[0]}`;
    const timeoutMs = settings.requestTimeoutMs;
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            const message = `${what}: no response headers within ${timeoutMs} ms (waiting for: ${awaiting})`;
            fail(new InformerError('Timeout', message, { phase, unreachable: awaiting === 'connection' || awaiting === 'TLS handshake' }));
          }, timeoutMs);
    const fail = (error: InformerError) => {
      clearTimeout(timer);
      if (!abort.signal.aborted) subscriber.error(error);
    };
    (async () => {
      const cluster = kc.getCurrentCluster();
      if (!cluster) throw new InformerError('Config', noClusterMessage(kc), { phase: 'config' });
      const headers: Record<string, string> = { Accept: accept, 'User-Agent': settings.userAgent };
      if (settings.compression === 'gzip') headers['Accept-Encoding'] = 'gzip';
      if (payload) {
        headers['Content-Type'] = 'application/json';
        headers['Content-Length'] = String(payload.length);
      }
      const options: https.RequestOptions = { method, headers };
      const issued = await applyCredentials(kc, options, abort.signal);
      if (abort.signal.aborted) return;
      const url = new URL(cluster.server.replace(/\/+$/, '') + path);
      const onResponse = (raw: HttpResponse) => {
        clearTimeout(timer);
        const opened = decodeResponse(raw, what, phase);
        if (opened instanceof InformerError) return fail(opened);
        response = opened;
        // Before the 401 is reported: the reflector's retry then runs the exec plugin (or reads the token file) again.
        if (opened.statusCode === 401) credentialRejected(issued);
        subscriber.next({ response: opened });
      };
      const asError = (error: NodeJS.ErrnoException): InformerError => {
        // HTTP/2 failures come in words (./http2/response.ts); a broken protocol or a GOAWAY with an error code is its own reason.
        if (error instanceof Http2Error)
          return new InformerError(error.protocol ? 'ProtocolError' : 'NetworkError', `${verb} ${url.pathname}: ${error.message}`, {
            phase,
            cause: error,
          });
        // A handshake past its bound (../tlsHandshake.ts): a Timeout from no server, as a stalled connect is.
        if (error.code === TLS_HANDSHAKE_TIMEOUT)
          return new InformerError('Timeout', `${verb} ${url.pathname}: ${error.message} (tlsHandshakeTimeoutMs)`, {
            phase,
            cause: error,
            unreachable: true,
          });
        const detail = tlsFailure(error, cluster) ?? networkDetail(error);
        const unreachable = response === undefined && isUnreachableCode(error.code);
        return new InformerError('NetworkError', `${verb} ${url.pathname}: ${detail}`, { phase, cause: error, unreachable });
      };
      const onError = (error: NodeJS.ErrnoException) => fail(asError(error));
      awaiting = 'connection';
      // HTTP/2 (./http2): one multiplexed connection per server and TLS material; `{}` means HTTP/1.1.
      const exchange = {
        ...{ signal: abort.signal, stage: (stage: AwaitingStage) => (awaiting = stage) },
        ...{ response: onResponse, error: onError, failure: asError },
      };
      const h2 = mayUseHttp2(url, { protocol: settings.protocol, proxied: !!cluster.proxyUrl })
        ? await http2Get(url, options, http2Route(kc, cluster, url, options, settings), exchange, payload)
        : {};
      if (h2.sent) return void (request = h2.sent);
      if (abort.signal.aborted) return;
      useAgent(kc, cluster, url, options, settings.http1IdleTimeoutMs, h2.socket);
      const send = url.protocol === 'http:' ? http.request : https.request;
      const sent = send(url, { ...options, signal: abort.signal }, onResponse);
      request = sent;
      sent.on('socket', (socket) => {
        const secure = socket instanceof TLSSocket;
        if (sent.reusedSocket || !socket.connecting) {
          awaiting = 'response headers';
          return;
        }
        socket.once('connect', () => (awaiting = secure ? 'TLS handshake' : 'response headers'));
        if (secure) socket.once('secureConnect', () => (awaiting = 'response headers'));
        if (secure) limitHandshake(socket, settings.tlsHandshakeTimeoutMs);
      });
      sent.on('error', onError);
      sent.end(payload);
    })().catch((error: unknown) => {
      fail(
        error instanceof InformerError
          ? error
          : new InformerError('Config', `cannot apply the KubeConfig: ${error instanceof Error ? error.message : String(error)}`, {
              phase: 'config',
              cause: error,
            }),
      );
    });
    return () => {
      clearTimeout(timer);
      if (response?.complete) return;
      abort.abort();
      request?.destroy();
    };
  });
}

/**
 * Why `kc` names no server, with its likely cause: an empty KubeConfig is most often one never loaded (`new
 * KubeConfig()` without `loadFromDefault()`). Still retried: the caller's code may load it later.
 */
function noClusterMessage(kc: KubeConfig): string {
  if (kc.getClusters().length === 0)
    return 'the KubeConfig has no current cluster: it has none at all (did you call kc.loadFromDefault(), or another kc.load… method?)';
  const context = kc.getCurrentContext();
  return context
    ? `the KubeConfig has no current cluster: its current context "${context}" names no cluster it has (kc.setCurrentContext()?)`
    : 'the KubeConfig has no current cluster: it has no current context (kc.setCurrentContext(), or a current-context in the file)';
}
