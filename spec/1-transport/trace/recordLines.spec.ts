/**
 * `record` over the HTTP transport writes each watch event as the line it came in (`watchLines`), not
 * serialized again: against the emulator over real HTTP (HTTP/1.1 and HTTP/2), the trace reads exactly
 * as one written the old way (from the parsed events), `at` aside; a Secret's values never reach the file.
 */
import { firstValueFrom, take, toArray } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { ConfigMap, Secret, type KubeObject, type Resource } from '../../../src/index.ts';
import { httpListWatch, type HttpTransportOptions } from '../../../src/1-transport/httpTransport.ts';
import type { ListWatch } from '../../../src/1-transport/listWatch.ts';
import { record, type RecordOptions } from '../../../src/1-transport/trace/record.ts';
import { traceWriter } from '../../../src/1-transport/trace/writer.ts';
import { readTrace, type TraceLine } from '../../../src/1-transport/trace/format.ts';

let api: ApiServer | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

function freshKubeConfig(server: ApiServer): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(server.kubeConfig.exportConfig());
  return kc;
}

/** The ListWatch without `watchLines`: `record` then serializes each parsed event, as it did before. */
const parsedOnly = (listWatch: ListWatch): ListWatch => ({ list: (o) => listWatch.list(o), watch: (o) => listWatch.watch(o) });

/**
 * Lists (unless `list` is false), then watches from revision 1 (the emulator replays its history) for `events`
 * events: the trace's text, and how many lines were written as they came.
 */
async function recordRun(listWatch: ListWatch, events: number, options: RecordOptions = {}, list = true) {
  let text = '';
  const writer = traceWriter({ write: (line) => (text += line), resources: [options.resource ?? 'x'] });
  const asCame = vi.spyOn(writer, 'eventLine');
  const recorded = record(listWatch, writer, options);
  if (list) await firstValueFrom(recorded.list({}));
  await firstValueFrom(recorded.watch({ resourceVersion: '1', allowWatchBookmarks: true }).pipe(take(events), toArray()));
  writer.close();
  return { text, asCame: asCame.mock.results.filter((r) => r.value === true).length };
}

const withoutAt = (lines: readonly TraceLine[]) => lines.map(({ at: _at, ...rest }) => rest);

/** ConfigMaps whose data a serializer could write otherwise than the server did: escapes, HTML characters, non-ASCII, numbers. */
function fill(server: ApiServer): number {
  const values = ['plain', '<b>&amp;</b>', 'quote " and \\ backslash', 'tab\tnew\nline', 'żółw 🐢 \u2028', '1e3', '-0', '0.1'];
  values.forEach((value, i) =>
    server.create('configmaps', { metadata: { name: `cm-${i}`, namespace: 'default', labels: { i: `${i}` } }, data: { value } }),
  );
  server.patch('configmaps', 'default', 'cm-0', { data: { value: 'changed', more: '√2' } });
  server.delete('configmaps', 'default', 'cm-1');
  return values.length + 2;
}

for (const protocol of ['http1', 'h2'] as const) {
  describe(`record over the HTTP transport (${protocol === 'h2' ? 'HTTP/2' : 'HTTP/1.1'})`, () => {
    const transport = (lazyDecode: boolean): HttpTransportOptions => ({ protocol, lazyDecode });
    const start = () => startApiServer(protocol === 'h2' ? { http2: true } : {});

    it.each([false, true])(
      'writes the lines as they came, and the trace reads as one of the parsed events (lazyDecode %s)',
      async (lazy) => {
        api = await start();
        const events = fill(api);
        const kc = freshKubeConfig(api);
        const listWatch = httpListWatch(kc, { resource: ConfigMap as Resource<KubeObject> }, transport(lazy));
        expect(listWatch.watchLines).toBeTypeOf('function');
        const lines = await recordRun(listWatch, events);
        const parsed = await recordRun(parsedOnly(listWatch), events);
        expect(lines.asCame).toBe(events);
        expect(parsed.asCame).toBe(0);
        expect(withoutAt(readTrace(lines.text).lines)).toEqual(withoutAt(readTrace(parsed.text).lines));
        expect(readTrace(lines.text).lines.filter((l) => l.type === 'event')).toHaveLength(events);
      },
    );

    it('over protobuf (frames, no lines): every event serialized from the parsed one, the trace as over JSON', async () => {
      api = await start();
      const events = fill(api);
      const kc = freshKubeConfig(api);
      const json = httpListWatch(kc, { resource: ConfigMap as Resource<KubeObject> }, transport(true));
      const protobuf = httpListWatch(kc, { resource: ConfigMap as Resource<KubeObject> }, { ...transport(true), encoding: 'protobuf' });
      const framed = await recordRun(protobuf, events);
      expect(framed.asCame).toBe(0);
      expect(api.requests.some((r) => r.accept?.includes('protobuf'))).toBe(true);
      const lines = await recordRun(json, events);
      expect(withoutAt(readTrace(framed.text).lines)).toEqual(withoutAt(readTrace(lines.text).lines));
    });

    it.each([false, true])("never writes a Secret's values, listed or watched (lazyDecode %s)", async (lazy) => {
      api = await start();
      for (const [i, value] of ['hunter2', 'correct horse'].entries())
        api.create('secrets', {
          kind: 'Secret',
          metadata: {
            name: `s-${i}`,
            namespace: 'default',
            annotations: { 'kubectl.kubernetes.io/last-applied-configuration': `{"data":"${value}"}` },
          },
          data: { password: Buffer.from(value).toString('base64') },
          stringData: { plain: value },
        });
      api.patch('secrets', 'default', 's-0', { data: { password: Buffer.from('swordfish').toString('base64') } });
      const kc = freshKubeConfig(api);
      const listWatch = httpListWatch(kc, { resource: Secret as Resource<KubeObject> }, transport(lazy));
      // Named `secrets`: every object; unnamed (list items carry no kind, so the watch alone): each event's kind.
      for (const [options, list] of [
        [{ resource: 'secrets' }, true],
        [{}, false],
      ] as const) {
        const { text, asCame } = await recordRun(listWatch, 3, options, list);
        for (const value of ['hunter2', 'correct horse', 'swordfish'])
          for (const form of [value, Buffer.from(value).toString('base64')]) expect(text).not.toContain(form);
        expect(readTrace(text).lines.filter((l) => l.type === 'event')).toHaveLength(3);
        expect(text).toMatch(/<redacted:[0-9a-f]{12}>/);
        expect(asCame).toBe(0);
      }
      // With redaction off, the lines are written as they came, values and all.
      const clear = await recordRun(listWatch, 3, { redact: false }, false);
      expect(clear.asCame).toBe(3);
      expect(clear.text).toContain(Buffer.from('swordfish').toString('base64'));
    });
  });
}
