/**
 * HTTP front end: routing, authentication, fault injection, request logging,
 * and the handlers for discovery, objects, lists and watches.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import * as discovery from './discovery.ts';
import type { Fault, FaultInjector, FaultRequestInfo } from './faults.ts';
import { isWatchFault } from './faults.ts';
import { isPlainObject } from './json.ts';
import { encodeList, list, parseRv } from './list.ts';
import { type Objects, patchTypeOf, ref } from './objects.ts';
import type { RequestLog, RequestRecord } from './request-log.ts';
import type { ResourceDef, ResourceRegistry } from './resources.ts';
import { type Route, route } from './routes.ts';
import { type FieldSelector, parseFieldSelector, parseLabelSelector } from './selectors.ts';
import {
  ApiError,
  badRequest,
  failure,
  internalError,
  invalidListOptions,
  methodNotAllowed,
  notFound,
  pathNotFound,
  statusForCode,
  successStatus,
  tooLargeResourceVersion,
  tooManyRequests,
  unauthorized,
  watchTooOld,
} from './status.ts';
import { negotiate, type Target } from './negotiate.ts';
import { builtinItemJson, objectJson, partialJson, type Store } from './store.ts';
import type { KubeObject } from './types.ts';
import { errorLine, matchesFilter, type WatchFilter, WatchSession } from './watch.ts';

export interface HttpCore {
  readonly store: Store;
  readonly registry: ResourceRegistry;
  readonly objects: Objects;
  readonly faults: FaultInjector;
  readonly log: RequestLog;
  readonly sessions: Set<WatchSession>;
  readonly draining: Set<WatchSession>;
  readonly pendingTimers: Set<NodeJS.Timeout>;
  readonly token: string | undefined;
  readonly bookmarkIntervalMs: number;
  readonly bookmarkBeforeTimeoutMs: number;
  readonly defaultWatchTimeoutMs: number | undefined;
  readonly sendInitialEvents: boolean;
  readonly partialObjectMetadata: boolean;
  serverAddress(): string;
  isClosing(): boolean;
}

const MAX_BODY = 3 * 1024 * 1024;
/** Go's net/http sends Content-Length when the whole body fits its 2 KiB buffer, else chunked. */
const CHUNK_THRESHOLD = 2048;

function queryOf(url: URL): Record<string, string> {
  const q: Record<string, string> = {};
  for (const [k, v] of url.searchParams) q[k] = v;
  return q;
}

const truthy = (v: string | undefined): boolean => v === 'true' || v === '1';

/** Handles one request. Never throws. */
export class HttpHandler {
  private readonly core: HttpCore;
  private readonly flowSchemaUid = randomUUID();
  private readonly priorityLevelUid = randomUUID();

  constructor(core: HttpCore) {
    this.core = core;
  }

  handle(req: IncomingMessage, res: ServerResponse): void {
    void this.dispatch(req, res).catch((err: unknown) => {
      // Last resort: never leave a request hanging.
      if (!res.headersSent && !res.destroyed) {
        const e = err instanceof ApiError ? err : internalError(String((err as Error)?.message ?? err));
        res.writeHead(e.code, { 'Content-Type': 'application/json' });
        res.end(`${JSON.stringify(e.status)}\n`);
      } else if (!res.writableEnded) res.destroy();
    });
  }

  private async dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const core = this.core;
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const method = (req.method ?? 'GET').toUpperCase();
    const query = queryOf(url);
    let r: Route;
    try {
      r = route(core.registry, url.pathname);
    } catch {
      r = { kind: 'notFound' };
    }
    const watch =
      r.kind === 'resource' && method === 'GET' && r.subresource === undefined && (r.watchPath === true || truthy(query['watch']));
    const info: FaultRequestInfo = {
      method,
      path: url.pathname,
      query,
      watch,
      group: r.group,
      version: r.version,
      resource: r.def?.plural,
      namespace: r.namespace,
      name: r.name,
      subresource: r.subresource,
    };
    const ctx: Ctx = {
      req,
      res,
      info,
      pretty: (req.headers['user-agent'] ?? '').startsWith('curl/'),
      apf: !watch,
      fault: undefined,
      faultId: undefined,
    };

    const picked = core.faults.take(info);
    if (picked) {
      ctx.fault = picked.fault;
      ctx.faultId = picked.ruleId;
      const done = await this.applyRequestFault(ctx, picked.fault);
      if (done) return;
    }

    if (core.token !== undefined) {
      const auth = req.headers['authorization'] ?? '';
      const m = /^bearer\s+(.+)$/i.exec(auth);
      if (!m || m[1]!.trim() !== core.token) {
        ctx.apf = false;
        req.resume();
        this.sendError(ctx, unauthorized());
        return;
      }
    }

    try {
      await this.serve(ctx, r, method, query, watch);
    } catch (err) {
      if (err instanceof ApiError) this.sendError(ctx, err);
      else this.sendError(ctx, internalError(String((err as Error)?.message ?? err)));
    }
  }

  /** Returns true when the fault answered the request. */
  private async applyRequestFault(ctx: Ctx, fault: Fault): Promise<boolean> {
    switch (fault.type) {
      case 'status': {
        ctx.req.resume();
        const err =
          fault.code === 429
            ? tooManyRequests(fault.retryAfterSeconds ?? 1, fault.message)
            : statusForCode(fault.code, fault.message, fault.reason);
        const headers = { ...err.headers };
        if (fault.retryAfterSeconds !== undefined) headers['Retry-After'] = String(fault.retryAfterSeconds);
        this.sendError(ctx, new ApiError(err.status, headers));
        return true;
      }
      case 'reset':
        this.record(ctx, 0);
        ctx.req.socket.destroy();
        return true;
      case 'delay':
        await new Promise<void>((resolve) => {
          const t = setTimeout(() => {
            this.core.pendingTimers.delete(t);
            resolve();
          }, fault.ms);
          this.core.pendingTimers.add(t);
        });
        return this.core.isClosing() || ctx.res.destroyed;
      case 'tooLargeResourceVersion': {
        // Only lists and streaming lists at resourceVersion N > 0 take this fault (FAULT_KINDS).
        ctx.req.resume();
        const rv = Number(ctx.info.query['resourceVersion']);
        const current = fault.current ?? (this.core.store.revision < rv ? this.core.store.revision : rv - 1);
        const err = tooLargeResourceVersion(rv, current);
        if (ctx.info.watch) this.sendWatchError(ctx, err, 'fault');
        else this.sendError(ctx, err);
        return true;
      }
      case 'dropWatch':
      case 'stallWatch':
      case 'malformedLine':
      case 'oversizeLine':
      case 'closeWatch':
      case 'expireWatch':
      case 'slowWatch':
        return false; // applied by the watch stream
      default: {
        const unhandled: never = fault;
        throw new Error(`unhandled fault ${JSON.stringify(unhandled)}`);
      }
    }
  }

  /** A watch error after the parameters were accepted: HTTP 200 and exactly one ERROR line, then the end (04a). */
  private sendWatchError(ctx: Ctx, err: ApiError, ended: NonNullable<RequestRecord['ended']>): void {
    const rec = this.record(ctx, 200);
    rec.ended = ended;
    if (ended === 'fault') rec.faultFiredAt = rec.at;
    ctx.res.writeHead(200, this.headers(ctx));
    ctx.res.end(errorLine(err.status));
  }

  private record(ctx: Ctx, status: number): RequestRecord {
    const i = ctx.info;
    return this.core.log.add({
      method: i.method,
      path: i.path,
      query: i.query,
      watch: i.watch,
      ...(i.group !== undefined ? { group: i.group } : {}),
      ...(i.version !== undefined ? { version: i.version } : {}),
      ...(i.resource !== undefined ? { resource: i.resource } : {}),
      ...(i.namespace !== undefined ? { namespace: i.namespace } : {}),
      ...(i.name !== undefined ? { name: i.name } : {}),
      ...(i.subresource !== undefined ? { subresource: i.subresource } : {}),
      status,
      ...(ctx.fault ? { fault: ctx.fault.type, faultId: ctx.faultId } : {}),
      ...(ctx.req.headers['user-agent'] ? { userAgent: ctx.req.headers['user-agent'] } : {}),
    });
  }

  private headers(ctx: Ctx, extra: Record<string, string> = {}): OutgoingHttpHeaders {
    const h: OutgoingHttpHeaders = { 'Cache-Control': 'no-cache, private', 'Content-Type': 'application/json' };
    if (ctx.apf) {
      h['X-Kubernetes-Pf-Flowschema-Uid'] = this.flowSchemaUid;
      h['X-Kubernetes-Pf-Prioritylevel-Uid'] = this.priorityLevelUid;
    }
    return { ...h, ...extra };
  }

  /** Writes a JSON body (`body` already serialized with its trailing newline). */
  private send(ctx: Ctx, status: number, body: string, extra: Record<string, string> = {}): void {
    const { res } = ctx;
    if (res.headersSent || res.destroyed) return;
    this.record(ctx, status);
    let text = body;
    if (ctx.pretty) text = JSON.stringify(JSON.parse(body), null, 2);
    const headers = this.headers(ctx, extra);
    const bytes = Buffer.byteLength(text);
    if (bytes <= CHUNK_THRESHOLD) {
      headers['Content-Length'] = String(bytes);
      res.writeHead(status, headers);
      res.end(text);
    } else {
      res.writeHead(status, headers);
      res.write(text);
      res.end();
    }
  }

  private sendJson(ctx: Ctx, status: number, value: unknown): void {
    this.send(ctx, status, `${JSON.stringify(value)}\n`);
  }

  private sendError(ctx: Ctx, err: ApiError): void {
    this.send(ctx, err.code, `${JSON.stringify(err.status)}\n`, err.headers);
  }

  private async readBody(ctx: Ctx): Promise<unknown> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > MAX_BODY) throw new ApiError(failure(413, 'Request entity too large: limit is 3145728', 'RequestEntityTooLarge'));
      chunks.push(chunk);
    }
    const text = Buffer.concat(chunks).toString('utf8');
    if (text.trim() === '') return undefined;
    try {
      return JSON.parse(text) as unknown;
    } catch (e) {
      throw badRequest(`couldn't get version/kind; json parse error: ${(e as Error).message}`);
    }
  }

  private async serve(ctx: Ctx, r: Route, method: string, query: Record<string, string>, watch: boolean): Promise<void> {
    const core = this.core;
    const readOnly = (): void => {
      if (method !== 'GET' && method !== 'HEAD') throw methodNotAllowed();
    };
    switch (r.kind) {
      case 'api':
        readOnly();
        return this.sendJson(ctx, 200, discovery.apiVersions(core.serverAddress()));
      case 'core':
        readOnly();
        return this.sendJson(ctx, 200, discovery.coreResourceList(core.registry));
      case 'apis':
        readOnly();
        return this.sendJson(ctx, 200, discovery.apiGroupList(core.registry));
      case 'group': {
        readOnly();
        const g = discovery.apiGroup(core.registry, r.group!);
        if (!g) throw pathNotFound();
        return this.sendJson(ctx, 200, g);
      }
      case 'groupVersion': {
        readOnly();
        const l = discovery.groupResourceList(core.registry, r.group!, r.version!);
        if (!l) throw pathNotFound();
        return this.sendJson(ctx, 200, l);
      }
      case 'version':
        readOnly();
        return this.sendJson(ctx, 200, discovery.versionInfo());
      case 'health':
        ctx.res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-cache, private' });
        this.record(ctx, 200);
        ctx.res.end('ok');
        return;
      case 'notFound':
        throw pathNotFound();
      case 'resource':
        break;
    }
    const def = r.def!;
    const ns = r.namespace;
    if (method !== 'GET' && query['dryRun'] !== undefined) throw badRequest('dryRun is not supported by the API-server emulator');
    if (r.subresource !== undefined) {
      if (r.subresource !== 'status' || !def.statusSubresource || r.name === undefined) {
        // A custom resource without the status subresource: 404 for the object (07g).
        if (!def.builtin && r.subresource === 'status' && r.name !== undefined) throw notFound(ref(def), r.name);
        throw pathNotFound();
      }
    }

    if (r.name === undefined) {
      switch (method) {
        case 'GET':
          if (watch) return this.watch(ctx, def, ns, query, undefined, this.metadataOnly(ctx, 'object'));
          return this.list(ctx, def, ns, query, this.metadataOnly(ctx, 'list'));
        case 'POST': {
          if (def.namespaced && ns === undefined) throw methodNotAllowed();
          const body = await this.readBody(ctx);
          const created = core.objects.create(def, ns, body);
          return this.send(ctx, 201, `${objectJson(created)}\n`);
        }
        case 'DELETE':
          if (!def.verbs.includes('deletecollection')) throw methodNotAllowed();
          await this.readBody(ctx);
          return this.deleteCollection(ctx, def, ns, query);
        default:
          throw methodNotAllowed();
      }
    }

    const name = r.name;
    const sub = r.subresource === 'status' ? ({ subresource: 'status' } as const) : {};
    switch (method) {
      case 'GET':
        // The legacy single-object watch (…/pods/NAME?watch=true, /watch/…/pods/NAME)
        if (watch) return this.watch(ctx, def, ns, query, name, this.metadataOnly(ctx, 'object'));
        if (this.metadataOnly(ctx, 'object')) return this.send(ctx, 200, `${partialJson(core.objects.get(def, ns, name))}\n`);
        return this.send(ctx, 200, `${objectJson(core.objects.get(def, ns, name))}\n`);
      case 'PUT': {
        const body = await this.readBody(ctx);
        const updated = core.objects.update(def, ns, name, body, sub);
        return this.send(ctx, 200, `${objectJson(updated)}\n`);
      }
      case 'PATCH': {
        const type = patchTypeOf(ctx.req.headers['content-type']);
        const body = await this.readBody(ctx);
        const patched = core.objects.patch(def, ns, name, type, body, sub);
        return this.send(ctx, 200, `${objectJson(patched)}\n`);
      }
      case 'DELETE': {
        if (r.subresource !== undefined) throw methodNotAllowed();
        const body = await this.readBody(ctx);
        const pre = isPlainObject(body) && isPlainObject(body['preconditions']) ? body['preconditions'] : undefined;
        const result = core.objects.delete(def, ns, name, {
          preconditions: pre
            ? {
                ...(typeof pre['uid'] === 'string' ? { uid: pre['uid'] } : {}),
                ...(typeof pre['resourceVersion'] === 'string' ? { resourceVersion: pre['resourceVersion'] } : {}),
              }
            : undefined,
        });
        if (result.pending || def.returnDeletedObject) return this.send(ctx, 200, `${objectJson(result.object)}\n`);
        return this.sendJson(ctx, 200, successStatus(ref(def), name, result.object.metadata?.uid));
      }
      default:
        throw methodNotAllowed();
    }
  }

  private selectors(def: ResourceDef, query: Record<string, string>): { labels: ReturnType<typeof parseLabelSelector>; fields: FieldSelector } {
    const labels = parseLabelSelector(query['labelSelector'] ?? '');
    const fields = parseFieldSelector(query['fieldSelector'] ?? '');
    const known = new Set(['metadata.name', 'metadata.namespace', ...Object.keys(def.fields)]);
    for (const f of fields) {
      if (!known.has(f.field)) {
        if (Object.keys(def.fields).length) throw badRequest(`field label not supported: ${f.field}`);
        throw badRequest(`${JSON.stringify(f.field)} is not a known field selector: only "metadata.name", "metadata.namespace"`);
      }
    }
    return { labels, fields };
  }

  /** True when the Accept header asks for PartialObjectMetadata(List); throws 406 when nothing it accepts can be served (10c). */
  private metadataOnly(ctx: Ctx, target: Target): boolean {
    const shape = negotiate(ctx.req.headers['accept'], target, this.core.partialObjectMetadata);
    if (shape instanceof ApiError) throw shape;
    return shape === 'metadata';
  }

  private list(ctx: Ctx, def: ResourceDef, ns: string | undefined, query: Record<string, string>, metadataOnly = false): void {
    const core = this.core;
    if (core.sendInitialEvents && query['sendInitialEvents'] !== undefined) {
      throw invalidListOptions([{ field: 'sendInitialEvents', message: 'Forbidden: sendInitialEvents is forbidden for list' }]);
    }
    const { labels, fields } = this.selectors(def, query);
    const limitRaw = query['limit'];
    const limit = limitRaw !== undefined && /^\d+$/.test(limitRaw) ? Number(limitRaw) : 0;
    const result = list(core.store, core.store.collection(def), {
      namespace: ns,
      labels,
      fields,
      resourceVersion: query['resourceVersion'],
      resourceVersionMatch: query['resourceVersionMatch'],
      limit,
      continueToken: query['continue'] || undefined,
    });
    this.send(ctx, 200, encodeList(def, result, metadataOnly));
  }

  private deleteCollection(ctx: Ctx, def: ResourceDef, ns: string | undefined, query: Record<string, string>): void {
    const core = this.core;
    const { labels, fields } = this.selectors(def, query);
    const coll = core.store.collection(def);
    const filter: WatchFilter = { namespace: ns, labels, fields };
    const deleted: KubeObject[] = [];
    for (const key of [...coll.sortedKeys()]) {
      const obj = coll.items.get(key)!;
      if (!matchesFilter(def, filter, obj)) continue;
      const m = obj.metadata ?? {};
      deleted.push(core.objects.delete(def, m.namespace, m.name!).object);
    }
    const items = deleted.map((o) => (def.builtin ? builtinItemJson(o) : objectJson(o))).join(',');
    const rv = String(core.store.revision);
    const body = def.builtin
      ? `{"kind":"${def.listKind}","apiVersion":"${def.apiVersion}","metadata":{"resourceVersion":"${rv}"},"items":[${items}]}\n`
      : `{"apiVersion":"${def.apiVersion}","items":[${items}],"kind":"${def.listKind}","metadata":{"continue":"","resourceVersion":"${rv}"}}\n`;
    this.send(ctx, 200, body);
  }

  private watch(ctx: Ctx, def: ResourceDef, ns: string | undefined, query: Record<string, string>, name?: string, metadataOnly = false): void {
    const core = this.core;
    const rvMatch = query['resourceVersionMatch'];
    const rvRaw = query['resourceVersion'];
    const sendInitial = core.sendInitialEvents ? query['sendInitialEvents'] : undefined;
    const bookmarks = truthy(query['allowWatchBookmarks']);
    // Parameter validation, as kube-apiserver (05a, 05b) — or, with sendInitialEvents support, as 1.27+.
    if (sendInitial === 'true') {
      const causes: { field: string; message: string }[] = [];
      if (rvMatch !== 'NotOlderThan') {
        causes.push({ field: 'sendInitialEvents', message: 'Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan' });
      }
      if (!bookmarks) {
        causes.push({ field: 'allowWatchBookmarks', message: 'Forbidden: sendInitialEvents requires setting allowWatchBookmarks to true' });
      }
      if (causes.length) throw invalidListOptions(causes);
    } else if (rvMatch !== undefined && rvMatch !== '' && !(sendInitial === 'false' && rvMatch === 'NotOlderThan')) {
      const causes = [{ field: 'resourceVersionMatch', message: 'Forbidden: resourceVersionMatch is forbidden for watch' }];
      if (rvRaw === undefined || rvRaw === '') {
        causes.push({ field: 'resourceVersionMatch', message: 'Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided' });
      }
      throw invalidListOptions(causes);
    }
    const rv = parseRv(rvRaw);
    const { labels, fields } = this.selectors(def, query);
    if (name !== undefined) fields.push({ field: 'metadata.name', op: '=', value: name });
    const timeoutRaw = query['timeoutSeconds'];
    let timeoutMs = core.defaultWatchTimeoutMs;
    if (timeoutRaw !== undefined && timeoutRaw !== '') {
      const t = Number(timeoutRaw);
      if (!Number.isFinite(t) || t < 0) throw badRequest(`invalid value for timeoutSeconds: ${JSON.stringify(timeoutRaw)}`);
      if (t > 0) timeoutMs = t * 1000;
    }
    const store = core.store;
    const coll = store.collection(def);
    const filter: WatchFilter = { namespace: ns, labels, fields };
    const fault = ctx.fault && isWatchFault(ctx.fault) && ctx.faultId !== undefined ? { fault: ctx.fault, ruleId: ctx.faultId } : undefined;

    const initial = (): KubeObject[] => {
      const out: KubeObject[] = [];
      const prefix = def.namespaced && ns !== undefined ? `${ns}/` : '';
      for (const key of coll.sortedKeys()) {
        if (prefix && !key.startsWith(prefix)) continue;
        const obj = coll.items.get(key)!;
        if (matchesFilter(def, filter, obj)) out.push(obj);
      }
      return out;
    };
    const common = {
      def,
      coll,
      filter,
      info: ctx.info,
      now: () => core.log.now(),
      ...(bookmarks ? { bookmarks: { intervalMs: core.bookmarkIntervalMs, beforeTimeoutMs: core.bookmarkBeforeTimeoutMs } } : {}),
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      ...(fault ? { fault } : {}),
      metadataOnly,
      floor: () => store.floorOf(coll),
      onEnd: (s: WatchSession) => core.sessions.delete(s),
      draining: core.draining,
    };
    let session: WatchSession;
    if (sendInitial === 'true' && rv !== undefined && rv > store.revision) {
      // A streaming list the server has not reached: kube-apiserver waits 3 s for it, then sends this as an ERROR event.
      this.sendWatchError(ctx, tooLargeResourceVersion(rv, store.revision), 'error');
      return;
    } else if (sendInitial === 'true') {
      const startRv = store.revision;
      session = new WatchSession(ctx.req, ctx.res, {
        ...common,
        startRv,
        backlog: initial(),
        backlogKind: 'initial',
        initialEventsEndRv: startRv,
        record: this.record(ctx, 200),
      });
    } else if (rv === undefined && sendInitial === 'false') {
      // sendInitialEvents=false without a resourceVersion: from now on, no initial state
      session = new WatchSession(ctx.req, ctx.res, {
        ...common,
        startRv: store.revision,
        backlog: [],
        backlogKind: 'history',
        record: this.record(ctx, 200),
      });
    } else if (rv === undefined || rv === 0) {
      session = new WatchSession(ctx.req, ctx.res, {
        ...common,
        startRv: store.revision,
        backlog: initial(),
        backlogKind: 'initial',
        record: this.record(ctx, 200),
      });
    } else {
      const floor = store.floorOf(coll);
      if (rv < floor) {
        this.sendWatchError(ctx, new ApiError(watchTooOld(rv, floor)), 'expired');
        return;
      }
      session = new WatchSession(ctx.req, ctx.res, {
        ...common,
        startRv: rv,
        backlog: coll.eventsAfter(rv),
        backlogKind: 'history',
        record: this.record(ctx, 200),
      });
    }
    core.sessions.add(session);
    session.start();
  }
}

interface Ctx {
  req: IncomingMessage;
  res: ServerResponse;
  info: FaultRequestInfo;
  pretty: boolean;
  apf: boolean;
  fault: Fault | undefined;
  faultId: number | undefined;
}
