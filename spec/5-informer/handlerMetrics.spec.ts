/**
 * `informer.handlerMetrics()` is a member of every informer (docs/api.md lists it so): callable without a check,
 * which `npm run typecheck` proves (TS2722 when it was optional), and it reads the `on()` handlers' backlog now.
 */
import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import type { SourceEvent } from '../../src/2-source/sourceEvent.ts';
import type { KubeObject } from '../../src/0-model/objects.ts';
import type { Informer } from '../../src/index.ts';
import type { HandlerMetrics } from '../../src/pipeline.ts';
import { HandlerMetricsRecorder } from '../../src/5-informer/handleEvents.ts';
import { fakeInformer, fakeResource, kubeObj, listed } from '../../src/testing/index.ts';

describe('handlerMetrics()', () => {
  it('is a member of every informer, and counts the on() handlers work: waiting, then done', async () => {
    const events$ = new Subject<SourceEvent<KubeObject>>();
    const informer: Informer<KubeObject> = fakeInformer(fakeResource(), events$);
    const metrics: () => HandlerMetrics = informer.handlerMetrics;
    expect(informer.handlerMetrics()).toEqual({ depth: 0, durationSeconds: { count: 0, sumSeconds: 0 } });
    const releases: (() => void)[] = [];
    const subscription = informer.on(() => new Promise<void>((resolve) => releases.push(resolve)));
    events$.next(listed('1', kubeObj('a', { namespace: 'ns' }), kubeObj('b', { namespace: 'ns' })));
    expect(metrics().depth).toBe(1); // b waits while the handler runs a
    while (releases.length > 0) {
      releases.shift()!();
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(informer.handlerMetrics()).toMatchObject({ depth: 0, durationSeconds: { count: 2 } });
    subscription.unsubscribe();
  });

  it('a duration on a clock that steps back (a scheduler given) counts as 0 s, never negative', () => {
    let now = 10_000;
    const recorder = new HandlerMetricsRecorder(() => now);
    now = 4_000; // the clock stepped back while the handler ran
    recorder.observe(10_000);
    now = 6_500;
    recorder.observe(4_000);
    expect(recorder.snapshot().durationSeconds).toEqual({ count: 2, sumSeconds: 2.5 });
  });

  it('depth is back to 0 once a handler with a backlog is unsubscribed (its queued events are dropped)', () => {
    const events$ = new Subject<SourceEvent<KubeObject>>();
    const informer = fakeInformer(fakeResource(), events$);
    const subscription = informer.on(() => new Promise<void>(() => {})); // stuck on its first event
    events$.next(listed('1', kubeObj('a', { namespace: 'ns' }), kubeObj('b', { namespace: 'ns' }), kubeObj('c', { namespace: 'ns' })));
    expect(informer.handlerMetrics().depth).toBe(2);
    subscription.unsubscribe();
    expect(informer.handlerMetrics().depth).toBe(0);
  });
});
