import { describe, expect, it } from 'vitest';
import { firstValueFrom, take, toArray } from 'rxjs';
import { ConfigMap, informer, type InformerEvent } from '../../src/index.ts';
import { configMap, json, smallServer, type Reply } from './smallServer.ts';

const list = (resourceVersion: string, ...items: ReturnType<typeof configMap>[]): Reply =>
  json(200, { kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion }, items });

/** A watch that sends these lines, then stays open. */
const watch =
  (...lines: unknown[]): Reply =>
  (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.write(lines.map((l) => JSON.stringify(l) + '\n').join(''));
  };
const hang: Reply = (_req, res) => res.writeHead(200, { 'Content-Type': 'application/json' });
const cm = (name: string, rv: string) => ({ kind: 'ConfigMap', apiVersion: 'v1', ...configMap(name, rv) });

describe("delivery over HTTP: 'delta-fifo' and 'in-order' side by side", () => {
  for (const delivery of ['delta-fifo', 'in-order'] as const) {
    it(`${delivery}: a relist after 410 Gone tells the missed deletion ${delivery === 'in-order' ? 'before' : 'after'} the listed objects`, async () => {
      const server = await smallServer(hang);
      try {
        server.reply(
          list('10', configMap('a', '5'), configMap('b', '6')),
          // progress first (so the 410 relists at once), then the watch cache has moved on
          watch(
            { type: 'MODIFIED', object: cm('b', '11') },
            {
              type: 'ERROR',
              object: { kind: 'Status', apiVersion: 'v1', code: 410, reason: 'Expired', message: 'too old resource version' },
            },
          ),
          // meanwhile a was deleted and c created
          list('13', configMap('c', '12'), configMap('b', '11')),
        );
        const cms = informer(server.kc, ConfigMap, { namespace: 'default', delivery });
        const events = await firstValueFrom(cms.events$.pipe(take(6), toArray()));
        const brief = (e: InformerEvent<ConfigMap>) =>
          `${e.type} ${e.object.metadata.name}${e.type === 'deleted' && e.finalStateUnknown ? ' (missed)' : ''}${e.type === 'updated' && e.resync ? ' (unchanged)' : ''}`;
        const head = ['added a', 'added b', 'updated b'];
        expect(events.map(brief)).toEqual(
          delivery === 'in-order'
            ? [...head, 'deleted a (missed)', 'added c', 'updated b (unchanged)']
            : [...head, 'added c', 'updated b (unchanged)', 'deleted a (missed)'],
        );
        expect(server.requests.filter((r) => r.searchParams.get('watch') !== '1')).toHaveLength(2);
      } finally {
        await server.close();
      }
    });
  }
});
