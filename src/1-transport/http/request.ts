import * as http from 'node:http';
import * as https from 'node:https';
import { TLSSocket } from 'node:tls';
import { Observable } from 'rxjs';
import type { KubeConfig } from '@kubernetes/client-node';
import { InformerError, type ErrorPhase } from '../../0-model/errors.ts';
import { http2Get, mayUseHttp2 } from '../http2/request.ts';
import type { Http2Error, HttpResponse } from '../http2/response.ts';
import type { ConnectStage } from '../http2/connection.ts';
import { http2Route, useAgent } from './agents.ts';
import { decodeResponse } from './encoding.ts';
import { applyCredentials, credentialRejected, type Issued } from './credentials.ts';
import { headerValueFault } from './headerValues.ts';
import { JSON_ACCEPT, type RequestSettings } from './options.ts';
import { limitHandshake } from '../tlsHandshake.ts';
import { requestUrl } from '../paths.ts';
import { initialRequest, requestError, requestStep, type RequestFacts, type RequestInput, type RequestTarget } from './requestStep.ts';

export { isUnreachableCode, networkDetail, tlsFailure, type AwaitingStage } from './requestStep.ts';

// One request's shell: credentials, the timer before the headers, HTTP/2 or a keep-alive agent; its decisions (stages,
// errors, the timer's meaning, the teardown) are requestStep.ts's.

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
  // Named by its method when given one, else by its phase (`list /api/v1/pods`).
  const verb = outgoing.method ?? phase;
  const facts: RequestFacts = { phase, verb, what: `${verb} ${path.split('?')[0]}`, timeoutMs: settings.requestTimeoutMs };
  return new Observable<Opened>((subscriber) => {
    const abort = new AbortController();
    let request: { destroy(): unknown } | undefined;
    let issued: Issued | undefined;
    // The response decoded (set before its `response` input), then the one emitted (read by the teardown).
    let arrived: HttpResponse | undefined;
    let response: HttpResponse | undefined;
    let state = initialRequest;
    /** One input through the step, its effects performed in order; whether one says to go on. */
    const run = (input: RequestInput): boolean => {
      const next = requestStep(facts, state, input);
      state = next.state;
      let proceed = false;
      for (const effect of next.effects) {
        switch (effect.type) {
          case 'proceed':
            proceed = true;
            break;
          case 'clearTimer':
            clearTimeout(timer);
            break;
          case 'fail':
            subscriber.error(effect.error);
            break;
          case 'rejectCredential':
            credentialRejected(issued);
            break;
          case 'emit':
            response = arrived;
            if (arrived) subscriber.next({ response: arrived });
            break;
          case 'abort':
            abort.abort();
            request?.destroy();
            break;
        }
      }
      return proceed;
    };
    const timer = facts.timeoutMs === undefined ? undefined : setTimeout(() => run({ type: 'timer' }), facts.timeoutMs);
    (async () => {
      const cluster = kc.getCurrentCluster();
      if (!cluster) throw new InformerError('Config', noClusterMessage(kc), { phase: 'config' });
      const options = requestOptions(method, accept, settings, payload);
      issued = await applyCredentials(
        kc,
        options,
        abort.signal,
        (source, execPlugin) => void run({ type: 'credentialsFrom', source, execPlugin }),
      );
      // What every source wrote (auth providers, impersonation, our options), checked once for both protocols.
      const fault = headerValueFault(options.headers);
      if (fault) throw fault;
      const url = requestUrl(cluster.server, path);
      const target: RequestTarget = { pathname: url.pathname, ca: cluster };
      if (!run({ type: 'credentials', target })) return;
      const onResponse = (raw: HttpResponse) => {
        const opened = decodeResponse(raw, facts.what, phase);
        const failure = opened instanceof InformerError ? opened : undefined;
        arrived = opened instanceof InformerError ? undefined : opened;
        run({ type: 'response', status: arrived?.statusCode, failure });
      };
      const onError = (error: NodeJS.ErrnoException) => void run({ type: 'error', error });
      // HTTP/2 (./http2): one multiplexed connection per server and TLS material; `{}` means HTTP/1.1.
      const exchange = {
        ...{ signal: abort.signal, stage: (stage: ConnectStage) => void run({ type: 'stage', stage }) },
        ...{ response: onResponse, error: onError, failure: (error: Http2Error) => requestError(facts, target, state.responded, error) },
      };
      const h2 = mayUseHttp2(url, { protocol: settings.protocol, proxied: !!cluster.proxyUrl })
        ? await http2Get(url, options, http2Route(kc, cluster, url, options, settings), exchange, payload)
        : {};
      if (h2.sent) return void (request = h2.sent);
      if (!run({ type: 'http1' })) return;
      useAgent(kc, cluster, url, options, settings.http1IdleTimeoutMs, h2.socket);
      const send = url.protocol === 'http:' ? http.request : https.request;
      const sent = send(url, { ...options, signal: abort.signal }, onResponse);
      request = sent;
      sent.on('socket', (socket) => {
        const secure = socket instanceof TLSSocket;
        if (!run({ type: 'socket', connecting: !sent.reusedSocket && socket.connecting })) return;
        socket.once('connect', () => run({ type: 'connected', secure }));
        if (secure) socket.once('secureConnect', () => run({ type: 'secured' }));
        if (secure) limitHandshake(socket, settings.tlsHandshakeTimeoutMs);
      });
      sent.on('error', onError);
      sent.end(payload);
    })().catch((error: unknown) => run({ type: 'thrown', error }));
    return () => run({ type: 'teardown', complete: response?.complete === true });
  });
}

/** A request's method and headers, before its credentials are applied to them. */
function requestOptions(method: string, accept: string, settings: RequestSettings, payload: Buffer | undefined): https.RequestOptions {
  const headers: Record<string, string> = { Accept: accept, 'User-Agent': settings.userAgent };
  if (settings.compression === 'gzip') headers['Accept-Encoding'] = 'gzip';
  if (payload) {
    headers['Content-Type'] = 'application/json';
    headers['Content-Length'] = String(payload.length);
  }
  return { method, headers };
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
