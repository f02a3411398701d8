import type { KubeConfig } from '@kubernetes/client-node';
import { catchError, map, of, throwError, type Observable } from 'rxjs';
import { InformerError } from '../0-model/errors.ts';
import { DEFAULT_MAX_DOCUMENT_BYTES, requestJson, type HttpProtocol, type JsonRequestOptions } from '../1-transport/httpTransport.ts';
import { LeaseError, type LeaseOperation } from './errors.ts';
import type { LeaseClient, LeaseClients } from './leaseClient.ts';
import { leaseSpec, recordOf, type LeaderElectionRecord, type LeaseSnapshot } from './record.ts';

// The Lease client sends its GET, POST, PUT and DELETE through the HTTP transport's one request path (requestJson):
// the KubeConfig's credentials and exec plugins, TLS, HTTP/2 on the informers' connection, the request timer,
// byte limits, and the one status → reason mapping are the transport's.

export interface HttpLeaseOptions {
  /** Default: the current context's namespace, else `default`. */
  readonly namespace?: string | undefined;
  /**
   * The transport's request timer (`http.requestTimeoutMs`: credentials, connection, TLS, response headers) and the
   * longest pause in a response body (`http.listIdleTimeoutMs`), as `Timeout`. Default 5 000.
   */
  readonly requestTimeoutMs?: number | undefined;
  /** Default `rx-informer-leaderelection`. */
  readonly userAgent?: string;
  /**
   * Largest Lease or Lease list read (the transport's `maxDocumentBytes`); past it the request is aborted
   * (`ResponseTooLarge`). An error Status is bounded by the transport's `maxErrorBodyBytes` (1 MiB). Default 4 MiB.
   */
  readonly maxBodyBytes?: number;
  /** HTTP version, as the informers' `http.protocol` (docs/transport.md): default `auto`, sharing their HTTP/2 connection. */
  readonly protocol?: HttpProtocol;
}

/** The default of {@link HttpLeaseOptions.maxBodyBytes}: the transport's `maxDocumentBytes`. */
export const DEFAULT_MAX_LEASE_BODY_BYTES = DEFAULT_MAX_DOCUMENT_BYTES;

/** The default of {@link HttpLeaseOptions.requestTimeoutMs}. */
const DEFAULT_LEASE_REQUEST_TIMEOUT_MS = 5_000;

/** The transport's options for Lease requests. */
function transportOptions(options: HttpLeaseOptions): JsonRequestOptions {
  const timeoutMs = options.requestTimeoutMs ?? DEFAULT_LEASE_REQUEST_TIMEOUT_MS;
  return {
    requestTimeoutMs: timeoutMs,
    listIdleTimeoutMs: timeoutMs,
    userAgent: options.userAgent ?? 'rx-informer-leaderelection',
    maxDocumentBytes: options.maxBodyBytes !== undefined && options.maxBodyBytes > 0 ? options.maxBodyBytes : DEFAULT_MAX_LEASE_BODY_BYTES,
    protocol: options.protocol ?? 'auto',
    // A Lease is a few hundred bytes (kube-apiserver gzips only responses over 128 KiB): no gzip asked for, as
    // before. A gzip body is inflated all the same (the transport's decoding).
    compression: 'none',
  };
}

/** A failed request as a LeaseError: the transport's reason, status, request and message (the Status's, capped). */
function leaseError(error: unknown, operation: LeaseOperation, lease: string): LeaseError {
  return LeaseError.of(error, operation, lease, 'Unknown');
}

/**
 * One JSON request for a Lease operation: emits the response's JSON, or errors with a LeaseError. A `get`
 * answered 404 emits `null` (there is no such Lease).
 */
function leaseRequest(
  kc: KubeConfig,
  path: string,
  request: { method: string; body?: unknown },
  what: { operation: LeaseOperation; lease: string },
  options: JsonRequestOptions,
): Observable<unknown> {
  return requestJson(kc, path, { ...request, limitOption: 'maxBodyBytes' }, options).pipe(
    catchError((error: unknown) =>
      request.method === 'GET' && what.operation === 'get' && error instanceof InformerError && error.status === 404
        ? of(null)
        : throwError(() => leaseError(error, what.operation, what.lease)),
    ),
  );
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

/**
 * Leases of one namespace over HTTP (coordination.k8s.io/v1), through a
 * KubeConfig and the HTTP transport: GET, POST, PUT with the resourceVersion read, DELETE with it as a precondition,
 * list by label.
 */
export function httpLeaseClients(kc: KubeConfig, options: HttpLeaseOptions = {}): LeaseClients {
  const namespace = options.namespace ?? (kc.getContextObject(kc.getCurrentContext())?.namespace || 'default');
  const http = transportOptions(options);
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
          leaseRequest(kc, path, { method: 'GET' }, { operation: 'get', lease: name }, http).pipe(
            map((body) => (body === null ? null : snapshotOf(name, body))),
          ),
        create: (record) =>
          leaseRequest(
            kc,
            base,
            { method: 'POST', body: leaseObject(name, labels, record) },
            { operation: 'create', lease: name },
            http,
          ).pipe(map((body) => snapshotOf(name, body))),
        update: (resourceVersion, record) => {
          const operation: LeaseOperation = record.holderIdentity === '' ? 'release' : 'update';
          const body = leaseObject(name, labels, record, resourceVersion);
          return leaseRequest(kc, path, { method: 'PUT', body }, { operation, lease: name }, http).pipe(
            map((answer) => snapshotOf(name, answer)),
          );
        },
        delete: (resourceVersion) => {
          const body = { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { resourceVersion } };
          return leaseRequest(kc, path, { method: 'DELETE', body }, { operation: 'delete', lease: name }, http).pipe(map(() => undefined));
        },
      };
    },
    list(labels) {
      const selector = Object.entries(labels)
        .map(([k, v]) => `${k}=${v}`)
        .join(',');
      const path = `${base}?labelSelector=${encodeURIComponent(selector)}`;
      return leaseRequest(kc, path, { method: 'GET' }, { operation: 'list', lease: '*' }, http).pipe(
        map((body) => {
          const items = objectOf(body)['items'];
          return Array.isArray(items) ? items.map((item) => snapshotOf('', item)) : [];
        }),
      );
    },
  };
}
