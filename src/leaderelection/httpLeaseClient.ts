import type { KubeConfig } from '@kubernetes/client-node';
import { catchError, map, Observable, of, switchMap, throwError, type Subscription } from 'rxjs';
import { InformerError } from '../0-model/errors.ts';
import {
  DEFAULT_MAX_DOCUMENT_BYTES,
  defaultMaxListTotalBytes,
  requestJson,
  type HttpProtocol,
  type JsonRequestOptions,
} from '../1-transport/httpTransport.ts';
import { checkOptionNames } from '../util/optionNames.ts';
import { LeaseError, type LeaseOperation } from './errors.ts';
import type { LeaseClient, LeaseClients } from './leaseClient.ts';
import {
  initialLeaseList,
  LEASE_LIST_PAGE_SIZE,
  leaseListStep,
  type LeaseListConfig,
  type LeaseListEffect,
  type LeaseListInput,
} from './leaseListStep.ts';
import { leaseSpec, objectOf, snapshotOf, type LeaderElectionRecord, type LeaseSnapshot } from './record.ts';

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
   * Largest Lease or Lease list page read (the transport's `maxDocumentBytes`); past it the request is aborted
   * (`ResponseTooLarge`). An error Status is bounded by the transport's `maxErrorBodyBytes` (1 MiB). Default 4 MiB.
   */
  readonly maxBodyBytes?: number;
  /**
   * Largest Lease listing as a whole: the bytes of all its pages together (a page's limit is what is left of it
   * when that is less than `maxBodyBytes`), as the informers' `http.maxListTotalBytes`. Past it the listing fails
   * as `ListTooLong`, so a server that keeps sending continue tokens cannot fill the heap. Default: the informers'
   * (an eighth of V8's heap limit); `Infinity`: none.
   */
  readonly maxListTotalBytes?: number;
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

/** A Lease's `metadata` as sent back with a write. */
type Metadata = Readonly<Record<string, unknown>>;

/** The metadata of a Lease answer to send back with the next write: all of it but `managedFields` (the server keeps those). */
function keptMetadata(body: unknown): Metadata {
  const { managedFields: _managed, ...metadata } = objectOf(objectOf(body)['metadata']);
  return metadata;
}

/** Every option of {@link httpLeaseClients}, from its type (a new one is an error here until listed). */
const HTTP_LEASE_OPTION_NAMES = Object.keys({
  namespace: true,
  requestTimeoutMs: true,
  userAgent: true,
  maxBodyBytes: true,
  maxListTotalBytes: true,
  protocol: true,
} satisfies Record<keyof HttpLeaseOptions, true>);

/** What every request of one client shares: the Leases' namespace, their collection's path, how to reach it. */
interface Endpoint {
  readonly kc: KubeConfig;
  readonly http: JsonRequestOptions;
  readonly namespace: string;
  readonly base: string;
}

/**
 * Leases of one namespace over HTTP (coordination.k8s.io/v1), through a
 * KubeConfig and the HTTP transport: GET, POST, PUT with the resourceVersion read, DELETE with it as a precondition,
 * list by label.
 *
 * @throws TypeError when an option has an unknown name (`maxBodyByte`: did you mean `maxBodyBytes`?).
 */
export function httpLeaseClients(kc: KubeConfig, options: HttpLeaseOptions = {}): LeaseClients {
  checkOptionNames('httpLeaseClients', options, HTTP_LEASE_OPTION_NAMES);
  const namespace = options.namespace ?? (kc.getContextObject(kc.getCurrentContext())?.namespace || 'default');
  const base = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases`;
  const endpoint: Endpoint = { kc, http: transportOptions(options), namespace, base };
  const totalBytes =
    options.maxListTotalBytes !== undefined && options.maxListTotalBytes > 0 ? options.maxListTotalBytes : defaultMaxListTotalBytes();
  const pageSizes = new PageSizes();
  return {
    lease: (name, labels) => leaseClient(endpoint, name, labels),
    list(labels) {
      const selector = Object.entries(labels)
        .map(([k, v]) => `${k}=${v}`)
        .join(',');
      const query = `${base}?labelSelector=${encodeURIComponent(selector)}`;
      return pagedList(kc, query, endpoint.http, totalBytes, pageSizes.of(selector));
    },
  };
}

/** The client of one Lease, `labels` merged into its own at every write. */
function leaseClient(endpoint: Endpoint, name: string, labels: Readonly<Record<string, string>> | undefined): LeaseClient {
  const { kc, http, base } = endpoint;
  const path = `${base}/${encodeURIComponent(name)}`;
  /**
   * The metadata of the Lease as this client last read or wrote it (client-go's LeaseLock keeps the Lease itself):
   * a write sends it back with only the spec replaced and our labels merged in, so the labels, annotations,
   * ownerReferences and finalizers others set (a Helm chart, `kubectl annotate`) survive every renewal. One
   * answer's worth, bounded by `maxBodyBytes`; `managedFields` are left out (the server keeps them when a write
   * has none).
   */
  let last: Metadata | undefined;
  const remember = (body: unknown): unknown => {
    last = body === null ? undefined : keptMetadata(body);
    return body;
  };
  /** The metadata to send back when quoting `resourceVersion`: the last answer's, else the Lease read now. */
  const metadataAt = (resourceVersion: string, operation: LeaseOperation): Observable<Metadata | undefined> => {
    if (last !== undefined && last['resourceVersion'] === resourceVersion) return of(last);
    // Not known at that resourceVersion (a peer's member Lease released from a listing): read it first, so its
    // metadata is not wiped. The write still quotes `resourceVersion`: if the Lease changed since, it is refused (409).
    return requestJson(kc, path, { method: 'GET', limitOption: 'maxBodyBytes' }, http).pipe(
      map((body) => {
        remember(body);
        return last;
      }),
      catchError((error: unknown) =>
        error instanceof InformerError && error.status === 404 ? of(undefined) : throwError(() => leaseError(error, operation, name)),
      ),
    );
  };
  const object = (record: LeaderElectionRecord, resourceVersion?: string, kept?: Metadata) =>
    leaseObject(endpoint.namespace, name, labels, record, resourceVersion, kept);
  return {
    name,
    get: () =>
      leaseRequest(kc, path, { method: 'GET' }, { operation: 'get', lease: name }, http).pipe(
        map((body) => (body === null ? null : snapshotOf(name, remember(body)))),
      ),
    create: (record) =>
      leaseRequest(kc, base, { method: 'POST', body: object(record) }, { operation: 'create', lease: name }, http).pipe(
        map((body) => snapshotOf(name, remember(body))),
      ),
    update: (resourceVersion, record) => {
      const operation: LeaseOperation = record.holderIdentity === '' ? 'release' : 'update';
      return metadataAt(resourceVersion, operation).pipe(
        switchMap((kept) => {
          const body = object(record, resourceVersion, kept);
          return leaseRequest(kc, path, { method: 'PUT', body }, { operation, lease: name }, http);
        }),
        map((answer) => snapshotOf(name, remember(answer))),
      );
    },
    delete: (resourceVersion) => {
      const body = { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { resourceVersion } };
      return leaseRequest(kc, path, { method: 'DELETE', body }, { operation: 'delete', lease: name }, http).pipe(
        map(() => {
          last = undefined;
        }),
      );
    },
  };
}

/** A Lease to write: `kept` (the metadata last read) with our name, namespace and labels over it, and `record` as its spec. */
function leaseObject(
  namespace: string,
  name: string,
  labels: Readonly<Record<string, string>> | undefined,
  record: LeaderElectionRecord,
  resourceVersion?: string,
  kept: Metadata = {},
) {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      ...kept,
      name,
      namespace,
      ...(labels ? { labels: { ...objectOf(kept['labels']), ...labels } } : {}),
      ...(resourceVersion === undefined ? {} : { resourceVersion }),
    },
    spec: leaseSpec(record),
  };
}

/** Label selectors whose page size a client remembers (a sharding group lists one; more are forgotten oldest first). */
const REMEMBERED_SELECTORS = 16;

/** A listing's page size (`limit`), as the last listing of the same labels left it. */
interface PageSize {
  get(): number;
  set(limit: number): void;
}

/**
 * The page size each label selector's listings start with: {@link LEASE_LIST_PAGE_SIZE} until a page is refused as too
 * large, then what the listing learned, so that the next one (a retry period later) does not ask again for pages it
 * knows to be past `maxBodyBytes` (each refusal reads a whole `maxBodyBytes` before it is cut: 4 MiB, every retry
 * period, on every replica).
 */
class PageSizes {
  private readonly sizes = new Map<string, number>();

  of(selector: string): PageSize {
    return {
      get: () => this.sizes.get(selector) ?? LEASE_LIST_PAGE_SIZE,
      set: (limit) => {
        this.sizes.delete(selector);
        if (limit >= LEASE_LIST_PAGE_SIZE) return;
        if (this.sizes.size >= REMEMBERED_SELECTORS) this.sizes.delete(this.sizes.keys().next().value!);
        this.sizes.set(selector, limit);
      },
    };
  }
}

/**
 * A Lease listing, page by page: the shell of {@link leaseListStep} (whose JSDoc has the rules), doing only the
 * requests and remembering the page size it learns.
 */
function pagedList(
  kc: KubeConfig,
  query: string,
  http: JsonRequestOptions,
  totalBytes: number,
  pageSize: PageSize,
): Observable<readonly LeaseSnapshot[]> {
  const config: LeaseListConfig = { pageBytes: http.maxDocumentBytes ?? DEFAULT_MAX_LEASE_BODY_BYTES, totalBytes };
  return new Observable<readonly LeaseSnapshot[]>((subscriber) => {
    let state = initialLeaseList(pageSize.get());
    let page: Subscription | undefined;
    const feed = (input: LeaseListInput): void => {
      const result = leaseListStep(config, state, input);
      state = result.state;
      for (const effect of result.effects) run(effect);
    };
    const run = (effect: LeaseListEffect): void => {
      switch (effect.type) {
        case 'request': {
          const path = `${query}&limit=${effect.limit}${effect.token === undefined ? '' : `&continue=${encodeURIComponent(effect.token)}`}`;
          const options = effect.maxBytes === undefined ? http : { ...http, maxDocumentBytes: effect.maxBytes };
          page = requestJson(kc, path, { limitOption: 'maxBodyBytes' }, options).subscribe({
            next: (body) => feed({ type: 'page', body }),
            error: (error: unknown) => feed({ type: 'failed', error }),
          });
          return;
        }
        case 'pageSize':
          return pageSize.set(effect.limit);
        case 'listed':
          subscriber.next(effect.leases);
          return subscriber.complete();
        case 'failed':
          return subscriber.error(effect.error);
      }
    };
    feed({ type: 'start' });
    return () => page?.unsubscribe();
  });
}
