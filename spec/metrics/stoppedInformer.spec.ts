/**
 * An informer whose streams err (its `state$` ends in an error: a bug in a stage, an informer written by hand) does not
 * take `serve()` down: audit39 found serve()'s subscriptions to `health$` and the metrics had no error callback, so
 * rxjs rethrew the error from a timer and the process died (exit 1). It is kept, stopped: `/readyz` answers 503 naming
 * it, "stopped: <why>", the other informers are served as before, and so is `/metrics`. Virtual time for the informers
 * (default options), real HTTP for the probes; rxjs' `config.onUnhandledError` catches what would have been rethrown.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NEVER, VirtualAction, VirtualTimeScheduler, concat, config, of, throwError, timer, mergeMap, type Subscription } from 'rxjs';
import { ConfigMap, informer, Pod, type KubeObject } from '../../src/index.ts';
import { serve } from '../../src/metrics/index.ts';
import { ServedInformers } from '../../src/cli/served.ts';
import { informerFromSource, type SourceEvent } from '../../src/pipeline.ts';
import { kubeObj, listPage } from '../../src/testing/index.ts';

const pod = kubeObj('p1', { namespace: 'a', kind: 'Pod', resourceVersion: '5' });

describe('serve(): an informer whose state$ errs (audit39)', () => {
  const unhandled: unknown[] = [];
  const subscriptions: Subscription[] = [];
  let previous: typeof config.onUnhandledError;
  beforeEach(() => {
    previous = config.onUnhandledError;
    config.onUnhandledError = (error) => unhandled.push(error);
  });
  afterEach(() => {
    for (const s of subscriptions.splice(0)) s.unsubscribe();
    config.onUnhandledError = previous;
    unhandled.length = 0;
  });

  /** Pods listed at once, then, 5 s on, a bug in the pipeline ends their state$. */
  function breaking(scheduler: VirtualTimeScheduler) {
    const source = concat(
      of<SourceEvent<KubeObject>>({ type: 'replace', items: [pod], resourceVersion: '5' }),
      timer(5_000, scheduler).pipe(mergeMap(() => throwError(() => new TypeError('a bug in a stage')))),
    );
    return informerFromSource<KubeObject>(Pod as never, source, { scheduler });
  }
  const configMaps = (scheduler: VirtualTimeScheduler) =>
    informer<KubeObject>({ list: () => of(listPage('7', [])), watch: () => NEVER }, ConfigMap as never, { scheduler });

  async function served(what: Parameters<typeof serve>[0], scheduler: VirtualTimeScheduler) {
    let url = '';
    subscriptions.push(
      serve(what, { host: '127.0.0.1', scheduler }).subscribe({ next: (s) => (url = s.url), error: (e) => unhandled.push(e) }),
    );
    while (url === '') await new Promise((r) => setTimeout(r, 5));
    const get = async (path: string) => {
      const res = await fetch(`${url}${path}`);
      return { status: res.status, body: await res.text() };
    };
    return get;
  }

  it('a list of informers: /readyz 503 "[-]pods: stopped: a bug in a stage", configmaps still ok, /metrics served; nothing rethrown', async () => {
    const scheduler = new VirtualTimeScheduler(VirtualAction, 0);
    const get = await served([breaking(scheduler), configMaps(scheduler)], scheduler);
    scheduler.maxFrames = 1_000;
    scheduler.flush();
    expect(await get('/readyz')).toEqual({ status: 200, body: '[+]pods ok\n[+]configmaps ok\nok\n' });
    scheduler.maxFrames = 10_000;
    scheduler.flush();
    await new Promise((r) => setTimeout(r, 10)); // rxjs reports an unhandled error from a timer
    expect(unhandled).toEqual([]);
    expect(await get('/readyz')).toEqual({ status: 503, body: '[-]pods: stopped: a bug in a stage\n[+]configmaps ok\nnot ready\n' });
    const metrics = await get('/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.body).toContain('informer_watching{name="pods"} 0');
    expect(metrics.body).toContain('informer_store_objects{name="pods"} 1');
    expect(metrics.body).toContain('reflector_lists_total{name="pods"} 1');
    expect(metrics.body).toContain('informer_synced{name="configmaps"} 1');
  });

  it("the CLI's served set (a factory's shape): its health$ errs with the informer; still served, and an informer attached later is too", async () => {
    const scheduler = new VirtualTimeScheduler(VirtualAction, 0);
    const set = new ServedInformers();
    set.attach(1, breaking(scheduler));
    const get = await served(set, scheduler);
    scheduler.maxFrames = 10_000;
    scheduler.flush();
    await new Promise((r) => setTimeout(r, 10));
    expect(unhandled).toEqual([]);
    expect(await get('/readyz')).toEqual({ status: 503, body: '[-]pods: stopped: a bug in a stage\nnot ready\n' });
    set.attach(2, configMaps(scheduler));
    expect(await get('/readyz')).toMatchObject({ status: 503, body: expect.stringContaining('[+]configmaps ok\n') });
    scheduler.flush();
    expect((await get('/metrics')).body).toContain('informer_synced{name="configmaps"} 1');
    set.detach(1);
    expect(await get('/readyz')).toEqual({ status: 200, body: '[+]configmaps ok\nok\n' });
  });
});
