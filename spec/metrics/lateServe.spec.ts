/**
 * The counters and the sync time of `/metrics` are the informer's own, from its start: a `serve()` started after the
 * informers synced (start them, await the sync, then serve, as an application often does) reads every list and event,
 * and the time the first list took. audit39: it read lists 0, events 0 and sync 0 s (informerMetrics$ counted from its
 * own subscription, and skipped the replayed state), beside store objects 3, synced 1. Virtual time, default options.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { NEVER, Subject, VirtualAction, VirtualTimeScheduler, firstValueFrom, map, take, type Subscription } from 'rxjs';
import { informer, Pod, type KubeObject } from '../../src/index.ts';
import { informerMetrics$, serve, type InformerMetrics } from '../../src/metrics/index.ts';
import { kubeObj, listPage } from '../../src/testing/index.ts';
import { parseExposition } from './exposition.ts';

/** Pods whose list (3 objects) answers 5 s after it is asked, then a watch that brings one more pod at 8 s. */
function slowPods(scheduler: VirtualTimeScheduler) {
  const answer = new Subject<void>();
  const events = new Subject<never>();
  const pods = informer<KubeObject>(
    {
      list: () => {
        scheduler.schedule(() => answer.next(), 5_000);
        return answer.pipe(
          take(1),
          map(() =>
            listPage(
              '5',
              [1, 2, 3].map((n) => kubeObj(`p${n}`, { namespace: 'a', kind: 'Pod', resourceVersion: '5' })),
            ),
          ),
        );
      },
      watch: () => {
        scheduler.schedule(
          () => events.next({ type: 'ADDED', object: kubeObj('p4', { namespace: 'a', kind: 'Pod', resourceVersion: '6' }) } as never),
          3_000,
        );
        return events.asObservable();
      },
    },
    Pod as never,
    { scheduler },
  );
  return pods;
}

describe('metrics of an informer served after it started (audit39)', () => {
  const subscriptions: Subscription[] = [];
  afterEach(() => {
    for (const s of subscriptions.splice(0)) s.unsubscribe();
  });

  it('informerMetrics$ subscribed at 9 s: lists 1, watches 1, added 4, sync 5 s (the informer started at 0)', () => {
    const scheduler = new VirtualTimeScheduler(VirtualAction, 9_000);
    const pods = slowPods(scheduler);
    subscriptions.push(pods.events$.subscribe()); // the application's own use, from 0
    scheduler.flush();
    let seen: InformerMetrics | undefined;
    subscriptions.push(informerMetrics$(pods, scheduler).subscribe((m) => (seen = m)));
    expect(seen).toMatchObject({
      listsTotal: 1,
      watchesTotal: 1,
      eventsTotal: { added: 4, updated: 0, deleted: 0 },
      storeObjects: 4,
      syncDurationSeconds: 5,
    });
  });

  it('serve() started after the sync: reflector_lists_total 1, informer_events_total added 4, informer_sync_duration_seconds 5', async () => {
    const scheduler = new VirtualTimeScheduler(VirtualAction, 9_000);
    const pods = slowPods(scheduler);
    subscriptions.push(pods.events$.subscribe());
    scheduler.flush();
    expect(await firstValueFrom(pods.synced$)).toBe(true);
    let url = '';
    subscriptions.push(serve([pods], { host: '127.0.0.1', scheduler }).subscribe((s) => (url = s.url)));
    while (url === '') await new Promise((r) => setTimeout(r, 5));
    const families = parseExposition(await (await fetch(`${url}/metrics`)).text());
    const value = (name: string, labels: Record<string, string> = {}) =>
      families
        .find((f) => f.name === name)
        ?.samples.find((s) => Object.entries({ name: 'pods', ...labels }).every(([k, v]) => s.labels[k] === v))?.value;
    expect({
      objects: value('informer_store_objects'),
      lists: value('reflector_lists_total'),
      watches: value('reflector_watches_total'),
      added: value('informer_events_total', { type: 'added' }),
      syncSeconds: value('informer_sync_duration_seconds'),
    }).toEqual({ objects: 4, lists: 1, watches: 1, added: 4, syncSeconds: 5 });
  });

  it('a restart (every subscriber gone, then one again) adds to the counts; the sync is timed from the new start', () => {
    const scheduler = new VirtualTimeScheduler(VirtualAction, 9_000);
    const pods = slowPods(scheduler);
    const first = pods.events$.subscribe();
    scheduler.flush();
    first.unsubscribe();
    scheduler.maxFrames = 30_000;
    scheduler.schedule(() => subscriptions.push(pods.events$.subscribe()), 1_000); // at 10 s: listed again, synced at 15 s
    scheduler.flush();
    let seen: InformerMetrics | undefined;
    subscriptions.push(informerMetrics$(pods, scheduler).subscribe((m) => (seen = m)));
    expect(seen).toMatchObject({ listsTotal: 2, watchesTotal: 2, eventsTotal: { added: 8 }, syncDurationSeconds: 5 });
  });
});
