/**
 * Collection routes (`…/pods`, `…/namespaces/NS/pods`): list (GET), create (POST),
 * deletecollection (DELETE). Watches on a collection go to ./watch.ts.
 */
import { encodeList, list, protobufListOf } from '../list.ts';
import type { ResourceDef } from '../resources.ts';
import { invalidListOptions, methodNotAllowed } from '../status.ts';
import { builtinItemJson, objectJson } from '../store.ts';
import type { StoredObject } from '../types.ts';
import { matchesFilter, type WatchFilter } from '../watch.ts';
import { type Ctx, metadataOnly, protobufAnswer, readBody, selectors } from './request.ts';
import { send, sendProtobuf } from './respond.ts';

export async function serveCollection(ctx: Ctx, def: ResourceDef, ns: string | undefined): Promise<void> {
  switch (ctx.info.method) {
    case 'GET':
      return listObjects(ctx, def, ns, metadataOnly(ctx, 'list'), protobufAnswer(ctx, 'list'));
    case 'POST': {
      if (def.namespaced && ns === undefined) throw methodNotAllowed();
      const body = await readBody(ctx);
      const created = ctx.core.objects.create(def, ns, body);
      return send(ctx, 201, `${objectJson(created)}\n`);
    }
    case 'DELETE':
      if (!def.verbs.includes('deletecollection')) throw methodNotAllowed();
      await readBody(ctx);
      return deleteCollection(ctx, def, ns);
    default:
      throw methodNotAllowed();
  }
}

function listObjects(ctx: Ctx, def: ResourceDef, ns: string | undefined, partial: boolean, protobuf: boolean): void {
  const { core } = ctx;
  const query = ctx.info.query;
  if (core.sendInitialEvents && query['sendInitialEvents'] !== undefined) {
    throw invalidListOptions([{ field: 'sendInitialEvents', message: 'Forbidden: sendInitialEvents is forbidden for list' }]);
  }
  const { labels, fields } = selectors(def, query);
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
  if (protobuf) return sendProtobuf(ctx, 200, protobufListOf(def, result));
  send(ctx, 200, encodeList(def, result, partial));
}

function deleteCollection(ctx: Ctx, def: ResourceDef, ns: string | undefined): void {
  const { core } = ctx;
  const { labels, fields } = selectors(def, ctx.info.query);
  const coll = core.store.collection(def);
  const filter: WatchFilter = { namespace: ns, labels, fields };
  const deleted: StoredObject[] = [];
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
  send(ctx, 200, body);
}
