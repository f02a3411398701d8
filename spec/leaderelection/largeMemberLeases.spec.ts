/**
 * Member Leases with large annotations (audit27, finding 3): other tools write a Lease's annotations, a member Lease
 * may be ~100 KB, and a page of them passes the 4 MiB page bound (`maxBodyBytes`). Before, every listing failed the
 * same way (`ResponseTooLarge`), every retry period, for ever: the replica never learnt its members and held no shard.
 * Now a page refused by its own bound is asked again at once with half the `limit` (down to 1), the smaller limit kept
 * for the rest of the listing and the next listings (grown back once the pages are small). One Lease alone past the
 * bound fails the listing, naming the Lease before it. Default options; the project's emulator over HTTP.
 */
import { firstValueFrom, filter, Subscription } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { LeaseError } from '../../src/leaderelection/errors.ts';
import { httpLeaseClients } from '../../src/leaderelection/httpLeaseClient.ts';
import { LEASE_LIST_PAGE_SIZE } from '../../src/leaderelection/leaseListStep.ts';
import { sharding, type ShardStatus } from '../../src/leaderelection/sharding.ts';
import { hostileServer, status, type Behaviour } from '../resilience/hostile/server.ts';
import { until } from '../support/until.ts';

const LEASES = 'leases.coordination.k8s.io';
const GROUP = 'rx-informer.io/sharding';

let api: ApiServer | undefined;
let subs = new Subscription();
afterEach(async () => {
  subs.unsubscribe();
  subs = new Subscription();
  await api?.close();
  api = undefined;
});

/** A member Lease of group `g`, released (no member), with an annotation of `bytes` bytes (another tool's). */
function memberLease(name: string, bytes: number) {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name, namespace: 'ops', labels: { [GROUP]: 'g' }, annotations: { 'tool.example.com/notes': 'x'.repeat(bytes) } },
    spec: { holderIdentity: '', leaseDurationSeconds: 15, leaseTransitions: 0 },
  };
}

/** The Lease list GETs logged since the last call, as [limit, with a continue token]. */
function listings(server: ApiServer): [string | undefined, boolean][] {
  const gets = server.requests.filter((r) => r.resource === 'leases' && r.method === 'GET' && r.name === undefined);
  server.clearRequests();
  return gets.map((r) => [r.query['limit'], Boolean(r.query['continue'])]);
}

describe('member Leases past the page bound together', () => {
  it('64 Leases of 100 KB (6.4 MB a page of 500): refused pages asked again at half the limit; the next listing starts there', async () => {
    api = await startApiServer({ namespaces: ['ops'] });
    for (let i = 0; i < 64; i++) api.create(LEASES, memberLease(`g-member-${String(i).padStart(2, '0')}`, 100_000));
    api.clearRequests();
    const clients = httpLeaseClients(api.kubeConfig, { namespace: 'ops' });
    const listed = await firstValueFrom(clients.list({ [GROUP]: 'g' }));
    expect(listed.map((l) => l.name)).toEqual(Array.from({ length: 64 }, (_, i) => `g-member-${String(i).padStart(2, '0')}`));
    // 500, 250, 125 and 62 Leases are each past 4 MiB (refused); pages of 31 are 3.1 MB.
    expect(listings(api)).toEqual([
      ['500', false],
      ['250', false],
      ['125', false],
      ['62', false],
      ['31', false],
      ['31', true],
      ['31', true],
    ]);

    // The next listing starts from 31: no page refused (each refusal reads 4 MiB, every retry period, every replica).
    expect(await firstValueFrom(clients.list({ [GROUP]: 'g' }))).toHaveLength(64);
    expect(listings(api)).toEqual([
      ['31', false],
      ['31', true],
      ['31', true],
    ]);

    // The annotations go: pages of at most a quarter of the bound let the next listing ask twice as many, up to 500.
    for (let i = 0; i < 64; i++) api.patch(LEASES, 'ops', `g-member-${String(i).padStart(2, '0')}`, { metadata: { annotations: null } });
    const limits: (string | undefined)[] = [];
    for (let n = 0; n < 6; n++) {
      expect(await firstValueFrom(clients.list({ [GROUP]: 'g' }))).toHaveLength(64);
      limits.push(...listings(api).map(([limit]) => limit));
    }
    expect(limits).toEqual(['31', '31', '31', '62', '62', '124', '248', '496', String(LEASE_LIST_PAGE_SIZE)]);
  });

  it('two sharding replicas among them learn each other and split the shards (before: each listing ResponseTooLarge, each alone)', async () => {
    api = await startApiServer({ namespaces: ['ops'] });
    // 44 Leases of 100 KB: a page of 500 (all of them) is 4.4 MB.
    for (let i = 0; i < 44; i++) api.create(LEASES, memberLease(`g-member-old-${i}`, 100_000));
    const errors: LeaseError[] = [];
    const replica = (identity: string) => {
      const group = sharding(httpLeaseClients(api!.kubeConfig, { namespace: 'ops' }), { name: 'g', shards: 4, identity });
      const seen: { status?: ShardStatus } = {};
      subs.add(group.errors$.subscribe((e) => errors.push(e)));
      subs.add(group.status$.subscribe((s) => (seen.status = s)));
      return seen;
    };
    const a = replica('a');
    const b = replica('b');
    // Never listed, a replica counts itself alone: the first took every shard, the other none, for good.
    await until(
      () => [a, b].every((r) => r.status?.listed === true && r.status.held.size === 2),
      'a and b to hold two shards each',
      50_000,
    );
    expect([a.status!.members, b.status!.members]).toEqual([
      ['a', 'b'],
      ['a', 'b'],
    ]);
    expect(errors.filter((e) => e.operation === 'list')).toEqual([]);
  }, 60_000);
});

describe('one Lease alone past the page bound', () => {
  it('fails the listing as ResponseTooLarge naming the Lease before it; the group lists again and holds its shards once it is gone', async () => {
    api = await startApiServer({ namespaces: ['ops'] });
    for (const name of ['g-member-a', 'g-member-b', 'g-member-d']) api.create(LEASES, memberLease(name, 100));
    api.create(LEASES, memberLease('g-member-c', 5 * 1024 * 1024));
    api.clearRequests();
    const clients = httpLeaseClients(api.kubeConfig, { namespace: 'ops' });
    const error = (await firstValueFrom(clients.list({ [GROUP]: 'g' })).catch((e: unknown) => e)) as LeaseError;
    expect(error).toBeInstanceOf(LeaseError);
    expect([error.reason, error.operation, error.status]).toEqual(['ResponseTooLarge', 'list', 200]);
    expect(error.message).toMatch(
      /^list lease \*: the Lease after g-member-b \(in name order\) alone is larger than the 4 MiB limit for a page; option maxBodyBytes \(2 pages, \d+ bytes\)$/,
    );
    // Each halving one request (⌊log2 500⌋ + 1 refused at most), then a and b alone, then c alone refused.
    expect(listings(api)).toEqual([
      ...['500', '250', '125', '62', '31', '15', '7', '3'].map((limit) => [limit, false]),
      ['1', false],
      ['1', true],
      ['1', true],
    ]);

    // A sharding replica: the listing fails each retry period, reported; no shard held, until the Lease is gone.
    const group = sharding(clients, { name: 'g', shards: 2, identity: 'e' });
    const errors: LeaseError[] = [];
    subs.add(group.errors$.subscribe((e) => errors.push(e)));
    subs.add(group.status$.subscribe());
    await until(() => errors.some((e) => e.reason === 'ResponseTooLarge'), 'the listing to fail');
    expect(errors.find((e) => e.reason === 'ResponseTooLarge')).toMatchObject({
      operation: 'list',
      lease: 'g-member-*',
      message: expect.stringMatching(/^list lease g-member-\*: the Lease after g-member-b \(in name order\) alone is larger than/),
    });
    api.delete(LEASES, 'ops', 'g-member-c');
    const held = await firstValueFrom(group.status$.pipe(filter((s) => s.listed && s.held.size === 2)));
    expect(held.members).toEqual(['e']);
  });
});

describe('a server that ignores limit, and bodies that are not a page', () => {
  const huge: Behaviour = (_request, response) => {
    response.writeHead(200, { 'Content-Type': 'application/json' });
    response.end(JSON.stringify({ kind: 'LeaseList', metadata: {}, items: [memberLease('g-member-a', 5 * 1024 * 1024)] }));
  };

  it('a page past the bound at every limit: 9 requests (500 down to 1), then ResponseTooLarge naming the first Lease', async () => {
    const server = await hostileServer({ list: huge });
    try {
      const error = (await firstValueFrom(httpLeaseClients(server.kc, { namespace: 'ops' }).list({ g: 'g' })).catch(
        (e: unknown) => e,
      )) as LeaseError;
      expect([error.reason, error.status]).toEqual(['ResponseTooLarge', 200]);
      expect(error.message).toMatch(/^list lease \*: the first Lease listed alone is larger than the 4 MiB limit for a page/);
      expect(server.received.list).toBe(9);
    } finally {
      await server.close();
    }
  });

  it('a listing cut short after a refusal (its time ran out) leaves the next one its smaller page size', async () => {
    const limits: string[] = [];
    // Past the bound at more than 10 Leases; at 10 or fewer, headers and then nothing (a server too slow to finish).
    const server = await hostileServer({
      list: (context, response) => {
        const limit = context.url.searchParams.get('limit') ?? '';
        limits.push(limit);
        if (Number(limit) > 10) return huge(context, response);
        response.writeHead(200, { 'Content-Type': 'application/json' });
        response.write('{"kind":"LeaseList","metadata":{},"items":[');
      },
    });
    try {
      const clients = httpLeaseClients(server.kc, { namespace: 'ops' });
      const first = clients.list({ g: 'g' }).subscribe();
      await until(() => limits.includes('7'), 'the page of 7 Leases to be asked');
      first.unsubscribe(); // as sharding's timeout of the whole listing does
      const second = clients.list({ g: 'g' }).subscribe();
      await until(() => limits.length === 8, 'the next listing to ask');
      second.unsubscribe();
      expect(limits).toEqual(['500', '250', '125', '62', '31', '15', '7', '7']);
    } finally {
      await server.close();
    }
  });

  it('an error body past its bound (not a page) is not asked again smaller: one request', async () => {
    const server = await hostileServer({ list: status(500, 'InternalError', 'x'.repeat(2 * 1024 * 1024)) });
    try {
      const error = (await firstValueFrom(httpLeaseClients(server.kc, { namespace: 'ops' }).list({ g: 'g' })).catch(
        (e: unknown) => e,
      )) as LeaseError;
      expect([error.reason, error.status]).toEqual(['ResponseTooLarge', 500]);
      expect(server.received.list).toBe(1);
    } finally {
      await server.close();
    }
  });
});
