/**
 * Deterministic, realistic pods for the benchmark workload (about 4.8 KB of
 * JSON each): labels, annotations, an ownerReference, two managedFields
 * entries, two containers with env, ports, resources and volume mounts, three
 * volumes, tolerations, and a status with conditions and containerStatuses.
 *
 * A pod is a function of a small state record, so the workload server keeps
 * only that record per live pod and regenerates the JSON when it needs it.
 */

/** What varies between pods and between versions of one pod. */
export interface PodState {
  /** Creation order; names, uids, namespaces and images derive from it. */
  readonly index: number;
  resourceVersion: number;
  /** Bumped by every MODIFIED event (restart counts, condition times). */
  revision: number;
}

export const NAMESPACES = 100;

import { seededRandom as prng } from '../../src/util/seededRandom.ts';
export { prng };

function hex(n: number, width: number): string {
  return (n >>> 0).toString(16).padStart(width, '0').slice(-width);
}

function mix(n: number): number {
  let x = Math.imul(n ^ 0x9e3779b9, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

const ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
function suffix(n: number, length: number): string {
  let out = '';
  let x = mix(n);
  for (let i = 0; i < length; i++) {
    out += ALPHABET[x % ALPHABET.length];
    x = Math.floor(x / ALPHABET.length) || mix(x + i + 1);
  }
  return out;
}

function uid(n: number, salt: number): string {
  const a = mix(n * 4 + salt);
  const b = mix(a + 1);
  const c = mix(b + 2);
  const d = mix(c + 3);
  return `${hex(a, 8)}-${hex(b, 4)}-4${hex(b >>> 16, 3)}-a${hex(c, 3)}-${hex(c >>> 12, 4)}${hex(d, 8)}`;
}

const BASE_TIME = Date.UTC(2025, 0, 6, 9, 0, 0);
function time(seconds: number): string {
  return new Date(BASE_TIME + seconds * 1000).toISOString().replace('.000Z', 'Z');
}

const APPS = ['checkout', 'payments', 'catalog', 'search', 'frontend', 'inventory', 'shipping', 'accounts', 'ledger', 'notifier'];

export function podNamespace(index: number): string {
  return `team-${String(index % NAMESPACES).padStart(3, '0')}`;
}

export function podName(index: number): string {
  const app = APPS[index % APPS.length]!;
  return `${app}-${suffix(index % 997, 10)}-${suffix(index, 5)}-${index}`;
}

/** The cache key an informer uses (`namespace/name`). */
export function podKey(index: number): string {
  return `${podNamespace(index)}/${podName(index)}`;
}

/** One pod, as the API server would send it. */
export function makePod(state: PodState): Record<string, unknown> {
  const i = state.index;
  const r = state.revision;
  const app = APPS[i % APPS.length]!;
  const rsHash = suffix(i % 997, 10);
  const rsName = `${app}-${rsHash}`;
  const namespace = podNamespace(i);
  const name = podName(i);
  const created = time(i % 86_400);
  const started = time((i % 86_400) + 3);
  const changed = time((i % 86_400) + 60 + r * 7);
  const ip = `10.${(i >>> 16) & 255}.${(i >>> 8) & 255}.${i & 255}`;
  const nodeName = `node-pool-a-${suffix(i % 61, 4)}-${i % 61}`;
  const hostIP = `192.168.${(i % 61) >>> 8}.${(i % 61) + 10}`;
  const version = `1.${i % 7}.${i % 13}`;
  const image = `registry.example.com/shop/${app}:${version}`;
  const restarts = r % 5;
  return {
    kind: 'Pod',
    apiVersion: 'v1',
    metadata: {
      name,
      generateName: `${rsName}-`,
      namespace,
      uid: uid(i, 1),
      resourceVersion: String(state.resourceVersion),
      creationTimestamp: created,
      labels: {
        'app.kubernetes.io/name': app,
        'app.kubernetes.io/instance': `${app}-prod`,
        'app.kubernetes.io/version': version,
        'app.kubernetes.io/part-of': 'shop',
        'pod-template-hash': rsHash,
      },
      annotations: {
        'prometheus.io/scrape': 'true',
        'prometheus.io/port': '9090',
        'cni.projectcalico.org/podIP': `${ip}/32`,
        'bench.rx-informer.dev/revision': String(r),
      },
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: rsName, uid: uid(i % 997, 2), controller: true, blockOwnerDeletion: true },
      ],
      managedFields: [
        {
          manager: 'kube-controller-manager',
          operation: 'Update',
          apiVersion: 'v1',
          time: created,
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': {
              'f:generateName': {},
              'f:labels': {
                '.': {},
                'f:app.kubernetes.io/instance': {},
                'f:app.kubernetes.io/name': {},
                'f:app.kubernetes.io/part-of': {},
                'f:app.kubernetes.io/version': {},
                'f:pod-template-hash': {},
              },
              'f:ownerReferences': { '.': {}, [`k:{"uid":"${uid(i % 997, 2)}"}`]: {} },
            },
            'f:spec': {
              'f:containers': {
                'k:{"name":"app"}': {
                  '.': {},
                  'f:env': { '.': {}, 'k:{"name":"LOG_LEVEL"}': { '.': {}, 'f:name': {}, 'f:value': {} } },
                  'f:image': {},
                  'f:imagePullPolicy': {},
                  'f:name': {},
                  'f:ports': {},
                  'f:resources': {},
                },
              },
              'f:dnsPolicy': {},
              'f:restartPolicy': {},
              'f:volumes': { '.': {}, 'k:{"name":"config"}': { '.': {}, 'f:configMap': {}, 'f:name': {} } },
            },
          },
        },
        {
          manager: 'kubelet',
          operation: 'Update',
          apiVersion: 'v1',
          time: changed,
          fieldsType: 'FieldsV1',
          subresource: 'status',
          fieldsV1: {
            'f:status': {
              'f:conditions': {
                'k:{"type":"ContainersReady"}': { '.': {}, 'f:lastTransitionTime': {}, 'f:status': {}, 'f:type': {} },
                'k:{"type":"Ready"}': { '.': {}, 'f:lastTransitionTime': {}, 'f:status': {}, 'f:type': {} },
              },
              'f:containerStatuses': {},
              'f:hostIP': {},
              'f:phase': {},
              'f:podIP': {},
              'f:podIPs': { '.': {}, [`k:{"ip":"${ip}"}`]: { '.': {}, 'f:ip': {} } },
              'f:startTime': {},
            },
          },
        },
      ],
    },
    spec: {
      volumes: [
        { name: 'config', configMap: { name: `${app}-config`, defaultMode: 420 } },
        {
          name: 'kube-api-access',
          projected: {
            sources: [{ serviceAccountToken: { expirationSeconds: 3607, path: 'token' } }],
            defaultMode: 420,
          },
        },
      ],
      containers: [
        {
          name: 'app',
          image,
          ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
          env: [
            { name: 'LOG_LEVEL', value: 'info' },
            { name: 'POD_NAME', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.name' } } },
            { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } } },
          ],
          resources: { limits: { cpu: '1', memory: '512Mi' }, requests: { cpu: '250m', memory: '256Mi' } },
          volumeMounts: [
            { name: 'config', mountPath: '/etc/app', readOnly: true },
            { name: 'kube-api-access', readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' },
          ],
          imagePullPolicy: 'IfNotPresent',
        },
        {
          name: 'envoy',
          image: 'registry.example.com/mesh/envoy:1.31.2',
          args: ['--config-path', '/etc/envoy/envoy.yaml', '--log-level', 'warn'],
          env: [{ name: 'ENVOY_UID', value: '1337' }],
          resources: { limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: '50m', memory: '64Mi' } },
          volumeMounts: [{ name: 'kube-api-access', readOnly: true, mountPath: '/var/run/secrets/kubernetes.io/serviceaccount' }],
          imagePullPolicy: 'IfNotPresent',
        },
      ],
      restartPolicy: 'Always',
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: app,
      nodeName,
      priority: 0,
    },
    status: {
      phase: 'Running',
      conditions: [
        { type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: changed },
        { type: 'ContainersReady', status: 'True', lastProbeTime: null, lastTransitionTime: changed },
        { type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: created },
      ],
      hostIP,
      podIP: ip,
      podIPs: [{ ip }],
      startTime: created,
      containerStatuses: [
        {
          name: 'app',
          state: { running: { startedAt: changed } },
          ...(restarts > 0
            ? {
                lastState: {
                  terminated: {
                    exitCode: 137,
                    reason: 'OOMKilled',
                    startedAt: started,
                    finishedAt: changed,
                    containerID: `containerd://${hex(mix(i + r), 8)}`,
                  },
                },
              }
            : { lastState: {} }),
          ready: true,
          restartCount: restarts,
          image,
          imageID: `registry.example.com/shop/${app}@sha256:${hex(mix(i % 7), 8)}${hex(mix(i % 13), 8)}${hex(mix((i % 7) + 1), 8)}${hex(mix((i % 13) + 1), 8)}`,
          containerID: `containerd://${hex(mix(i), 8)}${hex(mix(i + 1), 8)}${hex(mix(r + i), 8)}`,
          started: true,
        },
        {
          name: 'envoy',
          state: { running: { startedAt: started } },
          lastState: {},
          ready: true,
          restartCount: 0,
          image: 'registry.example.com/mesh/envoy:1.31.2',
          imageID: 'registry.example.com/mesh/envoy@sha256:5e1c0d35a9f4b1c2d3e4f5a6b7c8d9e0',
          containerID: `containerd://${hex(mix(i + 2), 8)}${hex(mix(i + 3), 8)}`,
          started: true,
        },
      ],
      qosClass: 'Burstable',
    },
  };
}

/** One watch event of the stream. */
export interface WorkloadEvent {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly pod: PodState;
}

/**
 * Plays `events` watch events over `initial` pods: about 70 % MODIFIED, 15 %
 * ADDED and 15 % DELETED, every MODIFIED and DELETED naming a live pod, so a
 * correct informer turns each into exactly one add, update or delete.
 * Resource versions continue from `initial` (the list's) upwards.
 */
export function* playEvents(initial: number, events: number, seed: number): Generator<WorkloadEvent, PodState[]> {
  const random = prng(seed);
  const live: PodState[] = [];
  for (let i = 0; i < initial; i++) live.push({ index: i, resourceVersion: i + 1, revision: 0 });
  let next = initial;
  let rv = initial;
  for (let e = 0; e < events; e++) {
    const roll = random();
    rv++;
    if (roll < 0.15 || live.length === 0) {
      const pod: PodState = { index: next++, resourceVersion: rv, revision: 0 };
      live.push(pod);
      yield { type: 'ADDED', pod };
    } else if (roll < 0.3) {
      const at = Math.floor(random() * live.length);
      const pod = live[at]!;
      live[at] = live[live.length - 1]!;
      live.pop();
      pod.resourceVersion = rv;
      yield { type: 'DELETED', pod };
    } else {
      const pod = live[Math.floor(random() * live.length)]!;
      pod.resourceVersion = rv;
      pod.revision++;
      yield { type: 'MODIFIED', pod };
    }
  }
  return live;
}
