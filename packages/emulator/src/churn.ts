import { asyncScheduler, interval, type SchedulerLike, type Subscription } from 'rxjs';
import type { ApiServer } from './server.ts';
import type { FaultHandle, FaultMatch, FaultRule } from './faults.ts';

/** The custom resource the churn generator (and the demo) uses. */
export const MY_APPLES = {
  group: 'stable.example.com',
  version: 'v1',
  plural: 'myapples',
  singular: 'myapple',
  kind: 'MyApple',
  shortNames: ['ma'],
  namespaced: true,
  schema: {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        required: ['color'],
        properties: {
          color: { type: 'string' },
          size: { type: 'string', enum: ['small', 'medium', 'large'] },
          quantity: { type: 'integer', minimum: 1 },
        },
      },
    },
  },
} as const;

export interface ChurnOptions {
  /** Time between writes (ms). Default 400. */
  readonly intervalMs?: number;
  readonly namespaces?: readonly string[];
  /**
   * Inject a random fault every this many writes; 0 disables. Default 25. Faults hit the watches open
   * at that moment (pods, deployments or myapples), so the client sees them at once.
   */
  readonly faultEvery?: number;
  /** Told about each injected fault, and about writes that failed. */
  readonly onFault?: (description: string) => void;
  readonly random?: () => number;
  readonly scheduler?: SchedulerLike;
  /** Objects created at once, before the churn starts. Default 0. */
  readonly seed?: number;
}

const PODS = { group: '', version: 'v1', resource: 'pods' } as const;
const DEPLOYMENTS = { group: 'apps', version: 'v1', resource: 'deployments' } as const;
const APPLES = { group: MY_APPLES.group, version: MY_APPLES.version, resource: MY_APPLES.plural } as const;

/** The resources whose watches get the faults: the churned ones, so the resumed stream shows events. */
const FAULT_TARGETS: readonly { readonly name: string; readonly match: FaultMatch }[] = [
  { name: 'pods', match: { resource: 'pods', group: '' } },
  { name: 'deployments.apps', match: { resource: 'deployments', group: 'apps' } },
  { name: 'myapples.stable.example.com', match: { resource: MY_APPLES.plural, group: MY_APPLES.group } },
];

/**
 * The faults the churn generator injects, with a description each: a watch fault on the open watches
 * (`live`), sometimes with a rule for the request that recovers from it.
 */
const FAULTS: readonly (readonly [string, (match: FaultMatch) => readonly FaultRule[]])[] = [
  ['watch dropped mid-stream', (match) => [{ live: true, match, fault: { type: 'dropWatch' } }]],
  ['watch answered 410 Expired (relist)', (match) => [{ live: true, match, fault: { type: 'expireWatch' } }]],
  ['malformed line in the watch', (match) => [{ live: true, match, fault: { type: 'malformedLine' } }]],
  [
    'watch dropped, and the reconnect answered 503',
    (match) => [
      { match: { ...match, watch: true }, fault: { type: 'status', code: 503 } },
      { live: true, match, fault: { type: 'dropWatch' } },
    ],
  ],
  [
    'watch dropped, and the reconnect answered 429 with Retry-After: 1',
    (match) => [
      { match: { ...match, watch: true }, fault: { type: 'status', code: 429, retryAfterSeconds: 1 } },
      { live: true, match, fault: { type: 'dropWatch' } },
    ],
  ],
  [
    'watch expired, and the relist reached a lagging API server (504 Too large resource version)',
    (match) => [
      { match, fault: { type: 'tooLargeResourceVersion' } },
      { live: true, match, fault: { type: 'expireWatch' } },
    ],
  ],
];

/**
 * Writes to an emulator at a steady rate: pods, deployments and MyApples are
 * created, updated and deleted across a few namespaces, and every so often a
 * fault is injected into the watches. For demos, soak runs and tests.
 */
export function startChurn(api: ApiServer, options: ChurnOptions = {}): { stop(): void; readonly writes: number } {
  const random = options.random ?? Math.random;
  const namespaces = options.namespaces ?? ['default', 'shop', 'payments'];
  const faultEvery = options.faultEvery ?? 25;
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  let writes = 0;
  let serial = 0;
  // Rules still waiting from the last injection: removed before the next, so none fires much later.
  let waiting: FaultHandle[] = [];
  const live: { gvr: typeof PODS | typeof DEPLOYMENTS | typeof APPLES; namespace: string; name: string }[] = [];

  const create = () => {
    const namespace = pick(namespaces);
    const kind = pick(['pod', 'pod', 'deployment', 'apple'] as const);
    const name = `${kind}-${++serial}`;
    if (kind === 'pod') {
      api.create(PODS, {
        metadata: { name, namespace, labels: { app: pick(['web', 'api', 'worker']) } },
        spec: { containers: [{ name: 'main', image: `nginx:1.${25 + Math.floor(random() * 3)}` }] },
        status: { phase: 'Pending' },
      });
      live.push({ gvr: PODS, namespace, name });
    } else if (kind === 'deployment') {
      api.create(DEPLOYMENTS, {
        metadata: { name, namespace, labels: { app: name } },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: name } },
          template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image: 'nginx' }] } },
        },
      });
      live.push({ gvr: DEPLOYMENTS, namespace, name });
    } else {
      api.create(APPLES, {
        apiVersion: 'stable.example.com/v1',
        kind: 'MyApple',
        metadata: { name, namespace },
        spec: { color: pick(['red', 'green']), size: 'small', quantity: 1 },
      });
      live.push({ gvr: APPLES, namespace, name });
    }
  };

  const update = () => {
    const target = pick(live);
    if (target.gvr === PODS) {
      api.patch(target.gvr, target.namespace, target.name, {
        status: { phase: pick(['Pending', 'Running', 'Running', 'Succeeded']) },
        metadata: { labels: { rev: String(++serial) } },
      });
    } else if (target.gvr === DEPLOYMENTS) {
      api.patch(target.gvr, target.namespace, target.name, { spec: { replicas: 1 + Math.floor(random() * 5) } });
    } else {
      api.patch(target.gvr, target.namespace, target.name, {
        spec: { quantity: 1 + Math.floor(random() * 20), size: pick(['small', 'medium', 'large']) },
      });
    }
  };

  const remove = () => {
    const index = Math.floor(random() * live.length);
    const [target] = live.splice(index, 1);
    if (target) api.delete(target.gvr, target.namespace, target.name);
  };

  const step = () => {
    const roll = random();
    try {
      if (live.length < 6 || roll < 0.3) create();
      else if (roll < 0.8 || live.length < 10) update();
      else remove();
      writes++;
    } catch (error) {
      options.onFault?.(`churn write failed: ${(error as Error).message}`);
    }
    if (faultEvery > 0 && writes % faultEvery === 0) {
      for (const h of waiting) h.remove();
      const [description, rules] = pick(FAULTS);
      const target = pick(FAULT_TARGETS);
      // The recovery rules go first: the live fault may make the client reconnect at once.
      waiting = rules(target.match).map((rule) => api.faults.add(rule));
      options.onFault?.(`${target.name}: ${description}`);
    }
  };

  for (let i = 0; i < (options.seed ?? 0); i++) create();
  const subscription: Subscription = interval(options.intervalMs ?? 400, options.scheduler ?? asyncScheduler).subscribe(step);
  return {
    stop: () => {
      subscription.unsubscribe();
      for (const h of waiting) h.remove();
      waiting = [];
    },
    get writes() {
      return writes;
    },
  };
}
