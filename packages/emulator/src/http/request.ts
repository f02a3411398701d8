/**
 * What every route family shares about a request: the server state it works on
 * ({@link HttpCore}), the per-request context ({@link Ctx}, built once by
 * {@link parseRequest}), the body, the query parameters several families read
 * (selectors, booleans) and content negotiation (PartialObjectMetadata).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Fault, FaultInjector, FaultRequestInfo } from '../faults.ts';
import type { Objects } from '../objects.ts';
import type { RequestLog } from '../requestLog.ts';
import type { ResourceDef, ResourceRegistry } from '../resources.ts';
import { type Route, route } from '../routes.ts';
import { type FieldSelector, type LabelSelector, parseFieldSelector, parseLabelSelector } from '../selectors.ts';
import { ApiError, badRequest, failure } from '../status.ts';
import { negotiate, type Shape, type Target } from '../negotiate.ts';
import { servesProtobuf } from '../protobuf/bodies.ts';
import type { Store } from '../store.ts';
import type { WatchSession } from '../watch.ts';
import type { GzipSettings } from '../gzip.ts';

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
  /** Undefined: never gzip. */
  readonly gzip: GzipSettings | undefined;
  serverAddress(): string;
  isClosing(): boolean;
}

/** The API Priority and Fairness UIDs a handler answers with (one pair per server). */
export interface ApfUids {
  readonly flowSchema: string;
  readonly priorityLevel: string;
}

/** One request: built once by {@link parseRequest}, handed to every route family. */
export interface Ctx {
  readonly core: HttpCore;
  readonly apfUids: ApfUids;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly route: Route;
  /** Method, path, query, watch and the route's coordinates (what faults match and the log records). */
  readonly info: FaultRequestInfo;
  readonly pretty: boolean;
  /** Send the APF headers (not on watches, nor on 401). */
  apf: boolean;
  fault: Fault | undefined;
  faultId: number | undefined;
}

const MAX_BODY = 3 * 1024 * 1024;

export const truthy = (v: string | undefined): boolean => v === 'true' || v === '1';

function queryOf(url: URL): Record<string, string> {
  const q: Record<string, string> = {};
  for (const [k, v] of url.searchParams) q[k] = v;
  return q;
}

export function parseRequest(core: HttpCore, apfUids: ApfUids, req: IncomingMessage, res: ServerResponse): Ctx {
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
  return {
    core,
    apfUids,
    req,
    res,
    route: r,
    info,
    pretty: (req.headers['user-agent'] ?? '').startsWith('curl/'),
    apf: !watch,
    fault: undefined,
    faultId: undefined,
  };
}

export async function readBody(ctx: Ctx): Promise<unknown> {
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

/** `labelSelector` and `fieldSelector`; 400 for a field the resource does not index. */
export function selectors(def: ResourceDef, query: Record<string, string>): { labels: LabelSelector; fields: FieldSelector } {
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
export function metadataOnly(ctx: Ctx, target: Target): boolean {
  return shapeOf(ctx, target) === 'metadata';
}

/** True when the Accept header picks protobuf, for a kind the emulator encodes; throws 406 like {@link metadataOnly}. */
export function protobufAnswer(ctx: Ctx, target: Target): boolean {
  return shapeOf(ctx, target) === 'protobuf';
}

function shapeOf(ctx: Ctx, target: Target): Shape {
  const shape = negotiate(ctx.req.headers['accept'], target, ctx.core.partialObjectMetadata, servesProtobuf(ctx.route.def));
  if (shape instanceof ApiError) throw shape;
  return shape;
}
