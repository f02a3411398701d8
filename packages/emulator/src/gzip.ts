/**
 * Response compression, as kube-apiserver does it (APIResponseCompression, beta and on by default since 1.16):
 * a GET or list body larger than 128 KiB (`defaultGzipThresholdBytes`) is gzipped at level 1
 * (`defaultGzipContentEncodingLevel`) when the request's `Accept-Encoding` allows gzip. kube-apiserver does not
 * compress watches; `watch: true` does here (each write a gzip member of its own, so no event waits for the next).
 */
import type { IncomingMessage } from 'node:http';
import { gzipSync } from 'node:zlib';

/** What {@link ApiServerOptions.gzip} asks for: `true` (the default) as kube-apiserver, `false` never. */
export type GzipOption = boolean | { readonly minBytes?: number; readonly watch?: boolean; readonly level?: number };

export interface GzipSettings {
  /** Bodies larger than this are gzipped. */
  readonly minBytes: number;
  /** Watch streams too. */
  readonly watch: boolean;
  readonly level: number;
}

/** kube-apiserver's threshold (staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/writers.go). */
export const KUBE_GZIP_THRESHOLD_BYTES = 128 * 1024;

export function gzipSettings(option: GzipOption | undefined): GzipSettings | undefined {
  if (option === false) return undefined;
  const o = option === true || option === undefined ? {} : option;
  return { minBytes: o.minBytes ?? KUBE_GZIP_THRESHOLD_BYTES, watch: o.watch ?? false, level: o.level ?? 1 };
}

/** True when `Accept-Encoding` allows gzip (`gzip`, `x-gzip` or `*`, not with `q=0`). */
export function acceptsGzip(req: IncomingMessage): boolean {
  const header = req.headers['accept-encoding'];
  if (header === undefined) return false;
  for (const clause of String(header).split(',')) {
    const [coding = '', ...params] = clause.split(';').map((p) => p.trim().toLowerCase());
    if (coding !== 'gzip' && coding !== 'x-gzip' && coding !== '*') continue;
    const q = params.find((p) => p.startsWith('q='));
    if (q === undefined || Number(q.slice(2)) > 0) return true;
  }
  return false;
}

/** `text` as one gzip member. */
export function gzip(text: string | Buffer, settings: GzipSettings): Buffer {
  return gzipSync(text, { level: settings.level });
}
