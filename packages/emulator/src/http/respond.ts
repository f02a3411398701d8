/**
 * Writing answers: the request log entry, kube-apiserver's headers, JSON bodies
 * (Content-Length up to 2 KiB, chunked above, gzipped above 128 KiB when asked, indented for curl), `Status` errors
 * and the single-ERROR-line watch answer.
 */
import type { OutgoingHttpHeaders } from 'node:http';
import type { RequestRecord } from '../requestLog.ts';
import type { ApiError } from '../status.ts';
import { errorLine } from '../watch.ts';
import { protobufAnswer, type Ctx } from './request.ts';
import { errorsInProtobuf } from '../negotiate.ts';
import { PROTOBUF_MEDIA_TYPE, PROTOBUF_WATCH_TYPE, protobufFrame, protobufStatus, servesProtobuf } from '../protobuf/bodies.ts';
import { acceptsGzip, gzip } from '../gzip.ts';
import { resetStream } from '../h2.ts';

/** Go's net/http sends Content-Length when the whole body fits its 2 KiB buffer, else chunked. */
const CHUNK_THRESHOLD = 2048;

export function record(ctx: Ctx, status: number): RequestRecord {
  const i = ctx.info;
  return ctx.core.log.add({
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
    ...(ctx.req.headers['accept-encoding'] !== undefined ? { acceptEncoding: String(ctx.req.headers['accept-encoding']) } : {}),
    ...(ctx.req.headers['accept'] !== undefined ? { accept: String(ctx.req.headers['accept']) } : {}),
  });
}

export function headers(ctx: Ctx, extra: Record<string, string> = {}): OutgoingHttpHeaders {
  const h: OutgoingHttpHeaders = { 'Cache-Control': 'no-cache, private', 'Content-Type': 'application/json' };
  if (ctx.apf) {
    h['X-Kubernetes-Pf-Flowschema-Uid'] = ctx.apfUids.flowSchema;
    h['X-Kubernetes-Pf-Prioritylevel-Uid'] = ctx.apfUids.priorityLevel;
  }
  return { ...h, ...extra };
}

/** Writes a JSON body (`body` already serialized with its trailing newline), or protobuf bytes (with their Content-Type in `extra`). */
export function send(ctx: Ctx, status: number, body: string | Buffer, extra: Record<string, string> = {}): void {
  const { res } = ctx;
  if (res.headersSent || res.destroyed) return;
  const rec = record(ctx, status);
  let text = body;
  if (ctx.pretty && typeof body === 'string') text = JSON.stringify(JSON.parse(body), null, 2);
  const h = headers(ctx, extra);
  rec.contentType = String(h['Content-Type']);
  const bytes = Buffer.byteLength(text);
  const gzipped = ctx.core.gzip;
  const paused = ctx.fault?.type === 'pauseBody' ? ctx.fault : undefined;
  if (paused) {
    const zipped = gzipped && bytes > gzipped.minBytes && acceptsGzip(ctx.req);
    res.writeHead(status, zipped ? { ...h, 'Content-Encoding': 'gzip', Vary: 'Accept-Encoding' } : h);
    writeInTwo(ctx, zipped ? gzip(text, gzipped) : Buffer.from(text), paused, rec);
  } else if (gzipped && bytes > gzipped.minBytes && acceptsGzip(ctx.req)) {
    // As kube-apiserver's deferredResponseWriter: Content-Encoding and Vary, then the compressed body, chunked.
    res.writeHead(status, { ...h, 'Content-Encoding': 'gzip', Vary: 'Accept-Encoding' });
    res.end(gzip(text, gzipped));
  } else if (bytes <= CHUNK_THRESHOLD) {
    h['Content-Length'] = String(bytes);
    res.writeHead(status, h);
    res.end(text);
  } else {
    res.writeHead(status, h);
    res.write(text);
    res.end();
  }
}

/** The `pauseBody` fault: the body's first bytes, then the rest (or a reset) once `resume` settles; without it, a reset at once or never the rest. */
function writeInTwo(
  ctx: Ctx,
  body: Buffer,
  fault: { afterBytes: number; resume?: PromiseLike<unknown>; reset?: boolean },
  rec: RequestRecord,
): void {
  const { res } = ctx;
  // How it ended, for a test to see that a client gave up on a response it had not read.
  res.on('close', () => (rec.ended ??= res.writableEnded ? undefined : 'client'));
  const cut = Math.min(fault.afterBytes, body.length);
  const rest = () => {
    if (res.destroyed || res.writableEnded || ctx.core.isClosing()) return;
    if (!fault.reset) return void res.end(body.subarray(cut));
    rec.ended = 'fault';
    // HTTP/2: only this stream, with an error code; HTTP/1.1: the connection.
    if (!resetStream(res, '')) ctx.req.socket.destroy();
  };
  // The rest (or the reset) once the first part is written: a reset must not cut it.
  res.write(body.subarray(0, cut), () => {
    if (fault.resume) fault.resume.then(rest, rest);
    else if (fault.reset) rest();
  });
}

export function sendJson(ctx: Ctx, status: number, value: unknown): void {
  send(ctx, status, `${JSON.stringify(value)}\n`);
}

export function sendError(ctx: Ctx, err: ApiError): void {
  if (errorsInProtobuf(ctx.req.headers['accept'], servesProtobuf(ctx.route.def)))
    return send(ctx, err.code, protobufStatus(err.status), { ...err.headers, 'Content-Type': PROTOBUF_MEDIA_TYPE });
  send(ctx, err.code, `${JSON.stringify(err.status)}\n`, err.headers);
}

/** A list or object body in protobuf. */
export function sendProtobuf(ctx: Ctx, status: number, body: Buffer): void {
  send(ctx, status, body, { 'Content-Type': PROTOBUF_MEDIA_TYPE });
}

/** A watch error after the parameters were accepted: HTTP 200 and exactly one ERROR line, then the end (04a). */
export function sendWatchError(ctx: Ctx, err: ApiError, ended: NonNullable<RequestRecord['ended']>): void {
  const rec = record(ctx, 200);
  rec.ended = ended;
  if (ended === 'fault') rec.faultFiredAt = rec.at;
  if (protobufAnswer(ctx, 'object')) {
    rec.contentType = PROTOBUF_WATCH_TYPE;
    ctx.res.writeHead(200, headers(ctx, { 'Content-Type': PROTOBUF_WATCH_TYPE }));
    ctx.res.end(Buffer.from(protobufFrame('ERROR', err.status), 'latin1'));
    return;
  }
  rec.contentType = 'application/json';
  ctx.res.writeHead(200, headers(ctx));
  ctx.res.end(errorLine(err.status));
}
