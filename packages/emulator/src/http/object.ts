/**
 * Object routes (`…/pods/NAME`, `…/pods/NAME/status`): get, update (PUT), patch,
 * delete. The status subresource writes only the status; 404/405 for the others.
 * Single-object watches go to ./watch.ts.
 */
import { isPlainObject } from '../json.ts';
import { patchTypeOf, ref } from '../objects.ts';
import type { ResourceDef } from '../resources.ts';
import { methodNotAllowed, notFound, pathNotFound, successStatus } from '../status.ts';
import { objectJson, partialJson } from '../store.ts';
import { type Ctx, metadataOnly, readBody } from './request.ts';
import { send, sendJson } from './respond.ts';

/** 404 unless the subresource is a status the resource has (checked before the collection/object split). */
export function checkSubresource(def: ResourceDef, name: string | undefined, subresource: string | undefined): void {
  if (subresource === undefined) return;
  if (subresource !== 'status' || !def.statusSubresource || name === undefined) {
    // A custom resource without the status subresource: 404 for the object (07g).
    if (!def.builtin && subresource === 'status' && name !== undefined) throw notFound(ref(def), name);
    throw pathNotFound();
  }
}

export async function serveObject(ctx: Ctx, def: ResourceDef, ns: string | undefined, name: string): Promise<void> {
  const { objects } = ctx.core;
  const subresource = ctx.route.subresource;
  const sub = subresource === 'status' ? ({ subresource: 'status' } as const) : {};
  switch (ctx.info.method) {
    case 'GET':
      if (metadataOnly(ctx, 'object')) return send(ctx, 200, `${partialJson(objects.get(def, ns, name))}\n`);
      return send(ctx, 200, `${objectJson(objects.get(def, ns, name))}\n`);
    case 'PUT': {
      const body = await readBody(ctx);
      const updated = objects.update(def, ns, name, body, sub);
      return send(ctx, 200, `${objectJson(updated)}\n`);
    }
    case 'PATCH': {
      const type = patchTypeOf(ctx.req.headers['content-type']);
      const body = await readBody(ctx);
      const patched = objects.patch(def, ns, name, type, body, sub);
      return send(ctx, 200, `${objectJson(patched)}\n`);
    }
    case 'DELETE': {
      if (subresource !== undefined) throw methodNotAllowed();
      const body = await readBody(ctx);
      const pre = isPlainObject(body) && isPlainObject(body['preconditions']) ? body['preconditions'] : undefined;
      const result = objects.delete(def, ns, name, {
        preconditions: pre
          ? {
              ...(typeof pre['uid'] === 'string' ? { uid: pre['uid'] } : {}),
              ...(typeof pre['resourceVersion'] === 'string' ? { resourceVersion: pre['resourceVersion'] } : {}),
            }
          : undefined,
      });
      if (result.pending || def.returnDeletedObject) return send(ctx, 200, `${objectJson(result.object)}\n`);
      return sendJson(ctx, 200, successStatus(ref(def), name, result.object.metadata?.uid));
    }
    default:
      throw methodNotAllowed();
  }
}
