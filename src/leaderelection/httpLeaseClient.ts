import type { KubeConfig } from '@kubernetes/client-node';
import { catchError, map, Observable, of, switchMap, throwError, type Subscription } from 'rxjs';
import { InformerError, isExpired } from '../0-model/errors.ts';
import {
  DEFAULT_MAX_DOCUMENT_BYTES,
  defaultMaxListTotalBytes,
  formatBytes,
  requestJson,
  type HttpProtocol,
  type JsonRequestOptions,
} from '../1-transport/httpTransport.ts';
import { MAX_CONTINUE_TOKEN_CHARS } from '../1-transport/listWatch.ts';
import { tokenId } from '../util/tokenId.ts';
import { LeaseError, type LeaseOperation } from './errors.ts';
import type { LeaseClient, LeaseClients } from './leaseClient.ts';
import { leaseSpec, recordOf, SHARDS_LABEL, type LeaderElectionRecord, type LeaseSnapshot } from './record.ts';

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

/** Leases a list page asks for (`limit`): the informers' page size, client-go's pager's default. */
export const LEASE_LIST_PAGE_SIZE = 500;
/**
 * Pages one Lease listing reads at most, restarts after a 410 included: 50,000 members at a full page each, far past
 * any group (each member writes its Lease every retry period); a server that sends continue tokens with few or no
 * Leases ends here instead of never.
 */
export const MAX_LEASE_LIST_PAGES = 100;

/**
 * Bytes a listing charges for each Lease it keeps, when that is more than its page's bytes: about half what the
 * smallest kept one takes (as the informers' lists charge, listBudget.ts): a `LeaseSnapshot` of an item with only a name
 * is 130–155 bytes of heap (measured with `--expose-gc` over a million, Node 24) against 26 bytes on the wire. Before,
 * a listing was charged its bytes alone and kept every item, `{}` too: 20 MiB charged was 943 MiB of heap (found by
 * review). A real member Lease is several hundred bytes on the wire, and is charged its bytes.
 */
export const CHARGE_PER_LEASE = 64;

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

/** A Lease's `metadata` as sent back with a write. */
type Metadata = Readonly<Record<string, unknown>>;

/** The metadata of a Lease answer to send back with the next write: all of it but `managedFields` (the server keeps those). */
function keptMetadata(body: unknown): Metadata {
  const { managedFields: _managed, ...metadata } = objectOf(objectOf(body)['metadata']);
  return metadata;
}

function snapshotOf(name: string, body: unknown, withLabels = false): LeaseSnapshot {
  const lease = objectOf(body);
  const metadata = objectOf(lease['metadata']);
  const rv = metadata['resourceVersion'];
  const snapshot = {
    name: typeof metadata['name'] === 'string' ? metadata['name'] : name,
    resourceVersion: typeof rv === 'string' ? rv : '',
    record: recordOf(lease['spec']),
  };
  if (!withLabels) return snapshot;
  // The shard count's label only: the snapshots are held until the listing ends, a peer's other labels need not be.
  const count = objectOf(metadata['labels'])[SHARDS_LABEL];
  return { ...snapshot, labels: typeof count === 'string' ? { [SHARDS_LABEL]: count } : {} };
}

/**
 * Leases of one namespace over HTTP (coordination.k8s.io/v1), through a
 * KubeConfig and the HTTP transport: GET, POST, PUT with the resourceVersion read, DELETE with it as a precondition,
 * list by label.
 */
export function httpLeaseClients(kc: KubeConfig, options: HttpLeaseOptions = {}): LeaseClients {
  const namespace = options.namespace ?? (kc.getContextObject(kc.getCurrentContext())?.namespace || 'default');
  const http = transportOptions(options);
  const totalBytes =
    options.maxListTotalBytes !== undefined && options.maxListTotalBytes > 0 ? options.maxListTotalBytes : defaultMaxListTotalBytes();
  const base = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases`;
  const pageSizes = new PageSizes();
  const leaseObject = (
    name: string,
    labels: Readonly<Record<string, string>> | undefined,
    record: LeaderElectionRecord,
    resourceVersion?: string,
    kept: Metadata = {},
  ) => ({
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
  });
  return {
    lease(name, labels): LeaseClient {
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
      return {
        name,
        get: () =>
          leaseRequest(kc, path, { method: 'GET' }, { operation: 'get', lease: name }, http).pipe(
            map((body) => (body === null ? null : snapshotOf(name, remember(body)))),
          ),
        create: (record) =>
          leaseRequest(
            kc,
            base,
            { method: 'POST', body: leaseObject(name, labels, record) },
            { operation: 'create', lease: name },
            http,
          ).pipe(map((body) => snapshotOf(name, remember(body)))),
        update: (resourceVersion, record) => {
          const operation: LeaseOperation = record.holderIdentity === '' ? 'release' : 'update';
          return metadataAt(resourceVersion, operation).pipe(
            switchMap((kept) => {
              const body = leaseObject(name, labels, record, resourceVersion, kept);
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
    },
    list(labels) {
      const selector = Object.entries(labels)
        .map(([k, v]) => `${k}=${v}`)
        .join(',');
      const query = `${base}?labelSelector=${encodeURIComponent(selector)}`;
      return pagedList(kc, query, http, totalBytes, pageSizes.of(selector));
    },
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
 * A Lease listing, page by page (`limit` and `continue`, as the informers' pager): a group whose member Leases are past
 * one body's bound is listed all the same. The chain is bounded as the informers' list chain is: its pages' bytes
 * together (each page's limit is what is left of `totalBytes`), its pages, and a repeated continue token, each a
 * `ListTooLong`. A 410 on a continue token (it expired) starts the listing again from its first page, as client-go's
 * pager falls back to a full list, once (a second expired token fails the listing with its 410); what the first attempt
 * read still counts against the bounds.
 *
 * A page refused by its own bound (`maxBodyBytes`: Leases whose annotations other tools fill, 100 KB each, 500 to a
 * page) is asked again at once, same continue token, for half as many Leases, down to one, and the rest of the listing
 * keeps the smaller `limit` (a refusal costs a page's bytes read, and no more than ⌊log2 500⌋ + 1 = 9 requests are
 * ever refused in a listing); the next listing starts from it, twice it once its largest page was at most a quarter of
 * the bound. One Lease alone past the bound fails the listing (`ResponseTooLarge`, naming the Lease before it: the body
 * is cut unread, and its continue token with it, so there is no skipping it). A page refused by the whole listing's
 * budget is a hard stop (`ListTooLong`): a smaller page brings the same Leases.
 */
function pagedList(
  kc: KubeConfig,
  query: string,
  http: JsonRequestOptions,
  totalBytes: number,
  pageSize: PageSize,
): Observable<readonly LeaseSnapshot[]> {
  const pageBytes = http.maxDocumentBytes ?? DEFAULT_MAX_LEASE_BODY_BYTES;
  const tooLong = (why: string) => new LeaseError('ListTooLong', 'list', '*', why);
  return new Observable<readonly LeaseSnapshot[]>((subscriber) => {
    const leases: LeaseSnapshot[] = [];
    const tokens = new Set<string>();
    let pages = 0;
    let bytes = 0;
    let dropped = 0;
    let limit = Math.max(1, Math.min(LEASE_LIST_PAGE_SIZE, Math.floor(pageSize.get())));
    /** The largest page read, in bytes as parsed: the next listing's page size grows from it. */
    let largest = 0;
    /** Whether a page was refused (then the next listing starts with this one's page size, not twice it). */
    let refused = false;
    /** Whether an expired continue token already restarted this listing (a second one fails with the 410 itself). */
    let restarted = false;
    let page: Subscription | undefined;
    const nameless = () => (dropped === 0 ? '' : `, ${dropped.toLocaleString('en-US')} items without a name dropped`);
    const sofar = () => `${pages.toLocaleString('en-US')} pages, ${bytes} bytes${nameless()}`;
    /**
     * What the next listing starts with: twice this one's page size when it read pages, none refused, the largest a
     * quarter of the bound at most (Leases that shrank; a listing cut short at 100 pages of one Lease grows too).
     */
    const learn = () => {
      if (!refused && pages > 0 && largest <= pageBytes / 4 && limit < LEASE_LIST_PAGE_SIZE)
        pageSize.set(Math.min(LEASE_LIST_PAGE_SIZE, limit * 2));
    };
    const fail = (error: LeaseError) => {
      learn();
      subscriber.error(error);
    };
    const ask = (token: string | undefined): void => {
      if (pages >= MAX_LEASE_LIST_PAGES) return fail(tooLong(`the listing went on past ${MAX_LEASE_LIST_PAGES} pages (${sofar()})`));
      const left = totalBytes - bytes;
      const byBudget = left < pageBytes;
      const path = `${query}&limit=${limit}${token === undefined ? '' : `&continue=${encodeURIComponent(token)}`}`;
      const options = byBudget ? { ...http, maxDocumentBytes: Math.max(1, left) } : http;
      page = requestJson(kc, path, { limitOption: 'maxBodyBytes' }, options).subscribe({
        next: (body) => {
          pages++;
          const object = objectOf(body);
          const items = object['items'];
          let kept = 0;
          if (Array.isArray(items))
            for (const item of items) {
              // No name, no member Lease (nor any Lease): not kept (`{}` is 3 bytes, and was 130 of heap as a snapshot).
              const name = objectOf(objectOf(item)['metadata'])['name'];
              if (typeof name !== 'string' || name === '') {
                dropped++;
                continue;
              }
              leases.push(snapshotOf(name, item, true));
              kept++;
            }
          // The page as parsed, written back: its bytes but for whitespace (the transport keeps the count it read), or
          // its Leases' charge when more (CHARGE_PER_LEASE).
          const size = Buffer.byteLength(JSON.stringify(body) ?? '');
          largest = Math.max(largest, size);
          bytes += Math.max(size, CHARGE_PER_LEASE * kept);
          if (bytes > totalBytes)
            return fail(
              tooLong(
                `the listing is larger than the ${formatBytes(totalBytes)} limit for a whole listing (${sofar()}, ` +
                  `${leases.length.toLocaleString('en-US')} Leases charged at least ${CHARGE_PER_LEASE} bytes each); option maxListTotalBytes`,
              ),
            );
          const next = objectOf(object['metadata'])['continue'];
          if (typeof next !== 'string' || next === '') {
            learn();
            subscriber.next(leases);
            return subscriber.complete();
          }
          if (next.length > MAX_CONTINUE_TOKEN_CHARS)
            return fail(
              new LeaseError(
                'MalformedLine',
                'list',
                '*',
                `the server's continue token is ${next.length.toLocaleString('en-US')} characters, over the ` +
                  `${MAX_CONTINUE_TOKEN_CHARS.toLocaleString('en-US')} sent back to it (after ${sofar()}); not asked for`,
              ),
            );
          const id = tokenId(next);
          if (tokens.has(id)) return fail(tooLong(`the server repeated a continue token (after ${sofar()})`));
          tokens.add(id);
          ask(next);
        },
        error: (error: unknown) => {
          const tooLarge = error instanceof InformerError && error.reason === 'ResponseTooLarge' && error.status === 200;
          if (tooLarge && byBudget)
            return fail(
              tooLong(
                `the listing is larger than the ${formatBytes(totalBytes)} limit for a whole listing (${sofar()}, then more); option maxListTotalBytes`,
              ),
            );
          if (tooLarge && limit > 1) {
            // Refused by its own bound: the same page again, half as many Leases (kept for the rest, and remembered).
            refused = true;
            limit = Math.floor(limit / 2);
            pageSize.set(limit);
            return ask(token);
          }
          if (tooLarge) {
            const last = leases.at(-1)?.name;
            const which = last === undefined ? 'the first Lease listed' : `the Lease after ${last} (in name order)`;
            const why = `${which} alone is larger than the ${formatBytes(pageBytes)} limit for a page; option maxBodyBytes (${sofar()})`;
            return fail(new LeaseError('ResponseTooLarge', 'list', '*', why, 200, { request: error.request, cause: error }));
          }
          if (token === undefined || restarted || !(error instanceof InformerError) || !isExpired(error))
            return fail(leaseError(error, 'list', '*'));
          // The continue token expired: the listing again from its start (a new snapshot), its bounds kept; once, as
          // client-go's pager falls back to one full list (a server expiring every token would otherwise be listed
          // from the start until the page bound, and the error would blame the listing's length).
          restarted = true;
          leases.length = 0;
          tokens.clear();
          ask(undefined);
        },
      });
    };
    ask(undefined);
    return () => page?.unsubscribe();
  });
}
