/**
 * Object routes (`…/pods/NAME`, `…/pods/NAME/status`): get, update (PUT), patch,
 * delete. The status subresource writes only the status; 404/405 for the others. A GET answers in protobuf when
 * Accept asks it, for the kinds the emulator encodes (negotiate.ts).
 * Single-object watches go to ./watch.ts.
 */
import { isPlainObject } from '../json.ts';
import { patchTypeOf, ref } from '../objects.ts';
import type { ResourceDef } from '../resources.ts';
import { methodNotAllowed, notFound, pathNotFound, successStatus } from '../status.ts';
import { objectJson, partialJson } from '../store.ts';
import { type Ctx, metadataOnly, protobufAnswer, readBody } from './request.ts';
import { send, sendJson, sendProtobuf } from './respond.ts';
import { protobufObject } from '../protobuf/bodies.ts';

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
    case 'GET': {
      // The Accept header first (a 406 before a 404, as kube-apiserver negotiates before it reads).
      const protobuf = protobufAnswer(ctx, 'object');
      const partial = !protobuf && metadataOnly(ctx, 'object');
      const object = objects.get(def, ns, name);
      if (protobuf) return sendProtobuf(ctx, 200, protobufObject(object));
      return send(ctx, 200, `${partial ? partialJson(object) : objectJson(object)}\n`);
    }
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
