import { afterEach, describe, expect, it } from 'vitest';
import { connect, type Socket } from 'node:net';
import { VirtualAction, VirtualTimeScheduler, type Subscription } from 'rxjs';
import { serve } from '../../src/metrics/index.ts';
import { METRICS_CACHE_MS } from '../../src/metrics/serve.ts';
import type { MetricFamily } from '../../src/metrics/prometheus.ts';

// audit20 finding 1: 100 pipelined `GET /metrics` in one packet from each of 4 clients that read nothing were 400
// renders in one burst (a 5.7 s stall of the event loop), every answer held until the close. Counted here in renders
// (calls of `families()`), on a virtual clock standing still or moved by hand: nothing depends on the machine's speed.

const subscriptions: Subscription[] = [];
const sockets: Socket[] = [];
afterEach(() => {
  for (const s of sockets.splice(0)) s.destroy();
  for (const s of subscriptions.splice(0)) s.unsubscribe();
});

/**
 * serve() on 127.0.0.1 with `families` as its only families, its clock virtual (with the cache a real clock gets: a
 * virtual one's default is none): the URL once listening.
 */
async function serving(
  families: () => readonly MetricFamily[],
  scheduler: VirtualTimeScheduler,
  metricsCacheMs: number | 'default' = METRICS_CACHE_MS,
): Promise<string> {
  let url = '';
  const cache = metricsCacheMs === 'default' ? {} : { metricsCacheMs };
  subscriptions.push(serve([], { host: '127.0.0.1', families, scheduler, ...cache }).subscribe((s) => (url = s.url)));
  while (url === '') await new Promise((r) => setTimeout(r, 5));
  return url;
}

const gauge = (value: number, samples = 1): MetricFamily[] => [
  {
    name: 'audit_series',
    help: 'many',
    type: 'gauge',
    samples: Array.from({ length: samples }, (_, i) => ({ labels: { name: `resource-${i % 200}.example.com`, n: String(i) }, value })),
  },
];

const scrape = async (url: string) => (await fetch(`${url}/metrics`)).text();

describe('serve(): pipelined and concurrent scrapes of /metrics', () => {
  it('100 pipelined GET /metrics from each of 4 clients that read nothing are one render, not 400', async () => {
    const scheduler = new VirtualTimeScheduler(VirtualAction, 0);
    // ~200 resources × 20 series: a /metrics of a few hundred KB, as `--all` on a cluster with CRDs serves.
    const big = gauge(1, 4000);
    let renders = 0;
    const url = await serving(() => (renders++, big), scheduler);
    const port = Number(new URL(url).port);
    for (let c = 0; c < 4; c++) {
      const s = connect(port, '127.0.0.1');
      sockets.push(s);
      s.on('error', () => undefined);
      await new Promise<void>((r) => s.once('connect', () => r()));
      s.pause(); // never reads
      s.write('GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(100));
    }
    // An honest scrape on a fifth connection, written after the four packets: the server has read theirs before it.
    const honest = await scrape(url);
    expect(honest).toContain('audit_series{name="resource-199.example.com",n="3999"} 1\n');
    expect(renders).toBe(1);
  });

  it('a change is served from METRICS_CACHE_MS (1 s) after the last render on: before it, the last text', async () => {
    const scheduler = new VirtualTimeScheduler(VirtualAction, 0);
    let value = 1;
    let renders = 0;
    const url = await serving(() => (renders++, gauge(value)), scheduler);
    expect(await scrape(url)).toContain('} 1\n');
    value = 2;
    scheduler.frame = METRICS_CACHE_MS - 1;
    expect(await scrape(url)).toContain('} 1\n');
    expect(renders).toBe(1);
    scheduler.frame = METRICS_CACHE_MS;
    expect(await scrape(url)).toContain('} 2\n');
    expect(renders).toBe(2);
    // A clock that goes back does not keep the text for as long as it went back.
    value = 3;
    scheduler.frame = 10;
    expect(await scrape(url)).toContain('} 3\n');
    expect(renders).toBe(3);
  });

  it("a virtual clock's default is no cache: a test's clock may stand still between two scrapes (audit21); 0 turns it off", async () => {
    for (const metricsCacheMs of ['default', 0] as const) {
      const scheduler = new VirtualTimeScheduler(VirtualAction, 0);
      let value = 1;
      const url = await serving(() => gauge(value), scheduler, metricsCacheMs);
      expect(await scrape(url)).toContain('} 1\n');
      value = 2;
      expect(await scrape(url)).toContain('} 2\n');
    }
  });

  it('64 scrapers at once cost one render; each gets the whole answer', async () => {
    const scheduler = new VirtualTimeScheduler(VirtualAction, 0);
    let renders = 0;
    const big = gauge(7, 1000);
    const url = await serving(() => (renders++, big), scheduler);
    const answers = await Promise.all(Array.from({ length: 64 }, () => scrape(url)));
    expect(new Set(answers).size).toBe(1);
    expect(answers[0]).toContain('audit_series{name="resource-199.example.com",n="999"} 7\n');
    expect(renders).toBe(1);
  });
});
