/**
 * Contender (c): `@kubernetes/client-node` 2.x `makeInformer`, listing with the
 * generated `CoreV1Api.listPodForAllNamespaces` (unpaged, typed, as its
 * docs show), one `add`/`update`/`delete` handler each. With `informers: 100`,
 * 100 independent informers (100 lists, 100 watch connections, 100 caches).
 */
import { CoreV1Api, makeInformer, type V1Pod } from '@kubernetes/client-node';
import { benchKubeConfig } from './kubeconfig.ts';
import type { Probe, RunConfig } from './probe.ts';

export async function runClientNode(config: RunConfig, probe: Probe, options: { informers: number }): Promise<void> {
  const kc = benchKubeConfig(config.port);
  const api = kc.makeApiClient(CoreV1Api);
  const { pods: n, events: target } = config;
  let checksum = 0;
  let syncedInformers = 0;
  let watchedInformers = 0;
  const informers: ReturnType<typeof makeInformer<V1Pod>>[] = [];
  for (let k = 0; k < options.informers; k++) {
    let lists = 0;
    let initial = 0;
    let live = 0;
    const listFn = () => {
      const listed = api.listPodForAllNamespaces();
      if (++lists > 1 && options.informers === 1) {
        // The relist response is in hand and the old cache still is: the high-water mark.
        void listed.then(() => {
          probe.relistHighWater();
          // The informer applies the list in the continuation after ours.
          setImmediate(() => probe.relistDone(informer.list().length));
        });
      }
      return listed;
    };
    const informer = makeInformer<V1Pod>(kc, '/api/v1/pods', listFn);
    const onEvent = (pod: V1Pod) => {
      checksum += pod.metadata?.name?.length ?? 0;
      if (initial < n) {
        if (++initial === n && ++syncedInformers === options.informers) probe.synced();
        return;
      }
      if (++live === target && ++watchedInformers === options.informers) probe.watched(live);
    };
    informer.on('add', onEvent);
    informer.on('update', onEvent);
    informer.on('delete', onEvent);
    informer.on('error', (error: unknown) => probe.fail(error));
    informers.push(informer);
  }
  probe.begin(() => Math.min(...informers.map((i) => i.list().length)));
  await Promise.all(informers.map((i) => i.start()));
  probe.checksum = () => checksum;
}
