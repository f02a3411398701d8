/**
 * Contender (d), the physical limit: `node:http`, line splitting on raw
 * buffers, `JSON.parse`, `Map.set`/`Map.delete`. No validation, no events, no
 * copies; lists paged 500 at a time like the informers; a relist writes into
 * the live map and then drops what the list no longer has. Its checksum sums the names of the same objects as an
 * informer's subscriber sees: every listed object (the sync and the relist), every watch event, and what a relist
 * drops.
 */
import * as http from 'node:http';
import type { Probe, RunConfig } from './probe.ts';

interface Meta {
  readonly name: string;
  readonly namespace?: string;
  readonly resourceVersion?: string;
}
interface Obj {
  readonly metadata: Meta;
  readonly code?: number;
}

export function runRaw(config: RunConfig, probe: Probe): void {
  const cache = new Map<string, Obj>();
  const agent = new http.Agent({ keepAlive: true });
  const keyOf = (o: Obj) => (o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name);
  const { pods: n, events: target, finalCount } = config;
  let lists = 0;
  let live = 0;
  let checksum = 0;

  const get = (path: string, onResponse: (response: http.IncomingMessage) => void) =>
    http.get({ host: '127.0.0.1', port: config.port, path, agent }, onResponse).on('error', (error) => probe.fail(error));

  const list = (token: string | undefined, seen: Set<string> | undefined) => {
    const path = `/api/v1/pods?limit=500${token ? `&continue=${encodeURIComponent(token)}` : ''}`;
    get(path, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          metadata: { resourceVersion: string; continue?: string };
          items: Obj[];
        };
        for (const item of body.items) {
          const key = keyOf(item);
          checksum += item.metadata.name.length;
          cache.set(key, item);
          seen?.add(key);
        }
        if (body.metadata.continue) return list(body.metadata.continue, seen);
        if (seen) {
          probe.relistHighWater();
          for (const [key, gone] of cache) {
            if (seen.has(key)) continue;
            checksum += gone.metadata.name.length;
            cache.delete(key);
          }
          probe.relistDone(seen.size);
        } else if (lists === 1) probe.synced();
        watch(body.metadata.resourceVersion);
      });
    });
  };
  const relist = () => {
    lists++;
    list(undefined, lists > 1 ? new Set() : undefined);
  };

  const watch = (resourceVersion: string) => {
    get(`/api/v1/pods?watch=1&resourceVersion=${resourceVersion}&allowWatchBookmarks=true`, (response) => {
      let pending: Buffer[] = [];
      const line = (text: string) => {
        const event = JSON.parse(text) as { type: string; object: Obj };
        switch (event.type) {
          case 'ADDED':
          case 'MODIFIED':
            checksum += event.object.metadata.name.length;
            cache.set(keyOf(event.object), event.object);
            break;
          case 'DELETED':
            checksum += event.object.metadata.name.length;
            cache.delete(keyOf(event.object));
            break;
          case 'ERROR':
            if (event.object.code === 410) {
              response.destroy();
              return relist();
            }
            return;
          default:
            return;
        }
        if (++live === target) probe.watched(live);
      };
      response.on('data', (chunk: Buffer) => {
        let start = 0;
        let nl = chunk.indexOf(10);
        if (pending.length > 0) {
          if (nl < 0) return void pending.push(chunk);
          pending.push(chunk.subarray(0, nl));
          line(Buffer.concat(pending).toString('utf8'));
          pending = [];
          start = nl + 1;
          nl = chunk.indexOf(10, start);
        }
        while (nl >= 0) {
          line(chunk.toString('utf8', start, nl));
          start = nl + 1;
          nl = chunk.indexOf(10, start);
        }
        if (start < chunk.length) pending.push(chunk.subarray(start));
      });
      response.on('error', () => undefined);
    });
  };

  probe.begin(() => cache.size);
  void finalCount;
  relist();
  probe.checksum = () => checksum;
}
