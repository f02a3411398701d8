import { describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { NEVER, Subject, concat, type Observable } from 'rxjs';
import { InformerError } from '../../src/index.ts';
import { informerFromSource, type SourceEvent } from '../../src/pipeline.ts';
import { type ControllerMetrics } from '../../src/controller/index.ts';
import { createRateLimitingQueue } from '../../src/workqueue/index.ts';
import {
  controllerFamilies,
  informerFamilies,
  informerMetrics$,
  promClientMetrics,
  toPrometheusText,
  workqueueFamilies,
} from '../../src/metrics/index.ts';
import { fakeResource, kubeObj } from '../../src/testing/index.ts';

const ctl: ControllerMetrics = {
  name: 'apples',
  reconcileTotal: { success: 3, error: 1, requeue: 0, requeue_after: 2 },
  reconcileErrorsTotal: 1,
  terminalReconcileErrorsTotal: 0,
  reconcileTimeSeconds: { count: 6, sumSeconds: 0.5 },
  activeWorkers: 1,
  maxConcurrentReconciles: 2,
};

describe('metrics', () => {
  it('counts what an informer did: lists, watches, events by type, errors by reason, size, sync time', () => {
    const source = new Subject<SourceEvent<ReturnType<typeof kubeObj>>>();
    const informer = informerFromSource(fakeResource(), concat(source, NEVER));
    const seen: (ReturnType<typeof informerMetrics$> extends Observable<infer M> ? M : never)[] = [];
    const sub = informerMetrics$(informer).subscribe((m) => seen.push(m));
    source.next({ type: 'replace', items: [kubeObj('a'), kubeObj('b')], resourceVersion: '5' });
    source.next({ type: 'watch', resourceVersion: '5' });
    source.next({ type: 'modified', object: kubeObj('a', { resourceVersion: '6' }), resourceVersion: '6' });
    source.next({ type: 'error', error: new InformerError('VeryShortWatch', 'short') });
    source.next({ type: 'watch', resourceVersion: '6' });
    source.next({ type: 'bookmark', resourceVersion: '9' });
    const last = seen[seen.length - 1]!;
    expect(last).toMatchObject({
      name: 'widgets.example.com',
      eventsTotal: { added: 2, updated: 1, deleted: 0 },
      listsTotal: 1,
      watchesTotal: 2,
      shortWatchesTotal: 1,
      errorsTotal: { VeryShortWatch: 1 },
      storeObjects: 2,
      lastResourceVersion: '9',
    });
    expect(last.syncDurationSeconds).toBeGreaterThanOrEqual(0);
    sub.unsubscribe();
  });

  it('writes the Prometheus text format under controller-runtime and client-go names', () => {
    const queue = createRateLimitingQueue<string>({ name: 'apples' });
    queue.add('a');
    queue.add('b');
    const text = toPrometheusText([...workqueueFamilies([queue.metrics()]), ...controllerFamilies([ctl])]);
    expect(text).toContain('# TYPE workqueue_depth gauge\nworkqueue_depth{name="apples",priority="0"} 2\n');
    expect(text).toContain('workqueue_adds_total{name="apples"} 2');
    expect(text).toContain('workqueue_queue_duration_seconds_count{name="apples"} 0');
    expect(text).toContain('controller_runtime_reconcile_total{controller="apples",result="requeue_after"} 2');
    expect(text).toContain('controller_runtime_reconcile_time_seconds_sum{controller="apples"} 0.5');
    queue.shutDown();
  });

  it('joins a prom-client registry, read at scrape time', async () => {
    let success = 3;
    const registry = new Registry();
    const collect = () => [
      ...controllerFamilies([{ ...ctl, reconcileTotal: { ...ctl.reconcileTotal, success } }]),
      ...informerFamilies([]),
    ];
    for (const metric of promClientMetrics(collect)) registry.registerMetric(metric as never);
    expect(await registry.metrics()).toContain('controller_runtime_reconcile_total{controller="apples",result="success"} 3');
    success = 7;
    const text = await registry.metrics();
    expect(text).toContain('controller_runtime_reconcile_total{controller="apples",result="success"} 7');
    expect(text).toContain('controller_runtime_reconcile_time_seconds_count{controller="apples"} 6');
    expect(text).toContain('# TYPE controller_runtime_reconcile_total counter');
  });
});
