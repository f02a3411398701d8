import { describe, expect, it } from 'vitest';
import { filter, firstValueFrom } from 'rxjs';
import { AppsV1Api } from '@kubernetes/client-node';
import { Deployment, informerFactory } from '../../src/index.ts';
import { type ReconcileOutcome } from '../../src/controller/index.ts';
import { MY_APPLES, startApiServer } from 'rx-informer-emulator';
import { MyApples, appleScaler, type AppleClient } from '../../marbles/examples/appleScaler.ts';

async function until(check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('the README example controller against the emulator', () => {
  it('creates and scales a deployment per apple through the real client', async () => {
    const api = await startApiServer();
    api.registerCustomResource(MY_APPLES);
    try {
      api.create('myapples.stable.example.com', {
        apiVersion: 'stable.example.com/v1',
        kind: 'MyApple',
        metadata: { name: 'red', namespace: 'fruit' },
        spec: { color: 'red', quantity: 2 },
      });
      const apps = api.kubeConfig.makeApiClient(AppsV1Api);
      const client: AppleClient = {
        createDeployment: (namespace, body) => apps.createNamespacedDeployment({ namespace, body: body as never }),
        // client-node 2.x sends patches as JSON patch (application/json-patch+json) by default.
        scaleDeployment: (namespace, name, replicas) =>
          apps.patchNamespacedDeployment({ namespace, name, body: [{ op: 'replace', path: '/spec/replicas', value: replicas }] }),
      };
      const factory = informerFactory(api.kubeConfig);
      const apples = factory.informer(MyApples);
      const deployments = factory.informer(Deployment);
      const ctl = appleScaler(apples, deployments, client);
      const outcomes: ReconcileOutcome[] = [];
      const running = ctl.outcomes$.subscribe((o) => outcomes.push(o));
      try {
        await until(() => api.get('deployments.apps', 'fruit', 'apple-red') !== undefined);
        expect(api.get('deployments.apps', 'fruit', 'apple-red')).toMatchObject({
          spec: { replicas: 2 },
          metadata: { ownerReferences: [{ kind: 'MyApple', name: 'red', controller: true }] },
        });
        api.patch('myapples.stable.example.com', 'fruit', 'red', { spec: { quantity: 5 } });
        await until(
          () => (api.get('deployments.apps', 'fruit', 'apple-red') as { spec?: { replicas?: number } } | undefined)?.spec?.replicas === 5,
        );
        const store = await firstValueFrom(deployments.store$.pipe(filter((s) => s.get('fruit/apple-red')?.spec?.replicas === 5)));
        expect(store.size).toBe(1);
        expect(outcomes.every((o) => o.result !== 'error' && o.result !== 'terminal')).toBe(true);
      } finally {
        running.unsubscribe();
      }
    } finally {
      await api.close();
    }
  });
});
