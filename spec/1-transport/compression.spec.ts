/**
 * `http.compression: 'gzip'` against the emulator over real HTTP, through the normal KubeConfig path, on
 * HTTP/1.1 and HTTP/2: lists and watches arrive gzipped and read as without, a server that ignores the
 * header keeps working, `none` asks for nothing, and the transport counts wire and decoded bytes.
 */
import { firstValueFrom, toArray } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { ConfigMap, type InformerOptions, type KubeObject } from '../../src/index.ts';
import { httpListWatch } from '../../src/1-transport/httpTransport.ts';
import { toPrometheusText, transportBytes, transportFamilies, type TransportBytes } from '../../src/metrics/index.ts';
import { startApiServer, type ApiServer, type ApiServerOptions } from 'rx-informer-emulator';
import { cm, converged, run, waitFor } from '../resilience/harness/live.ts';

let api: ApiServer | undefined;
const stops: (() => void)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) stop();
  await api?.close();
  api = undefined;
});

/** The emulator's KubeConfig copied, so that each test has its own connections. */
function freshKubeConfig(server: ApiServer): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(server.kubeConfig.exportConfig());
  return kc;
}

/** 300 ConfigMaps of about 1 KiB: a list of about 330 KiB, past kube-apiserver's 128 KiB gzip threshold. */
function fill(server: ApiServer): void {
  for (let i = 0; i < 300; i++) server.create('configmaps', cm(`cm-${i}`, 'default', { value: `v${i}-`.repeat(200) }));
}

function delta(before: TransportBytes): TransportBytes {
  const now = transportBytes();
  return {
    identityResponses: now.identityResponses - before.identityResponses,
    identityBytes: now.identityBytes - before.identityBytes,
    gzipResponses: now.gzipResponses - before.gzipResponses,
    gzipWireBytes: now.gzipWireBytes - before.gzipWireBytes,
    gzipDecodedBytes: now.gzipDecodedBytes - before.gzipDecodedBytes,
  };
}

for (const protocol of ['http1', 'h2'] as const) {
  describe(`compression over ${protocol === 'h2' ? 'HTTP/2' : 'HTTP/1.1'}`, () => {
    const start = (gzip: ApiServerOptions['gzip']) => startApiServer({ gzip, ...(protocol === 'h2' ? { http2: true } : {}) });
    const options = (compression: 'gzip' | 'none'): InformerOptions<KubeObject> => ({
      http: { compression, protocol },
      backoff: { initialMs: 10, maxMs: 50 },
    });

    it('gzip: a list and a watch come gzipped, read as they would be plain, each event as soon as it is sent', async () => {
      api = await start({ watch: true });
      fill(api);
      const before = transportBytes();
      const live = run(api, ConfigMap, options('gzip'), freshKubeConfig(api));
      stops.push(live.stop);
      await waitFor('the informer to sync', live.synced, 10_000);
      await converged(api, live, 'configmaps', 'default');
      // The list and the watch: both gzipped.
      await waitFor('the watch to answer', () => delta(before).gzipResponses === 2);
      const listed = delta(before);
      expect(listed.identityResponses).toBe(0);
      expect(listed.gzipDecodedBytes).toBeGreaterThan(300 * 1000);
      expect(listed.gzipWireBytes * 5).toBeLessThan(listed.gzipDecodedBytes);
      // Events one by one: each is in the store before the next is created.
      for (let i = 0; i < 5; i++) {
        api.create('configmaps', cm(`later-${i}`));
        await waitFor(`later-${i} in the store`, () => live.store()?.get(`default/later-${i}`) !== undefined);
      }
      api.patch('configmaps', 'default', 'cm-0', { data: { value: 'changed' } });
      await converged(api, live, 'configmaps', 'default');
      expect(live.errors).toEqual([]);
      expect(live.watches()).toHaveLength(1);
    });

    it('gzip asked of a server that ignores it: plain answers, read as ever', async () => {
      api = await start(false);
      fill(api);
      const before = transportBytes();
      const live = run(api, ConfigMap, options('gzip'), freshKubeConfig(api));
      stops.push(live.stop);
      await waitFor('the informer to sync', live.synced, 10_000);
      api.create('configmaps', cm('later'));
      await converged(api, live, 'configmaps', 'default');
      const seen = delta(before);
      expect(seen.gzipResponses).toBe(0);
      expect(seen.identityResponses).toBeGreaterThanOrEqual(2);
      expect(seen.identityBytes).toBeGreaterThan(300 * 1000);
      expect(live.errors).toEqual([]);
    });

    it('as kube-apiserver: lists up to 128 KiB, and watches, stay plain; none asks for nothing, the default for gzip', async () => {
      api = await start(true);
      api.create('configmaps', cm('small'));
      const kc = freshKubeConfig(api);
      let before = transportBytes();
      const small = await firstValueFrom(httpListWatch(kc, { resource: ConfigMap }, { compression: 'gzip', protocol }).list({}));
      expect(small.items).toHaveLength(1);
      expect(delta(before).gzipResponses).toBe(0);
      fill(api);
      before = transportBytes();
      const plain = await firstValueFrom(httpListWatch(kc, { resource: ConfigMap }, { compression: 'none', protocol }).list({}));
      expect(delta(before).gzipResponses).toBe(0);
      before = transportBytes();
      // The default asks for gzip.
      const gzipped = await firstValueFrom(httpListWatch(kc, { resource: ConfigMap }, { protocol }).list({}));
      expect(delta(before).gzipResponses).toBe(1);
      expect(gzipped).toEqual(plain);
      expect(gzipped.items).toHaveLength(301);
      // A watch (kube-apiserver never gzips one) from the list's resourceVersion, ended by the server.
      before = transportBytes();
      const watch = httpListWatch(kc, { resource: ConfigMap }, { compression: 'gzip', protocol }).watch({
        resourceVersion: gzipped.resourceVersion,
        timeoutSeconds: 1,
      });
      const frames = firstValueFrom(watch.pipe(toArray()));
      api.create('configmaps', cm('watched'));
      expect((await frames).map((f) => ('type' in f ? f.type : f.reason))).toEqual(['ADDED']);
      expect(delta(before).gzipResponses).toBe(0);
    });
  });
}

describe('bytes saved, as metrics', () => {
  it('transportFamilies: responses per encoding, body bytes on the wire and decoded', () => {
    const text = toPrometheusText(
      transportFamilies({ identityResponses: 3, identityBytes: 500, gzipResponses: 2, gzipWireBytes: 100, gzipDecodedBytes: 1400 }),
    );
    expect(text).toContain('# TYPE informer_transport_body_bytes_total counter');
    expect(text).toContain('informer_transport_responses_total{encoding="gzip"} 2');
    expect(text).toContain('informer_transport_body_bytes_total{encoding="gzip",stage="wire"} 100');
    expect(text).toContain('informer_transport_body_bytes_total{encoding="gzip",stage="decoded"} 1400');
    expect(text).toContain('informer_transport_body_bytes_total{encoding="identity",stage="decoded"} 500');
  });
});
