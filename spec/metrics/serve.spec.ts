import { Server } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { NEVER, VirtualAction, VirtualTimeScheduler, mergeMap, of, throwError, timer, type Subscription } from 'rxjs';
import { InformerError, informer, type KubeObject } from '../../src/index.ts';
import { type ListWatch } from '../../src/pipeline.ts';
import { serve } from '../../src/metrics/index.ts';
import { METRICS_CACHE_MS } from '../../src/metrics/serve.ts';
import { fakeResource, kubeObj } from '../../src/testing/index.ts';
import { listPage } from '../../src/testing/fakeListWatch.ts';

/** Virtual time for the informer, real HTTP for the probes. */
function virtualClock() {
  const scheduler = new VirtualTimeScheduler(VirtualAction, 0);
  return {
    scheduler,
    /** Runs every timer due up to `ms` (virtual), and stands there. */
    advanceTo(ms: number) {
      scheduler.maxFrames = ms;
      scheduler.flush();
      scheduler.frame = ms;
    },
  };
}

const get = async (url: string) => {
  const res = await fetch(url);
  return { status: res.status, body: await res.text(), type: res.headers.get('content-type') };
};

describe('serve()', () => {
  const subscriptions: Subscription[] = [];
  afterEach(() => {
    for (const s of subscriptions.splice(0)) s.unsubscribe();
  });

  it('readyz flips to 503 when the server is black-holed past 120 s (the default), and back to 200 after recovery', async () => {
    const { scheduler, advanceTo } = virtualClock();
    const resource = fakeResource();
    const object = (rv: string) => kubeObj('a', { apiVersion: 'example.com/v1', kind: 'Widget', resourceVersion: rv });
    let blackHole = false;
    // What the HTTP transport does when nothing answers: a Timeout after 30 s without response headers.
    const hang = (phase: 'list' | 'watch') =>
      timer(30_000, scheduler).pipe(
        mergeMap(() => throwError(() => new InformerError('Timeout', 'no response headers within 30000 ms', { phase }))),
      );
    const lw: ListWatch = {
      list: () => (blackHole ? hang('list') : of(listPage('10', [object('10')]))),
      watch: () => (blackHole ? hang('watch') : NEVER),
    };
    const widgets = informer<KubeObject>(lw, resource, { scheduler, random: () => 0.5 });
    const serving = serve([widgets], { host: '127.0.0.1', port: 0, scheduler });
    let url = '';
    subscriptions.push(serving.subscribe((s) => (url = s.url)));
    while (url === '') await new Promise((r) => setTimeout(r, 5));
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    advanceTo(1);
    expect(await get(`${url}/healthz`)).toMatchObject({ status: 200, body: 'ok\n' });
    let ready = await get(`${url}/readyz`);
    expect(ready.status).toBe(200);
    expect(ready.body).toBe('[+]widgets.example.com ok\nok\n');

    // The network goes dark at 30 s; the idle rule resumes the quiet watch at 60 s, which hangs, and so on.
    advanceTo(30_000);
    blackHole = true;
    advanceTo(200_000);
    expect((await get(`${url}/readyz`)).status).toBe(200); // failing since 90 s: not yet 120 s
    advanceTo(211_000);
    ready = await get(`${url}/readyz`);
    expect(ready.status).toBe(503);
    expect(ready.body).toMatch(/^\[-\]widgets\.example\.com: failing for 121 s \(\d+ failures in a row, last Timeout\)\nnot ready\n$/);
    const metrics = await get(`${url}/metrics`);
    expect(metrics.type).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(metrics.body).toContain('informer_synced{name="widgets.example.com"} 1');
    expect(metrics.body).toContain('informer_store_objects{name="widgets.example.com"} 1');
    expect(metrics.body).toMatch(/informer_store_bytes\{name="widgets\.example\.com"\} [1-9]\d*/);
    expect(metrics.body).toContain('reflector_last_resource_version{name="widgets.example.com"} 10');
    expect(metrics.body).toMatch(/informer_consecutive_failures\{name="widgets\.example\.com"\} [1-9]/);

    // The network comes back. The attempt in flight still times out (≤ 30 s), the next one comes after the
    // backoff (≤ 30 s) and succeeds: a list counts at once; a quiet watch when the idle rule resumes it (60 s).
    blackHole = false;
    advanceTo(211_000 + 30_000);
    expect((await get(`${url}/readyz`)).status).toBe(503);
    advanceTo(211_000 + 121_000);
    ready = await get(`${url}/readyz`);
    expect(ready).toMatchObject({ status: 200, body: '[+]widgets.example.com ok\nok\n' });
    expect((await get(`${url}/metrics`)).body).toContain('informer_consecutive_failures{name="widgets.example.com"} 0');
  });

  it("serves each informer's handler queue depth and handler duration (default options, virtual time)", async () => {
    const { scheduler, advanceTo } = virtualClock();
    const object = (name: string) => kubeObj(name, { apiVersion: 'example.com/v1', kind: 'Widget', resourceVersion: '10' });
    const lw: ListWatch = { list: () => of(listPage('10', [object('a'), object('b'), object('c')])), watch: () => NEVER };
    const widgets = informer<KubeObject>(lw, fakeResource(), { scheduler });
    // Each event takes the handler 4 s; a second handler is quick and keeps nothing waiting.
    subscriptions.push(widgets.on(() => timer(4_000, scheduler)));
    subscriptions.push(widgets.on(() => undefined));
    let url = '';
    subscriptions.push(serve([widgets], { host: '127.0.0.1', scheduler }).subscribe((s) => (url = s.url)));
    while (url === '') await new Promise((r) => setTimeout(r, 5));
    const handlerLines = async () =>
      (await get(`${url}/metrics`)).body.split('\n').filter((line) => line.startsWith('informer_handler_') && !line.startsWith('#'));

    advanceTo(1);
    // The slow handler runs a, b and c wait; the quick one has handled all three in no (virtual) time.
    expect(await handlerLines()).toEqual([
      'informer_handler_queue_depth{name="widgets.example.com"} 2',
      'informer_handler_duration_seconds_sum{name="widgets.example.com"} 0',
      'informer_handler_duration_seconds_count{name="widgets.example.com"} 3',
    ]);
    advanceTo(4_001);
    expect(await handlerLines()).toEqual([
      'informer_handler_queue_depth{name="widgets.example.com"} 1',
      'informer_handler_duration_seconds_sum{name="widgets.example.com"} 4',
      'informer_handler_duration_seconds_count{name="widgets.example.com"} 4',
    ]);
    advanceTo(20_000);
    const done = await get(`${url}/metrics`);
    expect(done.body).toContain('# TYPE informer_handler_queue_depth gauge\ninformer_handler_queue_depth{name="widgets.example.com"} 0\n');
    expect(done.body).toContain('# TYPE informer_handler_duration_seconds summary\n');
    expect(done.body).toContain('informer_handler_duration_seconds_sum{name="widgets.example.com"} 12\n');
    expect(done.body).toContain('informer_handler_duration_seconds_count{name="widgets.example.com"} 6\n');
  });

  it("a handler's backlog leaves the depth when the handler is removed", async () => {
    const { scheduler, advanceTo } = virtualClock();
    const object = (name: string) => kubeObj(name, { apiVersion: 'example.com/v1', kind: 'Widget', resourceVersion: '10' });
    const lw: ListWatch = { list: () => of(listPage('10', [object('a'), object('b'), object('c')])), watch: () => NEVER };
    const widgets = informer<KubeObject>(lw, fakeResource(), { scheduler });
    const slow = widgets.on(() => NEVER);
    let url = '';
    subscriptions.push(serve([widgets], { host: '127.0.0.1', scheduler }).subscribe((s) => (url = s.url)));
    while (url === '') await new Promise((r) => setTimeout(r, 5));
    advanceTo(1);
    expect((await get(`${url}/metrics`)).body).toContain('informer_handler_queue_depth{name="widgets.example.com"} 2\n');
    slow.unsubscribe();
    // Within a second of the last render a scrape gets its text (METRICS_CACHE_MS, spec/metrics/probePipelining.spec.ts).
    advanceTo(1 + METRICS_CACHE_MS);
    const after = (await get(`${url}/metrics`)).body;
    expect(after).toContain('informer_handler_queue_depth{name="widgets.example.com"} 0\n');
    // Work cut short is not a duration.
    expect(after).toContain('informer_handler_duration_seconds_count{name="widgets.example.com"} 0\n');
  });

  it('answers 404 and 405 plainly, serves extra families, and closes when unsubscribed', async () => {
    const { scheduler } = virtualClock();
    const serving = serve([], {
      host: '127.0.0.1',
      scheduler,
      families: () => [{ name: 'my_total', help: 'Mine.', type: 'counter', samples: [{ labels: {}, value: 3 }] }],
    });
    let url = '';
    const sub = serving.subscribe((s) => (url = s.url));
    while (url === '') await new Promise((r) => setTimeout(r, 5));
    // The 404 names every path served (/livez too); a 405 names the methods allowed (RFC 9110: audit39 found no Allow).
    expect(await get(`${url}/nope`)).toMatchObject({ status: 404, body: 'not found: /healthz, /livez, /readyz, /metrics\n' });
    const post = await fetch(`${url}/metrics`, { method: 'POST', body: 'x' });
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
    expect((await get(`${url}/readyz`)).status).toBe(200);
    expect((await get(`${url}/metrics`)).body).toContain('# TYPE my_total counter\nmy_total 3\n');
    sub.unsubscribe();
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });

  it('answers /livez as /healthz; a throwing families() is a one-line comment in /metrics, the rest still served', async () => {
    const { scheduler } = virtualClock();
    const serving = serve([], {
      host: '127.0.0.1',
      scheduler,
      families: () => {
        throw new Error('mine\nbroke');
      },
    });
    let url = '';
    subscriptions.push(serving.subscribe((s) => (url = s.url)));
    while (url === '') await new Promise((r) => setTimeout(r, 5));
    expect(await get(`${url}/livez`)).toMatchObject({ status: 200, body: 'ok\n' });
    const metrics = await get(`${url}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.body.startsWith('# families() failed: mine broke\n')).toBe(true);
    expect(metrics.body).toContain('# TYPE informer_transport_responses_total counter');
  });

  it('/readyz escapes a resource name from discovery: a newline in it forges no line', async () => {
    const { scheduler, advanceTo } = virtualClock();
    const plural = 'evil\n[+]forged ok\nok';
    const lw: ListWatch = { list: () => of(listPage('10', [])), watch: () => NEVER };
    const hostile = informer<KubeObject>(lw, fakeResource({ plural }), { scheduler });
    let url = '';
    subscriptions.push(serve([hostile], { host: '127.0.0.1', scheduler }).subscribe((s) => (url = s.url)));
    while (url === '') await new Promise((r) => setTimeout(r, 5));
    advanceTo(1);
    const ready = await get(`${url}/readyz`);
    expect(ready).toMatchObject({ status: 200, body: '[+]evil\\n[+]forged ok\\nok.example.com ok\nok\n' });
    expect((await get(`${url}/metrics`)).body).toContain('informer_synced{name="evil\\n[+]forged ok\\nok.example.com"} 1\n');
  });

  it('a failed accept (EMFILE, as Node emits it on the listening server) is a warning, once: serve() goes on answering', async () => {
    const listen = vi.spyOn(Server.prototype, 'listen');
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      let url = '';
      let failed: unknown;
      subscriptions.push(serve([], { host: '127.0.0.1' }).subscribe({ next: (s) => (url = s.url), error: (e) => (failed = e) }));
      while (url === '' && failed === undefined) await new Promise((r) => setTimeout(r, 5));
      const server = listen.mock.contexts[0] as Server;
      // lib/net.js onconnection: `self.emit('error', new ErrnoException(err, 'accept'))`, the handle still listening.
      const emfile = () => Object.assign(new Error('accept EMFILE'), { code: 'EMFILE', errno: -24, syscall: 'accept' });
      server.emit('error', emfile());
      server.emit('error', emfile());
      expect(failed).toBeUndefined();
      expect(server.listening).toBe(true);
      expect(await get(`${url}/healthz`)).toMatchObject({ status: 200, body: 'ok\n' });
      const warnings = warn.mock.calls.filter(([message]) => String(message).includes('accept failed'));
      expect(warnings).toHaveLength(1); // rate limited: the second within 5 minutes is counted, not written
      expect(warnings[0]![1]).toMatchObject({ type: 'RxInformerWarning', code: 'NetworkError' });
    } finally {
      listen.mockRestore();
      warn.mockRestore();
    }
  });

  it("a port already taken is the Observable's error, not a crash", async () => {
    const first = serve([], { host: '127.0.0.1' });
    let port = 0;
    const sub = first.subscribe((s) => (port = s.port));
    while (port === 0) await new Promise((r) => setTimeout(r, 5));
    const error = await new Promise<unknown>((resolve) => serve([], { host: '127.0.0.1', port }).subscribe({ error: resolve }));
    expect((error as NodeJS.ErrnoException).code).toBe('EADDRINUSE');
    sub.unsubscribe();
  });
});
