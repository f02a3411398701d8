/**
 * Discovery and server routes: /api, /api/v1, /apis, /apis/<group>,
 * /apis/<group>/<version>, /version and the health checks. Read-only (405 otherwise).
 */
import * as docs from '../discovery.ts';
import type { Route } from '../routes.ts';
import { methodNotAllowed, pathNotFound } from '../status.ts';
import type { Ctx } from './request.ts';
import { record, sendJson } from './respond.ts';

/** The route kinds served here. */
export type DiscoveryKind = Exclude<Route['kind'], 'resource' | 'notFound'>;

export function serveDiscovery(ctx: Ctx, kind: DiscoveryKind): void {
  const { core, route: r } = ctx;
  if (kind === 'health') {
    ctx.res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-cache, private' });
    record(ctx, 200).contentType = 'text/plain; charset=utf-8';
    ctx.res.end('ok');
    return;
  }
  if (ctx.info.method !== 'GET' && ctx.info.method !== 'HEAD') throw methodNotAllowed();
  switch (kind) {
    case 'api':
      return sendJson(ctx, 200, docs.apiVersions(core.serverAddress()));
    case 'core':
      return sendJson(ctx, 200, docs.coreResourceList(core.registry));
    case 'apis':
      return sendJson(ctx, 200, docs.apiGroupList(core.registry));
    case 'group': {
      const g = docs.apiGroup(core.registry, r.group!);
      if (!g) throw pathNotFound();
      return sendJson(ctx, 200, g);
    }
    case 'groupVersion': {
      const l = docs.groupResourceList(core.registry, r.group!, r.version!);
      if (!l) throw pathNotFound();
      return sendJson(ctx, 200, l);
    }
    case 'version':
      return sendJson(ctx, 200, docs.versionInfo());
  }
}
