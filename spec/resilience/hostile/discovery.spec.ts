/**
 * The hostile-server suite: a server of our own answers each request kind
 * (list, continue page, watch, discovery, error Status) with pathological
 * responses — endless, huge, slow-drip, garbage, wrong content type, truncated —
 * and for each the client reports a clear typed error, reads no more than its
 * limit (the server can tell how much it got to write), does not crash, keeps
 * its memory bounded while the response keeps coming, and recovers once the
 * server behaves. Limits are lowered where that keeps the suite fast; the
 * defaults are in docs/reliability.md ("Limits").
 */
import { lastValueFrom } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { ConfigMap, informer, type ErrorReason, type InformerError } from '../../../src/index.ts';
import { discover } from '../../../src/discovery/index.ts';
import { type HttpTransportOptions } from '../../../src/pipeline.ts';
import { httpListWatch } from '../../../src/pipeline.ts';
import { waitFor } from '../harness/live.ts';
import { MiB, retainedBytes } from './memory.ts';
import {
  behave,
  configMap,
  drip,
  endless,
  garbage,
  status,
  truncated,
  wrongContentType,
  type Behaviour,
  type RequestKind,
} from './server.ts';
import { BUDGET, IN_FLIGHT, LIST_BODY_HEAD, discoveryWith, failure, json, perTest, target } from './support.ts';

const { subscriptions, serve, start } = perTest();

describe('hostile server: discovery', () => {
  const cases: { name: string; path: string; behaviour: Behaviour; reason: ErrorReason; message: RegExp }[] = [
    {
      name: 'endless /api',
      path: '/api',
      behaviour: endless(200),
      reason: 'ResponseTooLarge',
      message: /^GET \/api: the response is larger than the 4 MiB limit .*option maxDocumentBytes/,
    },
    {
      name: 'endless 503 body on /apis',
      path: '/apis',
      behaviour: endless(503),
      reason: 'ResponseTooLarge',
      message: /^GET \/apis \(HTTP 503 error body\): .*1 MiB limit/,
    },
    { name: 'slow-drip /apis', path: '/apis', behaviour: drip(200), reason: 'ResponseTooLarge', message: /256 KiB limit/ },
    {
      name: 'garbage /api',
      path: '/api',
      behaviour: garbage(200),
      reason: 'MalformedLine',
      message: /GET \/api: the response is not JSON/,
    },
    { name: 'HTML /apis', path: '/apis', behaviour: wrongContentType(200), reason: 'MalformedLine', message: /not JSON/ },
    {
      name: 'truncated /api',
      path: '/api',
      behaviour: truncated(200, '{"kind":"APIVersions","versions":["v1"]}'),
      reason: 'NetworkError',
      message: /closed before/,
    },
    {
      name: '/api answering null',
      path: '/api',
      behaviour: json('null'),
      reason: 'MalformedLine',
      message: /^GET \/api: the response is not an APIVersions \(null\)$/,
    },
    {
      name: '/apis with groups of the wrong type',
      path: '/apis',
      behaviour: json('{"groups":"x"}'),
      reason: 'MalformedLine',
      message: /not an APIGroupList \(groups is a string\)/,
    },
  ];
  for (const c of cases) {
    it(`${c.name} → ${c.reason} from discover()`, async () => {
      const s = await start('discovery', discoveryWith(c.path, c.behaviour));
      const measured = c.reason === 'ResponseTooLarge';
      const before = measured ? retainedBytes() : 0;
      const error = await failure(discover(s.kc, c.name.startsWith('slow') ? { maxDocumentBytes: 256 * 1024 } : {}));
      expect(error.reason).toBe(c.reason);
      expect(error.message).toMatch(c.message);
      expect(s.written.discovery).toBeLessThan(4 * MiB + IN_FLIGHT);
      if (measured) expect(retainedBytes() - before).toBeLessThan(BUDGET);
    });
  }

  it('a group version answering null (or a huge body) is a failure of that group version, as a 503 is; the rest is kept', async () => {
    for (const [behaviour, reason] of [
      [json('null'), 'MalformedLine'],
      [endless(200), 'ResponseTooLarge'],
      [status(503, 'ServiceUnavailable', 'down'), 'ServerError'],
    ] as const) {
      const s = await start('discovery', discoveryWith('/api/v1', behaviour));
      const found = await lastValueFrom(discover(s.kc));
      expect(found.failures.map((f) => [f.groupVersion, f.error.reason])).toEqual([['v1', reason]]);
      await s.close();
    }
  });

  it('an empty resource list ("resources": null) is not a failure', async () => {
    const s = await start('discovery', discoveryWith('/api/v1', json('{"kind":"APIResourceList","groupVersion":"v1","resources":null}')));
    const found = await lastValueFrom(discover(s.kc));
    expect(found.failures).toEqual([]);
    expect(found.all).toEqual([]);
  });
});

describe('hostile server: error Status messages', () => {
  it('a Status message of 512 KiB is printed as its first 1 KiB and its size', async () => {
    const s = await start('list', status(500, 'InternalError', 'x'.repeat(512 * 1024)));
    const error = await failure(httpListWatch(s.kc, target).list({}));
    expect(error.reason).toBe('ServerError');
    expect(error.message).toBe(`${'x'.repeat(1024)}… (524288 bytes)`);
  });

  it('a watch ERROR event with a huge message reaches errors$ capped', async () => {
    const huge = {
      type: 'ERROR',
      object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'y'.repeat(200_000), reason: 'InternalError', code: 500 },
    };
    const server = await serve({ list: behave.list([]), watch: behave.watch([huge]) });
    const errors: InformerError[] = [];
    subscriptions.push(
      informer(server.kc, ConfigMap, { namespace: 'default', backoff: { initialMs: 10_000 } }).errors$.subscribe((e) => errors.push(e)),
    );
    await waitFor('the ERROR event', () => errors.length > 0);
    expect(errors[0]!.message).toBe(`${'y'.repeat(1024)}… (200000 bytes)`);
  });
});

describe('hostile server: recovery once the server behaves', () => {
  const fast = { backoff: { initialMs: 10, maxMs: 50 }, namespace: 'default' } as const;
  const cases: { name: string; kind: RequestKind; behaviour: Behaviour; reason: ErrorReason; http?: HttpTransportOptions }[] = [
    {
      name: 'endless list',
      kind: 'list',
      behaviour: endless(200, { head: LIST_BODY_HEAD }),
      reason: 'ResponseTooLarge',
      http: { maxListBytes: MiB },
    },
    { name: 'endless 500 on the watch', kind: 'watch', behaviour: endless(500), reason: 'ResponseTooLarge' },
    {
      name: 'a watch line that never ends',
      kind: 'watch',
      behaviour: endless(200, { head: '{"type":"ADDED"' }),
      reason: 'MalformedLine',
      http: { maxLineBytes: MiB },
    },
    { name: 'garbage list', kind: 'list', behaviour: garbage(200), reason: 'MalformedLine' },
  ];
  for (const c of cases) {
    it(`${c.name}: ${c.reason} on errors$, then the informer converges`, async () => {
      const server = await serve({
        list: behave.list([configMap('a', '10')]),
        watch: behave.watch([{ type: 'ADDED', object: configMap('b', '11') }]),
        [c.kind]: c.behaviour,
      });
      const cache = informer(server.kc, ConfigMap, { ...fast, http: c.http });
      const errors: InformerError[] = [];
      let keys: string[] = [];
      subscriptions.push(
        cache.errors$.subscribe((e) => errors.push(e)),
        cache.store$.subscribe((st) => (keys = st.keys().sort())),
      );
      await waitFor(`${c.reason} on errors$`, () => errors.some((e) => e.reason === c.reason));
      server.on('list', behave.list([configMap('a', '10')]));
      server.on('watch', behave.watch([{ type: 'ADDED', object: configMap('b', '11') }]));
      await waitFor('the store to converge', () => keys.join() === 'default/a,default/b');
    });
  }

  it('discovery: an endless /api fails, the next discovery succeeds', async () => {
    const s = await start('discovery', discoveryWith('/api', endless(200)));
    expect((await failure(discover(s.kc))).reason).toBe('ResponseTooLarge');
    s.on('discovery', behave.discovery());
    const found = await lastValueFrom(discover(s.kc));
    expect(found.resources.map((r) => r.plural)).toEqual(['configmaps']);
  });
});
