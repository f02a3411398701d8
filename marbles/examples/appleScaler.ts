/**
 * A worked example, written as a user would: a controller that keeps one
 * Deployment per MyApple, scaled to the apple's `spec.quantity`.
 *
 * - reconcile reads the apple and its deployment from the informers' caches;
 * - creates the deployment when missing, scales it when the count is off;
 * - a failed write is thrown: the controller retries with per-key backoff;
 * - while the deployment is not ready yet, it looks again after 30 s.
 */
import { defer, from, map, type ObservableInput } from 'rxjs';
import { z } from 'zod';
import { customResource, Deployment, kubeObject, type Informer } from '../../src/index.ts';
import { controller, done, generationChanged, requeueAfter, type ReconcileResult } from '../../src/controller/index.ts';

export const MyApple = kubeObject({
  spec: z.looseObject({
    color: z.string(),
    size: z.enum(['small', 'medium', 'large']).optional(),
    quantity: z.number().int().min(1).default(1),
  }),
});
export type MyApple = z.infer<typeof MyApple>;

export const MyApples = customResource({
  group: 'stable.example.com',
  version: 'v1',
  plural: 'myapples',
  kind: 'MyApple',
  namespaced: true,
  schema: MyApple,
});

/** The writes the controller makes: plain functions, so tests can fake them. */
export interface AppleClient {
  createDeployment(namespace: string, deployment: unknown): ObservableInput<unknown>;
  scaleDeployment(namespace: string, name: string, replicas: number): ObservableInput<unknown>;
}

export const RECHECK_MS = 30_000;

export function deploymentFor(apple: MyApple): Record<string, unknown> {
  const name = `apple-${apple.metadata.name}`;
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name,
      namespace: apple.metadata.namespace,
      labels: { apple: apple.metadata.name },
      ownerReferences: [
        {
          apiVersion: 'stable.example.com/v1',
          kind: 'MyApple',
          name: apple.metadata.name,
          uid: apple.metadata.uid ?? '',
          controller: true,
        },
      ],
    },
    spec: {
      replicas: apple.spec.quantity,
      selector: { matchLabels: { apple: apple.metadata.name } },
      template: {
        metadata: { labels: { apple: apple.metadata.name } },
        spec: { containers: [{ name: 'apple', image: `apples/${apple.spec.color}` }] },
      },
    },
  };
}

export function appleScaler(
  apples: Informer<MyApple>,
  deployments: Informer<Deployment>,
  client: AppleClient,
  options: { scheduler?: import('rxjs').SchedulerLike } = {},
) {
  return controller({
    name: 'apple-scaler',
    for: apples,
    owns: [deployments],
    predicate: generationChanged(),
    ...(options.scheduler ? { scheduler: options.scheduler } : {}),
    reconcile: (_key, { object: apple, namespace, cacheOf, hold }) =>
      defer((): ObservableInput<ReconcileResult> => {
        if (!apple) return [done()]; // deleted: the deployment goes with it (owner reference)
        const name = `apple-${apple.metadata.name}`;
        const deployment = cacheOf(deployments).get(`${namespace}/${name}`);
        if (!deployment)
          return from(hold(client.createDeployment(namespace, deploymentFor(apple)))).pipe(map(() => requeueAfter(RECHECK_MS)));
        if (deployment.spec?.replicas !== apple.spec.quantity) {
          // held: the request runs on if leadership flips meanwhile, and the key waits for it (docs/controllers.md)
          return from(hold(client.scaleDeployment(namespace, name, apple.spec.quantity))).pipe(map(() => requeueAfter(RECHECK_MS)));
        }
        const ready = deployment.status?.readyReplicas ?? 0;
        return [ready >= apple.spec.quantity ? done() : requeueAfter(RECHECK_MS)];
      }),
  });
}
