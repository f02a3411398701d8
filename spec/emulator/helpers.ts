import { readdirSync, readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { ApiServer, CustomResourceDefinitionSpec } from 'rx-informer-emulator';

const FIXTURES = new URL('../fixtures/kube-apiserver-v1.20/', import.meta.url);

/** A namespaced custom resource (pb.example.com/v1 Apple) for the tests where a resource outside the protobuf schema stays JSON. */
export const APPLES: CustomResourceDefinitionSpec = {
  group: 'pb.example.com',
  version: 'v1',
  plural: 'apples',
  singular: 'apple',
  kind: 'Apple',
  namespaced: true,
};

/** A fixture file (`02c` → `02c-….json`), parsed. */
export function fixture(prefix: string, ext: 'json' | 'ndjson' = 'json'): any {
  const text = fixtureText(prefix, ext);
  return ext === 'json' ? JSON.parse(text) : text;
}

export function fixtureText(prefix: string, ext: 'json' | 'ndjson' | 'http' = 'json'): string {
  const names = readdirFixtures().filter((n) => n.startsWith(`${prefix}-`) && n.endsWith(`.${ext}`));
  if (names.length !== 1) throw new Error(`fixture ${prefix}.${ext}: ${names.length} matches`);
  return readFileSync(new URL(names[0]!, FIXTURES), 'utf8');
}

let fixtureNames: string[] | undefined;
function readdirFixtures(): string[] {
  fixtureNames ??= readdirSync(FIXTURES);
  return fixtureNames;
}

export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  raw: string;
  body: any;
}

/** One HTTP request over a fresh connection (no keep-alive). */
export function call(
  api: ApiServer | string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  extra: { ca?: string } = {},
): Promise<Reply> {
  const base = typeof api === 'string' ? api : api.url;
  const url = new URL(path, base);
  const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  const h: Record<string, string> = { Accept: 'application/json', 'User-Agent': 'emulator-spec/1.0', ...headers };
  if (payload !== undefined) {
    h['Content-Type'] ??= 'application/json';
    h['Content-Length'] = String(Buffer.byteLength(payload));
  }
  const fn = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = fn(url, { method, headers: h, agent: false, ...(extra.ca ? { ca: extra.ca } : {}) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown;
        try {
          parsed = raw ? JSON.parse(raw) : undefined;
        } catch {
          parsed = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, raw, body: parsed });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}

export interface WatchLine {
  tMs: number;
  text: string;
  event: any;
}

export interface WatchResult {
  status: number;
  headers: IncomingHttpHeaders;
  lines: WatchLine[];
  /** Bytes per socket read. */
  chunks: number[];
  /** `end`: terminating chunk received; `aborted`: connection closed mid-body; `client`: we aborted. */
  how: 'end' | 'aborted' | 'client';
  tailPartial: string;
  durationMs: number;
}

export interface OpenWatch {
  /** Resolves once headers arrived. */
  ready: Promise<{ status: number; headers: IncomingHttpHeaders }>;
  /** Lines so far. */
  lines: WatchLine[];
  /** Bytes per socket read so far. */
  chunks: number[];
  /** Resolves when the response ends (any way). */
  done: Promise<WatchResult>;
  /**
   * Resolves when `n` lines arrived. Rejects after `timeoutMs` (default 20 s, under the 30 s test timeout) only to show the lines
   * that did arrive: the wait is no oracle of speed, a missing line fails whatever the margin.
   */
  waitLines(n: number, timeoutMs?: number): Promise<WatchLine[]>;
  abort(): void;
}

/** Opens a watch (or any streaming GET) and collects its NDJSON lines. */
export function openWatch(api: ApiServer, path: string, headers: Record<string, string> = {}): OpenWatch {
  const url = new URL(path, api.url);
  const lines: WatchLine[] = [];
  const chunks: number[] = [];
  const t0 = performance.now();
  const waiters: { n: number; resolve: (l: WatchLine[]) => void }[] = [];
  let partial = '';
  let aborted = false;
  let readyResolve!: (v: { status: number; headers: IncomingHttpHeaders }) => void;
  let readyReject!: (e: Error) => void;
  const ready = new Promise<{ status: number; headers: IncomingHttpHeaders }>((res, rej) => {
    readyResolve = res;
    readyReject = rej;
  });
  ready.catch(() => {}); // observed through `done` too
  const fn = url.protocol === 'https:' ? httpsRequest : httpRequest;
  let req!: ReturnType<typeof httpRequest>;
  const done = new Promise<WatchResult>((resolve) => {
    req = fn(
      url,
      {
        method: 'GET',
        agent: false,
        headers: { Accept: 'application/json', 'User-Agent': 'emulator-spec/1.0', ...headers },
        ...(api.caPem ? { ca: api.caPem } : {}),
      },
      (res) => {
        readyResolve({ status: res.statusCode ?? 0, headers: res.headers });
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          chunks.push(Buffer.byteLength(c));
          const parts = (partial + c).split('\n');
          partial = parts.pop()!;
          for (const text of parts) {
            let event: unknown;
            try {
              event = JSON.parse(text);
            } catch {
              event = undefined;
            }
            lines.push({ tMs: performance.now() - t0, text, event });
          }
          for (const w of [...waiters]) {
            if (lines.length >= w.n) {
              waiters.splice(waiters.indexOf(w), 1);
              w.resolve(lines.slice());
            }
          }
        });
        res.on('error', () => {});
        res.on('close', () => {
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            lines,
            chunks,
            how: aborted ? 'client' : res.complete ? 'end' : 'aborted',
            tailPartial: partial,
            durationMs: performance.now() - t0,
          });
        });
      },
    );
    req.on('error', (e) => {
      readyReject(e);
      resolve({
        status: 0,
        headers: {},
        lines,
        chunks,
        how: aborted ? 'client' : 'aborted',
        tailPartial: partial,
        durationMs: performance.now() - t0,
      });
    });
    req.end();
  });
  return {
    ready,
    lines,
    chunks,
    done,
    waitLines(n, timeoutMs = 20_000) {
      if (lines.length >= n) return Promise.resolve(lines.slice());
      return new Promise((resolve, reject) => {
        const w = {
          n,
          resolve: (l: WatchLine[]) => {
            clearTimeout(t);
            resolve(l);
          },
        };
        const t = setTimeout(() => {
          waiters.splice(waiters.indexOf(w), 1);
          reject(new Error(`timed out waiting for ${n} lines; got ${lines.length}: ${lines.map((l) => l.text.slice(0, 80)).join(' | ')}`));
        }, timeoutMs);
        waiters.push(w);
      });
    },
    abort() {
      aborted = true;
      req.destroy();
    },
  };
}

/** Runs a complete watch request (must end by itself, e.g. with timeoutSeconds). */
export function watchAll(api: ApiServer, path: string, headers?: Record<string, string>): Promise<WatchResult> {
  return openWatch(api, path, headers).done;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Replaces volatile values (uids, timestamps) so objects from two servers can be compared byte for byte. */
export function normalize(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value)
      .replace(/"uid":"[0-9a-f-]{36}"/g, '"uid":"UID"')
      .replace(/"(creationTimestamp|time|lastTransitionTime|deletionTimestamp)":"[0-9T:Z-]+"/g, '"$1":"TS"'),
  );
}
