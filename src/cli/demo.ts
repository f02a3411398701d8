import type { KubeConfig } from '@kubernetes/client-node';
import { MY_APPLES, startApiServer, startChurn } from '../../packages/emulator/src/index.ts';

export interface DemoOptions {
  readonly log: (line: string) => void;
  readonly churnIntervalMs?: number;
  /** A fault every this many writes (default 12: about every 6 s at the default churn interval). */
  readonly faultEvery?: number;
}

/**
 * `npm start` with no kubeconfig: the built-in API-server emulator, seeded and
 * churning (pods, deployments and a custom resource across three namespaces),
 * with an occasional fault injected into the open watches, so each fault
 * (`! pods: …`) and the resumed stream show within seconds. Bookmarks and
 * timeouts keep kube-apiserver's timing.
 */
export async function startDemo(options: DemoOptions): Promise<{ kubeConfig: KubeConfig; close: () => Promise<void> }> {
  const api = await startApiServer();
  api.registerCustomResource(MY_APPLES);
  options.log(`rx-informer demo: API-server emulator on ${api.url} with live churn and injected faults`);
  options.log('(point it at a real cluster with: npm start -- --kubeconfig ~/.kube/config)');
  const churn = startChurn(api, {
    intervalMs: options.churnIntervalMs ?? 500,
    seed: 40,
    faultEvery: options.faultEvery ?? 12,
    onFault: (description) => options.log(`~ emulator: injecting ${description}`),
  });
  return {
    kubeConfig: api.kubeConfig,
    close: async () => {
      churn.stop();
      await api.close();
    },
  };
}
