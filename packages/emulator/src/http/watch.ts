/**
 * Watch routes (`?watch=true`, legacy `/watch/…`, single-object watches):
 * parameter validation as kube-apiserver, then a {@link WatchSession} from the
 * initial state (unset/0 or `sendInitialEvents=true`), from history (`N`), or
 * one ERROR line (410 for a compacted `N`, 504 for a streaming list ahead of the server).
 */
import { isWatchFault } from '../faults.ts';
import { parseRv } from '../list.ts';
import type { ResourceDef } from '../resources.ts';
import { ApiError, badRequest, invalidListOptions, tooLargeResourceVersion, watchTooOld } from '../status.ts';
import type { StoredObject } from '../types.ts';
import { matchesFilter, type WatchFilter, WatchSession } from '../watch.ts';
import { type Ctx, protobufAnswer, selectors, truthy } from './request.ts';
import { record, sendWatchError } from './respond.ts';
import { acceptsGzip } from '../gzip.ts';

export function serveWatch(ctx: Ctx, def: ResourceDef, ns: string | undefined, name: string | undefined, metadataOnly: boolean): void {
  const { core } = ctx;
  const query = ctx.info.query;
  const rvMatch = query['resourceVersionMatch'];
  const rvRaw = query['resourceVersion'];
  const sendInitial = core.sendInitialEvents ? query['sendInitialEvents'] : undefined;
  const bookmarks = truthy(query['allowWatchBookmarks']);
  // Parameter validation, as kube-apiserver (05a, 05b) — or, with sendInitialEvents support, as 1.27+.
  if (sendInitial === 'true') {
    const causes: { field: string; message: string }[] = [];
    if (rvMatch !== 'NotOlderThan') {
      causes.push({
        field: 'sendInitialEvents',
        message: 'Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
      });
    }
    if (!bookmarks) {
      causes.push({ field: 'allowWatchBookmarks', message: 'Forbidden: sendInitialEvents requires setting allowWatchBookmarks to true' });
    }
    if (causes.length) throw invalidListOptions(causes);
  } else if (rvMatch !== undefined && rvMatch !== '' && !(sendInitial === 'false' && rvMatch === 'NotOlderThan')) {
    const causes = [{ field: 'resourceVersionMatch', message: 'Forbidden: resourceVersionMatch is forbidden for watch' }];
    if (rvRaw === undefined || rvRaw === '') {
      causes.push({
        field: 'resourceVersionMatch',
        message: 'Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
      });
    }
    throw invalidListOptions(causes);
  }
  const rv = parseRv(rvRaw);
  const { labels, fields } = selectors(def, query);
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

  const initial = (): StoredObject[] => {
    const out: StoredObject[] = [];
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
    ...(protobufAnswer(ctx, 'object') ? { protobuf: true } : {}),
    ...(core.gzip?.watch && acceptsGzip(ctx.req) ? { gzip: core.gzip } : {}),
    floor: () => store.floorOf(coll),
    onEnd: (s: WatchSession) => core.sessions.delete(s),
    draining: core.draining,
  };
  let session: WatchSession;
  if (sendInitial === 'true' && rv !== undefined && rv > store.revision) {
    // A streaming list the server has not reached: kube-apiserver waits 3 s for it, then sends this as an ERROR event.
    sendWatchError(ctx, tooLargeResourceVersion(rv, store.revision), 'error');
    return;
  } else if (sendInitial === 'true') {
    const startRv = store.revision;
    session = new WatchSession(ctx.req, ctx.res, {
      ...common,
      startRv,
      backlog: initial(),
      backlogKind: 'initial',
      initialEventsEndRv: startRv,
      record: record(ctx, 200),
    });
  } else if (rv === undefined && sendInitial === 'false') {
    // sendInitialEvents=false without a resourceVersion: from now on, no initial state
    session = new WatchSession(ctx.req, ctx.res, {
      ...common,
      startRv: store.revision,
      backlog: [],
      backlogKind: 'history',
      record: record(ctx, 200),
    });
  } else if (rv === undefined || rv === 0) {
    session = new WatchSession(ctx.req, ctx.res, {
      ...common,
      startRv: store.revision,
      backlog: initial(),
      backlogKind: 'initial',
      record: record(ctx, 200),
    });
  } else {
    const floor = store.floorOf(coll);
    if (rv < floor) {
      sendWatchError(ctx, new ApiError(watchTooOld(rv, floor)), 'expired');
      return;
    }
    session = new WatchSession(ctx.req, ctx.res, {
      ...common,
      startRv: rv,
      backlog: coll.eventsAfter(rv),
      backlogKind: 'history',
      record: record(ctx, 200),
    });
  }
  core.sessions.add(session);
  session.start();
}
