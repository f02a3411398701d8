import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { applyCredentials, credentialRejected, http2Route, useAgent, type HttpProtocol } from '../1-transport/httpTransport.ts';
import { http2Get, mayUseHttp2 } from '../1-transport/http2/request.ts';
import type { HttpResponse } from '../1-transport/http2/response.ts';
import { Observable, map } from 'rxjs';
import { capMessage, InformerError } from '../0-model/errors.ts';
import { LeaseError, reasonOfStatus, type LeaseOperation } from './errors.ts';
import type { LeaseClient, LeaseClients } from './leaseClient.ts';
import { leaseSpec, recordOf, type LeaderElectionRecord, type LeaseSnapshot } from './record.ts';

export interface HttpLeaseOptions {
  /** Default: the current context's namespace, else `default`. */
  readonly namespace?: string | undefined;
  /** Each request is aborted after this long (`Timeout`). Default 5 000. */
  readonly requestTimeoutMs?: number | undefined;
  /** Default `rx-informer-leaderelection`. */
  readonly userAgent?: string;
  /** Largest response body read (Lease, Lease list or error Status); past it the request is aborted (`ResponseTooLarge`). Default 4 MiB. */
  readonly maxBodyBytes?: number;
  /** HTTP version, as the informers' `http.protocol` (docs/transport.md): default `auto`, sharing their HTTP/2 connection. */
  readonly protocol?: HttpProtocol;
}

/** The default of {@link HttpLeaseOptions.maxBodyBytes}. */
export const DEFAULT_MAX_LEASE_BODY_BYTES = 4 * 1024 * 1024;

interface Answer {
  readonly status: number;
  readonly body: unknown;
}

/**
 * One JSON request through the KubeConfig's credentials and TLS settings.
 * Resolves on any HTTP status (the caller decides); fails with a LeaseError on
 * a network fault or timeout. Unsubscribing aborts it.
 */
function request(
  kc: KubeConfig,
  method: string,
  path: string,
  body: unknown,
  what: { operation: LeaseOperation; lease: string },
  settings: { timeoutMs: number; userAgent: string; maxBodyBytes: number; protocol: HttpProtocol },
): Observable<Answer> {
  return new Observable<Answer>((subscriber) => {
    const abort = new AbortController();
    const fail = (reason: 'NetworkError' | 'Timeout' | 'Config' | 'CredentialPlugin' | 'ResponseTooLarge', message: string) => {
      if (!subscriber.closed) subscriber.error(new LeaseError(reason, what.operation, what.lease, message));
      abort.abort();
    };
    const timer = setTimeout(() => fail('Timeout', `no answer within ${settings.timeoutMs} ms`), settings.timeoutMs);
    (async () => {
      const cluster = kc.getCurrentCluster();
      if (!cluster) throw new Error('the KubeConfig has no current cluster');
      const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
      const options: https.RequestOptions = {
        method,
        headers: {
          Accept: 'application/json',
          'User-Agent': settings.userAgent,
          ...(payload ? { 'Content-Type': 'application/json', 'Content-Length': payload.length } : {}),
        },
      };
      const issued = await applyCredentials(kc, options, abort.signal);
      if (abort.signal.aborted) return;
      const url = new URL(cluster.server.replace(/\/+$/, '') + path);
      const onResponse = (response: HttpResponse) => {
        const chunks: Buffer[] = [];
        let bytes = 0;
        response.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          if (bytes <= settings.maxBodyBytes) return void chunks.push(chunk);
          chunks.length = 0;
          clearTimeout(timer);
          fail('ResponseTooLarge', `the response is larger than the ${settings.maxBodyBytes}-byte limit (option maxBodyBytes); aborted`);
        });
        response.on('error', (error) => fail('NetworkError', error.message));
        response.on('end', () => {
          clearTimeout(timer);
          let parsed: unknown;
          try {
            parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
          } catch {
            parsed = undefined;
          }
          if (response.statusCode === 401) credentialRejected(issued);
          subscriber.next({ status: response.statusCode ?? 0, body: parsed });
          subscriber.complete();
        });
      };
      const onError = (error: NodeJS.ErrnoException) => fail('NetworkError', `${error.code ?? ''} ${error.message}`.trim());
      // Over HTTP/2 when the informers' transport would be: on their connection (docs/transport.md).
      const exchange = { signal: abort.signal, stage: () => undefined, response: onResponse, error: onError };
      const h2 = mayUseHttp2(url, { protocol: settings.protocol, proxied: !!cluster.proxyUrl })
        ? await http2Get(url, options, http2Route(kc, cluster, url, options, { protocol: settings.protocol, http2: {} }), exchange, payload)
        : {};
      if (h2.sent) {
        abort.signal.addEventListener('abort', () => h2.sent.destroy(), { once: true });
        return;
      }
      if (abort.signal.aborted) return;
      useAgent(kc, cluster, url, options, h2.socket);
      const send = url.protocol === 'http:' ? http.request : https.request;
      const sent = send(url, { ...options, signal: abort.signal }, onResponse);
      sent.on('error', onError);
      sent.end(payload);
    })().catch((error: unknown) =>
      error instanceof InformerError && (error.reason === 'CredentialPlugin' || error.reason === 'Config')
        ? fail(error.reason, error.message)
        : fail('Config', `cannot apply the KubeConfig: ${error instanceof Error ? error.message : String(error)}`),
    );
    return () => {
      clearTimeout(timer);
      abort.abort();
    };
  });
}

const objectOf = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {});

function snapshotOf(name: string, body: unknown): LeaseSnapshot {
  const lease = objectOf(body);
  const metadata = objectOf(lease['metadata']);
  const rv = metadata['resourceVersion'];
  return {
    name: typeof metadata['name'] === 'string' ? metadata['name'] : name,
    resourceVersion: typeof rv === 'string' ? rv : '',
    record: recordOf(lease['spec']),
  };
}

function failure(answer: Answer, operation: LeaseOperation, lease: string): LeaseError {
  const message = objectOf(answer.body)['message'];
  const text = typeof message === 'string' ? capMessage(message) : `HTTP ${answer.status}`;
  return new LeaseError(reasonOfStatus(answer.status), operation, lease, text, answer.status);
}

/**
 * Leases of one namespace over HTTP (coordination.k8s.io/v1), through a
 * KubeConfig: GET, POST, PUT with the resourceVersion read, list by label.
 */
export function httpLeaseClients(kc: KubeConfig, options: HttpLeaseOptions = {}): LeaseClients {
  const namespace = options.namespace ?? (kc.getContextObject(kc.getCurrentContext())?.namespace || 'default');
  const settings = {
    timeoutMs: options.requestTimeoutMs ?? 5_000,
    userAgent: options.userAgent ?? 'rx-informer-leaderelection',
    maxBodyBytes: options.maxBodyBytes !== undefined && options.maxBodyBytes > 0 ? options.maxBodyBytes : DEFAULT_MAX_LEASE_BODY_BYTES,
    protocol: options.protocol ?? 'auto',
  };
  const base = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases`;
  const leaseObject = (
    name: string,
    labels: Readonly<Record<string, string>> | undefined,
    record: LeaderElectionRecord,
    resourceVersion?: string,
  ) => ({
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name, namespace, ...(labels ? { labels } : {}), ...(resourceVersion === undefined ? {} : { resourceVersion }) },
    spec: leaseSpec(record),
  });
  return {
    lease(name, labels): LeaseClient {
      const path = `${base}/${encodeURIComponent(name)}`;
      return {
        name,
        get: () =>
          request(kc, 'GET', path, undefined, { operation: 'get', lease: name }, settings).pipe(
            map((answer) => {
              if (answer.status === 404) return null;
              if (answer.status !== 200) throw failure(answer, 'get', name);
              return snapshotOf(name, answer.body);
            }),
          ),
        create: (record) =>
          request(kc, 'POST', base, leaseObject(name, labels, record), { operation: 'create', lease: name }, settings).pipe(
            map((answer) => {
              if (answer.status !== 201 && answer.status !== 200) throw failure(answer, 'create', name);
              return snapshotOf(name, answer.body);
            }),
          ),
        update: (resourceVersion, record) => {
          const operation: LeaseOperation = record.holderIdentity === '' ? 'release' : 'update';
          return request(kc, 'PUT', path, leaseObject(name, labels, record, resourceVersion), { operation, lease: name }, settings).pipe(
            map((answer) => {
              if (answer.status !== 200) throw failure(answer, operation, name);
              return snapshotOf(name, answer.body);
            }),
          );
        },
      };
    },
    list(labels) {
      const selector = Object.entries(labels)
        .map(([k, v]) => `${k}=${v}`)
        .join(',');
      return request(
        kc,
        'GET',
        `${base}?labelSelector=${encodeURIComponent(selector)}`,
        undefined,
        { operation: 'list', lease: '*' },
        settings,
      ).pipe(
        map((answer) => {
          if (answer.status !== 200) throw failure(answer, 'list', '*');
          const items = objectOf(answer.body)['items'];
          return Array.isArray(items) ? items.map((item) => snapshotOf('', item)) : [];
        }),
      );
    },
  };
}
