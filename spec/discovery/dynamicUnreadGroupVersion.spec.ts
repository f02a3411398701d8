/**
 * A group version discovery cannot read (a 503 on its document) while its resources' informers run: they go on,
 * whatever the rest of discovery says meanwhile. Discoveries are driven by the test: the factory's scheduler is a
 * VirtualTimeScheduler (the debounce after a CRD change, and the retry after a fault, run when it is flushed), and
 * each check waits for the discovery it is about to be emitted (discovery$'s subscribers hear it in one synchronous
 * step, the watches' included), never for a wall-clock "nothing happened".
 */
import { VirtualTimeScheduler, filter, firstValueFrom, skip, type Observable, type Subscription } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { dynamicInformerFactory, type DynamicEvent, type DynamicInformerFactory } from '../../src/discovery/index.ts';
import type { Discovery } from '../../src/discovery/index.ts';
import type { KubeObject } from '../../src/index.ts';
import { resourceName } from '../../src/pipeline.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { until } from '../support/until.ts';

let api: ApiServer | undefined;
const subscriptions: Subscription[] = [];
afterEach(async () => {
  for (const s of subscriptions.splice(0)) s.unsubscribe();
  await api?.close();
  api = undefined;
});

const V1 = { group: 'stable.example.com', version: 'v1', plural: 'myapples', kind: 'MyApple' };
const V1BETA1 = { ...V1, version: 'v1beta1' };
const Pears = { group: 'other.example.com', version: 'v1', plural: 'pears', kind: 'Pear' };

/** Every lifecycle event of a watch, as `started myapples.stable.example.com v1`, `unresolved myapples: …`. */
function follow(events$: Observable<DynamicEvent<KubeObject>>): string[] {
  const lines: string[] = [];
  subscriptions.push(
    events$.subscribe((e) => {
      lines.push(
        e.type === 'unresolved'
          ? `unresolved ${e.name}: ${e.error.message}`
          : `${e.type} ${resourceName(e.resource)} ${e.resource.version}`,
      );
      if (e.type === 'started') subscriptions.push(e.informer.events$.subscribe());
    }),
  );
  return lines;
}

/**
 * Makes the factory discover again (CRD `crd` installed; or the retry pending after a fault, whichever the flush runs
 * first) and resolves with the first discovery that serves it, once the watches have heard it (a round in flight when
 * it was installed finishes first, and may not).
 */
async function rediscover(
  dynamic: DynamicInformerFactory,
  clock: VirtualTimeScheduler,
  crd: { readonly group: string; readonly version: string; readonly plural: string; readonly kind: string },
): Promise<Discovery> {
  const next = firstValueFrom(dynamic.discovery$.pipe(filter((d) => d.all.some((r) => r.group === crd.group && r.plural === crd.plural))));
  api!.registerCustomResource(crd);
  await until(() => clock.actions.length > 0, 'the debounce after the CRD change');
  clock.flush();
  return next;
}

describe('dynamicInformerFactory: a group version discovery cannot read', () => {
  for (const selection of ['all', ['myapples']] as const) {
    it(`a 503 on the preferred version keeps its running informer, and does not start the other version (${JSON.stringify(selection)})`, async () => {
      api = await startApiServer({ resources: [V1, V1BETA1] });
      api.create('myapples.stable.example.com', { metadata: { name: 'a', namespace: 'shop' } });
      const clock = new VirtualTimeScheduler();
      const dynamic = dynamicInformerFactory(api.kubeConfig, { scheduler: clock });
      subscriptions.push(dynamic.errors$.subscribe());
      const seen = follow(dynamic.watch(selection as never));
      const apples = () => seen.filter((line) => line.includes('myapples'));
      await until(() => apples().length === 1, 'myapples to start');
      expect(apples()).toEqual(['started myapples.stable.example.com v1']);

      // The preferred version's document fails (an aggregated group's 503, a flaky webhook); another CRD makes discovery run again.
      const fault = api.faults.add({
        match: { path: '/apis/stable.example.com/v1' },
        fault: { type: 'status', code: 503 },
        times: Infinity,
      });
      const during = await rediscover(dynamic, clock, Pears);
      expect(during.failures.map((f) => f.groupVersion)).toEqual(['stable.example.com/v1']);
      expect(during.resources.find((r) => r.plural === 'myapples')?.version).toBe('v1beta1');
      expect(apples()).toEqual(['started myapples.stable.example.com v1']);

      // Read again: still the one informer.
      fault.remove();
      const after = await rediscover(dynamic, clock, { ...Pears, plural: 'plums', kind: 'Plum' });
      expect(after.failures).toEqual([]);
      expect(apples()).toEqual(['started myapples.stable.example.com v1']);
    });
  }

  it('by name: a running resource whose group version 503s is not reported unresolved; a name not running is GroupDiscoveryFailed, not Unknown', async () => {
    api = await startApiServer({ resources: [V1] });
    const clock = new VirtualTimeScheduler();
    const dynamic = dynamicInformerFactory(api.kubeConfig, { scheduler: clock });
    subscriptions.push(dynamic.errors$.subscribe());
    const running = follow(dynamic.watch(['myapples']));
    await until(() => running.length === 1, 'myapples to start');

    const fault = api.faults.add({ match: { path: '/apis/stable.example.com/v1' }, fault: { type: 'status', code: 503 }, times: Infinity });
    const during = await rediscover(dynamic, clock, Pears);
    expect(during.failures.map((f) => f.groupVersion)).toEqual(['stable.example.com/v1']);
    // Its informer runs on, and the watch says nothing to the contrary.
    expect(running).toEqual(['started myapples.stable.example.com v1']);

    // A watch that starts now: the names the failed group version may serve are not "unknown"; the others are.
    const errors: DynamicEvent<KubeObject>[] = [];
    subscriptions.push(
      dynamic.watch(['myapples', 'ma.stable.example.com', 'pears', 'nosuch.other.example.com']).subscribe((e) => errors.push(e)),
    );
    await until(() => errors.length === 4, 'the new watch to hear the discovery');
    const unresolved = errors.flatMap((e) => (e.type === 'unresolved' ? [[e.name, e.error.reason, e.error.message]] : []));
    expect(unresolved).toEqual([
      [
        'myapples',
        'GroupDiscoveryFailed',
        '"myapples" is not among the resources discovery read; it could not read stable.example.com/v1 (ServerError), which may serve it',
      ],
      ['ma.stable.example.com', 'GroupDiscoveryFailed', expect.stringContaining('stable.example.com/v1 (ServerError)')],
      ['nosuch.other.example.com', 'Unknown', 'the server doesn\'t have a resource type "nosuch.other.example.com"'],
    ]);
    expect(errors.find((e) => e.type === 'unresolved')).toMatchObject({ error: { name: 'GroupDiscoveryFailedError' } });

    // Read again (the retry; or a round the CRD watch asked for during the last one, which then runs at once and
    // takes the retry's place): the new watch starts it, the first one still runs its one informer.
    fault.remove();
    const started = () => errors.some((e) => e.type === 'started' && e.resource.plural === 'myapples');
    await until(() => clock.actions.length > 0 || started(), 'the retry');
    clock.flush();
    await until(started, 'myapples to start in the new watch');
    expect(running).toEqual(['started myapples.stable.example.com v1']);
  });
});
