/**
 * `startApiServer`: an in-process Kubernetes API server on 127.0.0.1 for tests.
 */
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Server as NetServer, Socket } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { FaultInjector } from './faults.ts';
import { listenHttp2, type Http2Front } from './h2.ts';
import { HttpHandler } from './http.ts';
import { clone, isPlainObject } from './json.ts';
import { metaOf, Objects, type PatchType } from './objects.ts';
import { type RequestPredicate, type RequestRecord, RequestLog } from './requestLog.ts';
import { BUILTIN_RESOURCES, customResourceDef, type ResourceDef, ResourceRegistry } from './resources.ts';
import { objectKey, Store } from './store.ts';
import { TEST_TLS_CERT, TEST_TLS_KEY } from './tls.ts';
import type { CustomResourceDefinitionSpec, Gvr, GvrLike, StoredObject } from './types.ts';
import type { WatchSession } from './watch.ts';
import { gzipSettings, type GzipOption } from './gzip.ts';
import { tracePlayer, type ReplayState, type ReplayTrace } from './replay.ts';

export interface ApiServerOptions {
  /** Require `Authorization: Bearer <token>` (401 otherwise, like 06d). */
  token?: string;
  /**
   * Serve HTTPS: `true` uses the bundled 127.0.0.1 test certificate; or bring your own PEM cert/key,
   * and with `clientCa` require a client certificate signed by it (the TLS handshake fails otherwise).
   */
  tls?: boolean | { cert: string; key: string; clientCa?: string };
  /**
   * Bookmark period for watches with allowWatchBookmarks=true (default 60 000 ms, as kube-apiserver).
   * A bookmark is only sent once the resource changed after the watch began (03c, 03d).
   */
  bookmarkIntervalMs?: number;
  /**
   * The last bookmark comes this long before the watch's timeoutSeconds ends it (default 2000 ms, as
   * kube-apiserver); with a timeout not longer than that, at the deadline, just before the end.
   */
  bookmarkBeforeTimeoutMs?: number;
  /** Events kept per resource for watch replay and lists at older revisions (default 10 000). */
  historyLimit?: number;
  /** Support streaming lists (sendInitialEvents=true, default). `false` behaves like v1.20 (422, 05a/05b). */
  sendInitialEvents?: boolean;
  /**
   * Serve metadata-only answers (`Accept: …;as=PartialObjectMetadata(List);g=meta.k8s.io;v=v1`), as
   * kube-apiserver does since 1.15. Default true; `false` plays an older server: the `as=` clause is
   * skipped, so a request with a fallback gets full objects and one without gets 406 (10c).
   */
  partialObjectMetadata?: boolean;
  /** Create missing namespaces on create (default true). `false`: 404 like 06j. */
  autoCreateNamespaces?: boolean;
  /** Namespaces created at start. */
  namespaces?: string[];
  /** Custom resources registered at start. */
  resources?: CustomResourceDefinitionSpec[];
  /** Watch timeout when the request has no timeoutSeconds (default: none). */
  defaultWatchTimeoutMs?: number;
  /**
   * How long an idle kept-alive HTTP/1.1 connection stays open (default: Node's 5 s). A test whose client may
   * stall for seconds (a loaded machine) sets it longer, so that reusing a connection does not race its close.
   */
  keepAliveTimeoutMs?: number;
  /** The revision of the empty store (default 1; the first write gets 2). */
  startResourceVersion?: number;
  /** Port on 127.0.0.1 (default 0: any free port). */
  port?: number;
  /**
   * Speak HTTP/2 (ALPN `h2`, with `http/1.1` for clients that do not ask for it) over TLS; implies
   * `tls: true` unless `tls` is given. The server's `http2` then counts sessions and streams and can
   * black-hole connections or send GOAWAY (see ./h2.ts).
   */
  http2?: boolean | { maxConcurrentStreams?: number };
  /**
   * Gzip answers for clients that send `Accept-Encoding: gzip`, as kube-apiserver: GET and list bodies over
   * 128 KiB at level 1 (default `true`). `{ minBytes, level }` tune it; `{ watch: true }` gzips watch streams
   * too (kube-apiserver does not), flushed with every write. `false`: never.
   */
  gzip?: GzipOption;
  /**
   * Answer list and watch requests for the resources of this rx-informer trace (its text, or `{ file }`: read a
   * line at a time as it is played) from the trace, in order and at their recorded offsets (see ./replay.ts);
   * everything else as usual. Replayed requests are not in `requests`; `replay` says what could not be answered.
   */
  replay?: ReplayTrace;
}

export interface ApiServer {
  /** `http://127.0.0.1:PORT` or `https://…`. */
  readonly url: string;
  readonly port: number;
  /** A ready KubeConfig for @kubernetes/client-node (context `emulator`, namespace `default`). */
  readonly kubeConfig: KubeConfig;
  /** PEM of the CA that signed the server certificate (TLS only). */
  readonly caPem: string | undefined;
  /** The current global revision, as a string. */
  readonly resourceVersion: string;
  /** The current global revision. */
  readonly revision: number;
  readonly faults: FaultInjector;
  /** The request log (live, in order). */
  readonly requests: readonly RequestRecord[];
  /** Number of open watch responses. */
  readonly activeWatches: number;
  /** Number of open client connections (TCP, or TLS once the handshake is done). */
  readonly openConnections: number;
  /** Number of client connections accepted since the start (a reused keep-alive connection counts once). */
  readonly acceptedConnections: number;
  /** The HTTP/2 front (with `http2: true`): sessions, streams, black-holing, GOAWAY. */
  readonly http2: Http2Front | undefined;
  /** With `replay`: the requests the trace could not answer, and the recorded ones not yet asked for. */
  readonly replay: ReplayState | undefined;
  /**
   * Accept another bearer token from now on (`undefined`: no token needed). Open watches
   * carry on, as a real API server's do; the next request with the old token gets 401.
   */
  setToken(token: string | undefined): void;
  clearRequests(): void;
  /** The first logged request (already logged or future) matching `pred`. */
  waitForRequest(pred: RequestPredicate, timeoutMs?: number): Promise<RequestRecord>;
  /** The next request logged from now on matching `pred`. */
  nextRequest(pred: RequestPredicate, timeoutMs?: number): Promise<RequestRecord>;
  create<T extends StoredObject>(gvr: GvrLike, obj: T): T & StoredObject;
  /** PUT semantics (409 on a stale resourceVersion, no check when it is empty); writes spec and status in one revision. */
  update<T extends StoredObject>(gvr: GvrLike, obj: T): T & StoredObject;
  /** PUT …/status semantics: only the status changes. */
  updateStatus<T extends StoredObject>(gvr: GvrLike, obj: T): T & StoredObject;
  /** Merge patch by default; `'json'` for RFC 6902. Patches status too (unlike a PATCH over HTTP). */
  patch(gvr: GvrLike, namespace: string | undefined, name: string, patch: unknown, type?: PatchType): StoredObject;
  /** Deletes (or, with finalizers, marks for deletion). Returns the last state. */
  delete(gvr: GvrLike, namespace: string | undefined, name: string): StoredObject;
  get(gvr: GvrLike, namespace: string | undefined, name: string): StoredObject | undefined;
  /** Stored objects sorted by key; all namespaces when `namespace` is omitted. */
  list(gvr: GvrLike, namespace?: string): StoredObject[];
  /** Drops history before `rv` (default: now; etcd keeps `rv` itself): watches from before `rv - 1`, continue tokens and Exact lists before `rv` get 410. */
  compact(rv?: number | string): void;
  /** Registers (serves, adds to discovery) a custom resource; creates its CRD object. */
  registerCustomResource(spec: CustomResourceDefinitionSpec): Gvr;
  /** Ends every open watch: cleanly (default) or by dropping the connection. Returns how many. */
  closeWatches(opts?: { clean?: boolean }): number;
  /**
   * Plays a control-plane restart: stops listening, so new connections are refused (`ECONNREFUSED`, as with no
   * kube-apiserver on the port), and drops every open connection, open watches included. Objects and history
   * are kept (etcd survives the restart). Resolves once the port is closed. Idempotent.
   */
  down(): Promise<void>;
  /** After `down()`: listens again, on the same port. Idempotent. */
  up(): Promise<void>;
  /** Between `down()` and `up()`. */
  readonly isDown: boolean;
  /** Ends every response, frees every socket and timer. */
  close(): Promise<void>;
}

function crdObject(spec: CustomResourceDefinitionSpec): StoredObject {
  const names: Record<string, unknown> = { plural: spec.plural, singular: spec.singular ?? spec.kind.toLowerCase() };
  if (spec.shortNames?.length) names['shortNames'] = spec.shortNames;
  names['kind'] = spec.kind;
  names['listKind'] = spec.listKind ?? `${spec.kind}List`;
  if (spec.categories?.length) names['categories'] = spec.categories;
  const version: Record<string, unknown> = { name: spec.version, served: true, storage: true };
  version['schema'] = { openAPIV3Schema: spec.schema ?? { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } };
  if (spec.subresources?.status) version['subresources'] = { status: {} };
  return {
    kind: 'CustomResourceDefinition',
    apiVersion: 'apiextensions.k8s.io/v1',
    metadata: { name: `${spec.plural}.${spec.group}` },
    spec: { group: spec.group, names, scope: spec.namespaced === false ? 'Cluster' : 'Namespaced', versions: [version] },
  };
}

/** The resource definitions a CRD object declares. */
function defsOfCrd(crd: StoredObject): ResourceDef[] {
  const spec = isPlainObject(crd['spec']) ? crd['spec'] : {};
  const names = isPlainObject(spec['names']) ? spec['names'] : {};
  const versions = Array.isArray(spec['versions']) ? spec['versions'] : [];
  const out: ResourceDef[] = [];
  for (const v of versions) {
    if (!isPlainObject(v) || v['served'] === false || typeof v['name'] !== 'string') continue;
    const schemaWrap = isPlainObject(v['schema']) ? v['schema'] : {};
    const schema = isPlainObject(schemaWrap['openAPIV3Schema']) ? schemaWrap['openAPIV3Schema'] : undefined;
    const subresources = isPlainObject(v['subresources']) ? v['subresources'] : {};
    out.push(
      customResourceDef({
        group: String(spec['group']),
        version: v['name'],
        plural: String(names['plural']),
        singular: typeof names['singular'] === 'string' ? names['singular'] : undefined,
        kind: String(names['kind']),
        listKind: typeof names['listKind'] === 'string' ? names['listKind'] : undefined,
        shortNames: Array.isArray(names['shortNames']) ? (names['shortNames'] as string[]) : [],
        categories: Array.isArray(names['categories']) ? (names['categories'] as string[]) : [],
        namespaced: spec['scope'] !== 'Cluster',
        ...(schema ? { schema: schema as CustomResourceDefinitionSpec['schema'] } : {}),
        subresources: { status: subresources['status'] !== undefined },
      }),
    );
  }
  return out;
}

export async function startApiServer(options: ApiServerOptions = {}): Promise<ApiServer> {
  const registry = new ResourceRegistry(BUILTIN_RESOURCES);
  const store = new Store({ historyLimit: options.historyLimit ?? 10_000, startRevision: options.startResourceVersion ?? 1 });
  const sessions = new Set<WatchSession>();
  const draining = new Set<WatchSession>();
  const pendingTimers = new Set<NodeJS.Timeout>();
  const log = new RequestLog();
  const faults = new FaultInjector(() => sessions);
  let closing = false;
  let port = 0;
  let token = options.token;

  const onCrd = (event: 'created' | 'deleted', crd: StoredObject): void => {
    const defs = defsOfCrd(crd);
    if (event === 'created') {
      for (const d of defs) registry.add(d);
      return;
    }
    for (const d of defs) {
      const existing = registry.get(d.group, d.version, d.plural);
      if (!existing) continue;
      const coll = store.collection(existing);
      for (const key of [...coll.sortedKeys()]) objects.forceDelete(coll, key, coll.items.get(key)!);
      for (const s of [...sessions]) if (s.def === existing) s.end('server-close');
      registry.remove(existing);
      store.dropCollection(existing);
    }
  };
  const objects: Objects = new Objects(store, registry, {
    autoCreateNamespaces: options.autoCreateNamespaces ?? true,
    onCrd,
  });

  const handler = new HttpHandler({
    store,
    registry,
    objects,
    faults,
    log,
    sessions,
    draining,
    pendingTimers,
    get token() {
      return token;
    },
    bookmarkIntervalMs: options.bookmarkIntervalMs ?? 60_000,
    bookmarkBeforeTimeoutMs: options.bookmarkBeforeTimeoutMs ?? 2000,
    defaultWatchTimeoutMs: options.defaultWatchTimeoutMs,
    sendInitialEvents: options.sendInitialEvents ?? true,
    partialObjectMetadata: options.partialObjectMetadata ?? true,
    gzip: gzipSettings(options.gzip),
    serverAddress: () => `127.0.0.1:${port}`,
    isClosing: () => closing,
  });

  const tls =
    options.tls === true || (options.http2 && !options.tls) ? { cert: TEST_TLS_CERT, key: TEST_TLS_KEY } : options.tls || undefined;
  const player = options.replay === undefined ? undefined : tracePlayer(options.replay);
  const listener = (req: Parameters<typeof handler.handle>[0], res: Parameters<typeof handler.handle>[1]): void => {
    // A replayed request is authorized as any other: without the token it gets the handler's 401.
    const authorized = token === undefined || req.headers['authorization'] === `Bearer ${token}`;
    if (player && authorized && player.answer(req, res)) return;
    handler.handle(req, res);
  };
  const clientCa = tls && 'clientCa' in tls ? tls.clientCa : undefined;
  const h2Settings = options.http2 === true ? {} : options.http2;
  const h2 = h2Settings && tls ? await listenHttp2({ ...tls, clientCa }, listener, options.port ?? 0, h2Settings) : undefined;
  const server: Server = tls
    ? createHttpsServer(
        { cert: tls.cert, key: tls.key, ...(clientCa ? { ca: clientCa, requestCert: true, rejectUnauthorized: true } : {}) },
        listener,
      )
    : createHttpServer(listener);
  if (options.keepAliveTimeoutMs !== undefined) server.keepAliveTimeout = options.keepAliveTimeoutMs;
  const sockets = new Set<Socket>();
  let accepted = 0;
  server.on(tls ? 'secureConnection' : 'connection', (s: Socket) => {
    accepted++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  if (!h2) {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  }
  port = h2 ? h2.port : (server.address() as AddressInfo).port;
  const url = `${tls ? 'https' : 'http'}://127.0.0.1:${port}`;

  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [
      {
        name: 'emulator',
        server: url,
        skipTLSVerify: !tls,
        ...(tls ? { caData: Buffer.from(tls.cert).toString('base64') } : {}),
      },
    ],
    users: [{ name: 'emulator', ...(options.token !== undefined ? { token: options.token } : {}) }],
    contexts: [{ name: 'emulator', cluster: 'emulator', user: 'emulator', namespace: 'default' }],
    currentContext: 'emulator',
  });

  const resolveDef = (gvr: GvrLike): ResourceDef => registry.resolve(gvr);
  const nsOf = (def: ResourceDef, obj: StoredObject): string | undefined =>
    def.namespaced ? (metaOf(obj).namespace ?? 'default') : undefined;
  const nameOf = (obj: StoredObject): string => {
    const n = metaOf(obj).name;
    if (!n) throw new Error('metadata.name is required');
    return n;
  };

  const registerCustomResource = (spec: CustomResourceDefinitionSpec): Gvr => {
    if (registry.get(spec.group, spec.version, spec.plural)) {
      throw new Error(`${spec.plural}.${spec.group}/${spec.version} is already registered`);
    }
    const crdDef = registry.get('apiextensions.k8s.io', 'v1', 'customresourcedefinitions')!;
    const name = `${spec.plural}.${spec.group}`;
    const existing = objects.find(crdDef, undefined, name);
    if (existing) {
      // Another version of a known CRD: add it to the CRD object and serve it.
      const crd = clone(existing);
      const versions = (crd['spec'] as { versions: Record<string, unknown>[] }).versions;
      const v = (crdObject(spec)['spec'] as { versions: Record<string, unknown>[] }).versions[0]!;
      versions.push({ ...v, storage: false });
      objects.update(crdDef, undefined, name, crd);
      registry.add(customResourceDef(spec));
    } else {
      objects.create(crdDef, undefined, crdObject(spec));
    }
    return { group: spec.group, version: spec.version, resource: spec.plural };
  };

  for (const ns of options.namespaces ?? []) {
    const nsDef = registry.get('', 'v1', 'namespaces')!;
    if (!objects.find(nsDef, undefined, ns)) objects.create(nsDef, undefined, { metadata: { name: ns } });
  }
  for (const r of options.resources ?? []) registerCustomResource(r);

  let closed: Promise<void> | undefined;
  const listening: NetServer = h2 ? h2.listener : server;
  let outage: Promise<void> | undefined;
  const down = async (): Promise<void> => {
    if (outage) return outage;
    outage = new Promise<void>((resolve) => listening.close(() => resolve()));
    // The connections first, as a process that dies: no stream is reset or ended on the way.
    if (h2) h2.front.destroyAll();
    else {
      server.closeAllConnections();
      for (const s of sockets) s.destroy();
    }
    for (const s of [...sessions]) s.destroy();
    return outage;
  };
  const up = async (): Promise<void> => {
    if (!outage) return;
    await outage;
    await new Promise<void>((resolve, reject) => {
      listening.once('error', reject);
      listening.listen(port, '127.0.0.1', () => {
        listening.off('error', reject);
        resolve();
      });
    });
    outage = undefined;
  };

  const api: ApiServer = {
    url,
    port,
    kubeConfig,
    caPem: tls?.cert,
    get resourceVersion() {
      return String(store.revision);
    },
    get revision() {
      return store.revision;
    },
    faults,
    get requests() {
      return log.entries;
    },
    get activeWatches() {
      return sessions.size;
    },
    get openConnections() {
      return h2 ? h2.front.openConnections : sockets.size;
    },
    get acceptedConnections() {
      return h2 ? h2.front.acceptedConnections : accepted;
    },
    http2: h2?.front,
    replay: player?.state,
    setToken(next) {
      token = next;
    },
    clearRequests: () => log.clear(),
    waitForRequest: (pred, timeoutMs = 5000) => log.wait(pred, timeoutMs, true),
    nextRequest: (pred, timeoutMs = 5000) => log.wait(pred, timeoutMs, false),
    create<T extends StoredObject>(gvr: GvrLike, obj: T): T & StoredObject {
      const def = resolveDef(gvr);
      return clone(objects.create(def, nsOf(def, obj), obj)) as T;
    },
    update<T extends StoredObject>(gvr: GvrLike, obj: T): T & StoredObject {
      const def = resolveDef(gvr);
      const ns = nsOf(def, obj);
      // The programmatic update writes the whole object, status included, in one revision.
      return clone(objects.update(def, ns, nameOf(obj), obj, { whole: true })) as T;
    },
    updateStatus<T extends StoredObject>(gvr: GvrLike, obj: T): T & StoredObject {
      const def = resolveDef(gvr);
      return clone(objects.update(def, nsOf(def, obj), nameOf(obj), obj, { subresource: 'status' })) as T;
    },
    patch(gvr, namespace, name, patch, type = 'merge') {
      const def = resolveDef(gvr);
      const ns = def.namespaced ? (namespace ?? 'default') : undefined;
      return clone(objects.patch(def, ns, name, type, patch, { whole: true }));
    },
    delete(gvr, namespace, name) {
      const def = resolveDef(gvr);
      return clone(objects.delete(def, def.namespaced ? (namespace ?? 'default') : undefined, name).object);
    },
    get(gvr, namespace, name) {
      const def = resolveDef(gvr);
      const obj = store.collection(def).items.get(objectKey(def, def.namespaced ? (namespace ?? 'default') : undefined, name));
      return obj ? clone(obj) : undefined;
    },
    list(gvr, namespace) {
      const def = resolveDef(gvr);
      const coll = store.collection(def);
      const prefix = def.namespaced && namespace !== undefined ? `${namespace}/` : '';
      const out: StoredObject[] = [];
      for (const key of coll.sortedKeys()) if (!prefix || key.startsWith(prefix)) out.push(coll.items.get(key)!);
      return clone(out);
    },
    compact(rv) {
      store.compact(rv === undefined ? undefined : Number(rv));
    },
    registerCustomResource,
    down,
    up,
    get isDown() {
      return outage !== undefined;
    },
    closeWatches(opts = {}) {
      const open = [...sessions];
      for (const s of open) {
        if (opts.clean === false) s.destroy();
        else s.end('server-close');
      }
      return open.length;
    },
    close() {
      closed ??= (async () => {
        closing = true;
        log.cancelWaits('the API server emulator was closed');
        player?.close();
        for (const t of pendingTimers) clearTimeout(t);
        pendingTimers.clear();
        for (const s of [...sessions]) {
          s.end('server-close');
          s.dispose();
        }
        sessions.clear();
        for (const s of [...draining]) s.dispose();
        if (h2) {
          await new Promise<void>((resolve) => setImmediate(resolve));
          await h2.close();
          return;
        }
        const done = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        // Give ended responses a moment to flush, then free every socket.
        await new Promise<void>((resolve) => setImmediate(resolve));
        server.closeAllConnections();
        for (const s of sockets) s.destroy();
        await done;
      })();
      return closed;
    },
  };
  return api;
}
