/**
 * HTTP front end: the router. A request is parsed once (./http/request.ts), may
 * take a fault (./http/requestFaults.ts), is authenticated, then goes to its
 * route family: discovery (./http/discovery.ts), watches (./http/watch.ts),
 * collections (./http/collection.ts) or objects (./http/object.ts). Answers are
 * written by ./http/respond.ts.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, badRequest, internalError, pathNotFound, unauthorized } from './status.ts';
import { serveCollection } from './http/collection.ts';
import { serveDiscovery } from './http/discovery.ts';
import { checkSubresource, serveObject } from './http/object.ts';
import { applyRequestFault } from './http/requestFaults.ts';
import { type ApfUids, type Ctx, type HttpCore, metadataOnly, parseRequest } from './http/request.ts';
import { sendError } from './http/respond.ts';
import { serveWatch } from './http/watch.ts';

export type { HttpCore } from './http/request.ts';

/** Handles one request. Never throws. */
export class HttpHandler {
  private readonly core: HttpCore;
  private readonly apfUids: ApfUids = { flowSchema: randomUUID(), priorityLevel: randomUUID() };

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
    const ctx = parseRequest(core, this.apfUids, req, res);

    const picked = core.faults.take(ctx.info);
    if (picked) {
      ctx.fault = picked.fault;
      ctx.faultId = picked.ruleId;
      const done = await applyRequestFault(ctx, picked.fault);
      if (done) return;
    }

    if (core.token !== undefined) {
      const auth = req.headers['authorization'] ?? '';
      const m = /^bearer\s+(.+)$/i.exec(auth);
      if (!m || m[1]!.trim() !== core.token) {
        ctx.apf = false;
        req.resume();
        sendError(ctx, unauthorized());
        return;
      }
    }

    try {
      await serve(ctx);
    } catch (err) {
      if (err instanceof ApiError) sendError(ctx, err);
      else sendError(ctx, internalError(String((err as Error)?.message ?? err)));
    }
  }
}

async function serve(ctx: Ctx): Promise<void> {
  const r = ctx.route;
  switch (r.kind) {
    case 'notFound':
      throw pathNotFound();
    case 'resource':
      break;
    default:
      return serveDiscovery(ctx, r.kind);
  }
  const def = r.def!;
  const ns = r.namespace;
  if (ctx.info.method !== 'GET' && ctx.info.query['dryRun'] !== undefined) {
    throw badRequest('dryRun is not supported by the API-server emulator');
  }
  checkSubresource(def, r.name, r.subresource);
  // Collection watches and the legacy single-object watch (…/pods/NAME?watch=true, /watch/…/pods/NAME)
  if (ctx.info.watch) return serveWatch(ctx, def, ns, r.name, metadataOnly(ctx, 'object'));
  if (r.name === undefined) return serveCollection(ctx, def, ns);
  return serveObject(ctx, def, ns, r.name);
}
