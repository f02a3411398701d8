// A Lease write sends back the metadata of the Lease as last read or written, with only the spec replaced and our
// labels merged in (client-go's LeaseLock.Update, tools/leaderelection/resourcelock/leaselock.go): labels, annotations,
// ownerReferences and finalizers set by others (a Helm chart, `kubectl annotate`) survive acquiring, renewing and
// releasing. Before, every PUT sent a fresh object (name, namespace, our labels, resourceVersion, spec) and wiped them
// (review audit50). Against the emulator on 127.0.0.1, default timing.
import { filter, firstValueFrom, type Subscription } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServer, type RequestRecord } from 'rx-informer-emulator';
import { httpLeaseClients } from '../../src/leaderelection/httpLeaseClient.ts';
import { leaderElection } from '../../src/leaderelection/leaderElection.ts';
import { sharding } from '../../src/leaderelection/sharding.ts';

let api: ApiServer | undefined;
const subs: Subscription[] = [];
afterEach(async () => {
  for (const s of subs.splice(0)) s.unsubscribe();
  await api?.close();
  api = undefined;
});

const LEASES = 'leases.coordination.k8s.io';
type Lease = { metadata: Record<string, unknown>; spec: Record<string, unknown> };
const leaseOf = (name: string) => api!.get(LEASES, 'ops', name) as unknown as Lease;
const putOf = (name: string) => (r: RequestRecord) => r.resource === 'leases' && r.method === 'PUT' && r.status === 200 && r.name === name;

/** A Lease created by someone else (a Helm chart): its labels, annotations, owner and finalizer. */
function precreate(name: string, spec: Record<string, unknown> = {}, labels: Record<string, string> = {}): void {
  api!.create(LEASES, {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name,
      namespace: 'ops',
      labels: { 'app.kubernetes.io/managed-by': 'Helm', ...labels },
      annotations: { 'meta.helm.sh/release-name': 'tidy' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'tidy', uid: '0000-1111' }],
      finalizers: ['example.com/keep'],
    },
    spec,
  });
}

function expectKept(lease: Lease): void {
  expect(lease.metadata['labels']).toMatchObject({ 'app.kubernetes.io/managed-by': 'Helm' });
  expect(lease.metadata['annotations']).toEqual({ 'meta.helm.sh/release-name': 'tidy' });
  expect(lease.metadata['ownerReferences']).toEqual([{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'tidy', uid: '0000-1111' }]);
  expect(lease.metadata['finalizers']).toEqual(['example.com/keep']);
}

describe('a Lease write keeps the metadata others wrote (as client-go)', () => {
  it('leaderElection: labels, annotations, ownerReferences, finalizers of a pre-created Lease survive acquiring and renewing it', async () => {
    api = await startApiServer({ namespaces: ['ops'] });
    precreate('ctrl');
    const a = leaderElection(api.kubeConfig, { namespace: 'ops', name: 'ctrl', identity: 'a' });
    subs.push(a.leader$.subscribe());
    await firstValueFrom(a.leader$.pipe(filter(Boolean)));
    expect(leaseOf('ctrl').spec).toMatchObject({ holderIdentity: 'a' });
    expectKept(leaseOf('ctrl'));
    // The next renewal (the fast path: the resourceVersion last written) keeps them too.
    await api.nextRequest(putOf('ctrl'), 10_000);
    expectKept(leaseOf('ctrl'));
  }, 20_000);

  it('leaderElection: an annotation added while we lead (kubectl annotate) survives the next renewal', async () => {
    api = await startApiServer({ namespaces: ['ops'] });
    const a = leaderElection(api.kubeConfig, { namespace: 'ops', name: 'ctrl', identity: 'a' });
    subs.push(a.leader$.subscribe());
    await firstValueFrom(a.leader$.pipe(filter(Boolean)));
    api.patch(LEASES, 'ops', 'ctrl', { metadata: { annotations: { note: 'kept' } } });
    // The fast-path renewal quotes a stale resourceVersion: 409, read, renew with what was read.
    await api.nextRequest(putOf('ctrl'), 10_000);
    expect(leaseOf('ctrl').metadata['annotations']).toEqual({ note: 'kept' });
    expect(leaseOf('ctrl').spec).toMatchObject({ holderIdentity: 'a' });
  }, 20_000);

  it('sharding: a shard Lease keeps others’ labels, with ours merged in (none removed)', async () => {
    api = await startApiServer({ namespaces: ['ops'] });
    precreate('apples-shard-0', {}, { team: 'fruit' });
    const shards = sharding(httpLeaseClients(api.kubeConfig, { namespace: 'ops' }), { name: 'apples', shards: 1, identity: 'a' });
    subs.push(shards.held$.subscribe());
    await firstValueFrom(shards.held$.pipe(filter((held) => held.has(0))));
    await api.nextRequest(putOf('apples-shard-0'), 10_000);
    const lease = leaseOf('apples-shard-0');
    expect(lease.spec).toMatchObject({ holderIdentity: 'a' });
    expectKept(lease);
    expect(lease.metadata['labels']).toEqual({
      'app.kubernetes.io/managed-by': 'Helm',
      team: 'fruit',
      'rx-informer.io/sharding': 'apples',
      'rx-informer.io/shards': '1',
    });
  }, 20_000);

  it('sharding: a lapsed peer’s member Lease released from a listing keeps its metadata (read before the write)', async () => {
    api = await startApiServer({ namespaces: ['ops'] });
    // A dead peer's member Lease, 1 s long: it lapses a second after our first listing sees it.
    precreate(
      'apples-member-z',
      { holderIdentity: 'z', leaseDurationSeconds: 1, leaseTransitions: 0 },
      { 'rx-informer.io/sharding': 'apples' },
    );
    const shards = sharding(httpLeaseClients(api.kubeConfig, { namespace: 'ops' }), { name: 'apples', shards: 2, identity: 'a' });
    subs.push(shards.held$.subscribe());
    await api.waitForRequest(putOf('apples-member-z'), 15_000);
    const lease = leaseOf('apples-member-z');
    expect(lease.spec).toMatchObject({ holderIdentity: '' });
    expectKept(lease);
  }, 20_000);
});
