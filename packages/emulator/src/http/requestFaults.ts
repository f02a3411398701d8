/**
 * Request faults, applied before authentication. The switch covers every fault
 * kind (`const unhandled: never`): request kinds answer here, watch kinds are
 * left to the watch stream (../watch.ts).
 */
import type { Fault } from '../faults.ts';
import { resetStream } from '../h2.ts';
import { ApiError, statusForCode, tooLargeResourceVersion, tooManyRequests } from '../status.ts';
import type { Ctx } from './request.ts';
import { record, sendError, sendWatchError } from './respond.ts';

/** Returns true when the fault answered the request. */
export async function applyRequestFault(ctx: Ctx, fault: Fault): Promise<boolean> {
  const core = ctx.core;
  switch (fault.type) {
    case 'status': {
      ctx.req.resume();
      const err =
        fault.code === 429
          ? tooManyRequests(fault.retryAfterSeconds ?? 1, fault.message)
          : statusForCode(fault.code, fault.message, fault.reason);
      const headers = { ...err.headers };
      if (fault.retryAfterSeconds !== undefined) headers['Retry-After'] = String(fault.retryAfterSeconds);
      sendError(ctx, new ApiError(err.status, headers));
      return true;
    }
    case 'reset':
      record(ctx, 0);
      // HTTP/2: only this stream, with an error code; HTTP/1.1: the connection.
      if (!resetStream(ctx.res, '')) ctx.req.socket.destroy();
      return true;
    case 'delay':
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          core.pendingTimers.delete(t);
          resolve();
        }, fault.ms);
        core.pendingTimers.add(t);
      });
      return core.isClosing() || ctx.res.destroyed;
    case 'pauseBody':
      return false; // applied as the body is written (respond.ts)
    case 'tooLargeResourceVersion': {
      // Only lists and streaming lists at resourceVersion N > 0 take this fault (FAULT_KINDS).
      ctx.req.resume();
      const rv = Number(ctx.info.query['resourceVersion']);
      const current = fault.current ?? (core.store.revision < rv ? core.store.revision : rv - 1);
      const err = tooLargeResourceVersion(rv, current);
      if (ctx.info.watch) sendWatchError(ctx, err, 'fault');
      else sendError(ctx, err);
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
