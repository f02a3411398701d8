import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom, filter, type Subscription } from 'rxjs';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { InformerError } from '../../src/0-model/errors.ts';
import { LeaseError } from '../../src/leaderelection/errors.ts';
import { httpLeaseClients } from '../../src/leaderelection/httpLeaseClient.ts';
import { CHARGE_PER_LEASE, MAX_LEASE_LIST_PAGES } from '../../src/leaderelection/leaseListStep.ts';
import { leaderElection } from '../../src/leaderelection/leaderElection.ts';
import { SHARDS_LABEL } from '../../src/leaderelection/record.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { endless, gzipped, hostileServer, status, type Behaviour, type HostileServer } from '../resilience/hostile/server.ts';

// Real HTTP on 127.0.0.1; assertions are about order and content, not speed. Retries are quick; the lease is
// long, so a candidate that waited the lease out instead of taking a released one would outlast the test's timeout.
const timing = { leaseDurationMs: 60_000, renewDeadlineMs: 40_000, retryPeriodMs: 200 };

let api: ApiServer | undefined;
const subs: Subscription[] = [];
afterEach(async () => {
  for (const s of subs.splice(0)) s.unsubscribe();
  await api?.close();
  api = undefined;
});

describe('leader election over HTTP against the emulator', () => {
  it('creates, renews with the resourceVersion read, reports 409 Conflict and 500 on errors$, releases on unsubscribe, and the other candidate takes over at once', async () => {
    api = await startApiServer({ namespaces: ['ops'] });
    const a = leaderElection(api.kubeConfig, { namespace: 'ops', name: 'ctrl', identity: 'a', ...timing });
    const aErrors: string[] = [];
    subs.push(a.errors$.subscribe((e) => aErrors.push(`${e.operation} ${e.reason} ${e.status}`)));
    await firstValueFrom(a.leader$.pipe(filter(Boolean)));
    const lease = api.get('leases.coordination.k8s.io', 'ops', 'ctrl') as {
      spec: { holderIdentity: string; leaseDurationSeconds: number; leaseTransitions: number };
    };
    expect(lease.spec).toMatchObject({ holderIdentity: 'a', leaseDurationSeconds: 60, leaseTransitions: 0 });

    // A stale write from someone else: 409 Conflict, the Status kube-apiserver sends (09c).
    const stale = httpLeaseClients(api.kubeConfig, { namespace: 'ops' }).lease('ctrl');
    const conflict = await firstValueFrom(stale.update('1', { holderIdentity: 'x', leaseDurationSeconds: 60, leaseTransitions: 1 })).catch(
      (e: unknown) => e,
    );
    expect(conflict).toMatchObject({ reason: 'Conflict', status: 409, operation: 'update' });
    expect(String((conflict as Error).message)).toMatch(/the object has been modified/);

    // One renewal gets a 500: reported, leadership kept (the next renewal succeeds within the deadline).
    api.faults.add({ match: { resource: 'leases', method: 'PUT' }, fault: { type: 'status', code: 500 } });
    await api.waitForRequest((r) => r.resource === 'leases' && r.fault === 'status');
    await api.waitForRequest(
      (r) => r.resource === 'leases' && r.method === 'PUT' && r.status === 200 && r.fault === undefined && r.seq > 0,
    );

    // b's requests carry their own User-Agent, so the log tells when b has read the Lease held by a.
    const bLeases = httpLeaseClients(api.kubeConfig, { namespace: 'ops', userAgent: 'candidate-b' }).lease('ctrl');
    const b = leaderElection(bLeases, { identity: 'b', ...timing });
    const bLeads = firstValueFrom(b.leader$.pipe(filter(Boolean)));
    subs.push(b.leader$.subscribe());
    await api.waitForRequest(
      (r) => r.userAgent === 'candidate-b' && r.resource === 'leases' && r.method === 'GET' && r.status === 200,
      20_000,
    );
    expect(api.get('leases.coordination.k8s.io', 'ops', 'ctrl')).toMatchObject({ spec: { holderIdentity: 'a' } }); // so b waits
    const [aErrorsSub] = subs.splice(0, 1);
    aErrorsSub?.unsubscribe(); // a's last subscriber leaves: a releases
    // Released (holderIdentity "", leaseDurationSeconds 1): b takes over without waiting out the 60 s lease
    // (which would outlast this test's timeout).
    await bLeads;
    const after = api.get('leases.coordination.k8s.io', 'ops', 'ctrl') as { spec: { holderIdentity: string; leaseTransitions: number } };
    expect(after.spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1 });
    expect(aErrors).toContain('update ServerError 500');
  });
});

describe('deleting a Lease over HTTP against the emulator', () => {
  it('sends DELETE with preconditions.resourceVersion: a stale one is 409 Conflict (kept), the one read deletes, then 404 NotFound', async () => {
    api = await startApiServer({ namespaces: ['ops'] });
    const lease = httpLeaseClients(api.kubeConfig, { namespace: 'ops' }).lease('gone', { 'rx-informer.io/sharding': 'g' });
    const created = await firstValueFrom(lease.create({ holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 0 }));
    const failed = (rv: string) =>
      firstValueFrom(lease.delete!(rv)).then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(await failed('1')).toMatchObject({ name: 'LeaseError', reason: 'Conflict', status: 409, operation: 'delete', lease: 'gone' });
    expect(api.get('leases.coordination.k8s.io', 'ops', 'gone')).toBeDefined();
    expect(await failed(created.resourceVersion)).toBeUndefined();
    expect(api.get('leases.coordination.k8s.io', 'ops', 'gone')).toBeUndefined();
    expect(await failed(created.resourceVersion)).toMatchObject({ reason: 'NotFound', status: 404, operation: 'delete' });
    const deletes = api.requests.filter((r) => r.resource === 'leases' && r.method === 'DELETE').map((r) => r.status);
    expect(deletes).toEqual([409, 200, 404]);
  });
});

describe('Lease requests to a hostile server', () => {
  it('an endless body is cut at maxBodyBytes (ResponseTooLarge), and a huge Status message is capped', async () => {
    const server = await hostileServer({ list: endless(200, { head: '{"kind":"Lease","metadata":{"name":"ctrl"' }) });
    try {
      const lease = httpLeaseClients(server.kc, { namespace: 'ops', maxBodyBytes: 256 * 1024 }).lease('ctrl');
      const error = (await firstValueFrom(lease.get()).catch((e: unknown) => e)) as LeaseError;
      expect(error).toBeInstanceOf(LeaseError);
      expect(error.reason).toBe('ResponseTooLarge');
      // The transport's limit and words (its readBody), naming the Lease client's option.
      expect(error.message).toBe(
        'get lease ctrl: GET /apis/coordination.k8s.io/v1/namespaces/ops/leases/ctrl: the response is larger than the 256 KiB limit (262185 bytes read); aborted (option maxBodyBytes)',
      );
      expect(server.written.list).toBeLessThan(32 * 1024 * 1024);
      server.on('list', status(500, 'InternalError', 'z'.repeat(100_000)));
      const failed = (await firstValueFrom(lease.get()).catch((e: unknown) => e)) as LeaseError;
      expect(failed.message).toBe(`get lease ctrl: ${'z'.repeat(1024)}… (100000 bytes)`);
    } finally {
      await server.close();
    }
  });
  it('through the transport: every status gets its reason from the one mapping (504 Timeout, 410 Expired), a 404 get is no Lease', async () => {
    const server = await hostileServer();
    try {
      const lease = httpLeaseClients(server.kc, { namespace: 'ops' }).lease('ctrl');
      const record = { holderIdentity: 'a', leaseDurationSeconds: 15, leaseTransitions: 0 };
      // Read first (resourceVersion 3): a write quoting it sends that metadata back, with no read of its own.
      server.on('list', gzipped(200, JSON.stringify({ kind: 'Lease', metadata: { name: 'ctrl', resourceVersion: '3' }, spec: record })));
      await firstValueFrom(lease.get());
      const failure = async (code: number, reason: string) => {
        server.on('list', status(code, reason, `said ${code}`));
        const error = (await firstValueFrom(lease.update('3', record)).catch((e: unknown) => e)) as LeaseError;
        expect(error).toBeInstanceOf(LeaseError);
        // An InformerError, naming the request that failed and caused by the transport's own error.
        expect(error).toBeInstanceOf(InformerError);
        expect(error.request).toBe('PUT /apis/coordination.k8s.io/v1/namespaces/ops/leases/ctrl');
        expect(error.cause).toBeInstanceOf(InformerError);
        return [error.reason, error.status, error.message];
      };
      expect(await failure(504, 'Timeout')).toEqual(['Timeout', 504, 'update lease ctrl: said 504']);
      expect(await failure(410, 'Expired')).toEqual(['Expired', 410, 'update lease ctrl: said 410']);
      expect(await failure(503, 'ServiceUnavailable')).toEqual(['ServerError', 503, 'update lease ctrl: said 503']);
      expect(await failure(429, 'TooManyRequests')).toEqual(['TooManyRequests', 429, 'update lease ctrl: said 429']);
      expect(await failure(409, 'Conflict')).toEqual(['Conflict', 409, 'update lease ctrl: said 409']);
      expect(await failure(404, 'NotFound')).toEqual(['NotFound', 404, 'update lease ctrl: said 404']);
      server.on('list', status(404, 'NotFound', 'no lease'));
      expect(await firstValueFrom(lease.get())).toBeNull();
      // A resourceVersion this client never read (a peer's Lease, from a listing) is read first: its failure is the write's.
      server.on('list', status(503, 'ServiceUnavailable', 'said 503'));
      const unread = (await firstValueFrom(lease.update('9', record)).catch((e: unknown) => e)) as LeaseError;
      expect([unread.reason, unread.operation, unread.request]).toEqual([
        'ServerError',
        'update',
        'GET /apis/coordination.k8s.io/v1/namespaces/ops/leases/ctrl',
      ]);
    } finally {
      await server.close();
    }
  });

  it('through the transport: a gzip body is inflated (the transport decodes it), though a Lease request asks for none', async () => {
    const body = JSON.stringify({
      kind: 'Lease',
      metadata: { name: 'ctrl', resourceVersion: '7' },
      spec: { holderIdentity: 'a', leaseDurationSeconds: 15, leaseTransitions: 2 },
    });
    const server = await hostileServer({ list: gzipped(200, body) });
    try {
      const snapshot = await firstValueFrom(httpLeaseClients(server.kc, { namespace: 'ops' }).lease('ctrl').get());
      expect(snapshot).toMatchObject({ name: 'ctrl', resourceVersion: '7', record: { holderIdentity: 'a', leaseTransitions: 2 } });
    } finally {
      await server.close();
    }
  });
});

describe('listing member Leases page by page (limit and continue)', () => {
  const lease = (name: string, annotation: string) => ({
    kind: 'LeaseList',
    metadata: { name, namespace: 'ops', labels: { group: 'g' }, annotations: { note: annotation }, resourceVersion: '5' },
    spec: { holderIdentity: name, leaseDurationSeconds: 15, leaseTransitions: 0 },
  });
  /** A page of Leases named `prefix-0…`, going on with `token` ('' : the last). */
  const page = (prefix: string, count: number, token: string, note = 'n'): Behaviour => {
    const items = Array.from({ length: count }, (_, i) => lease(`${prefix}-${i}`, note));
    return (_request, response) => {
      response.writeHead(200, { 'Content-Type': 'application/json' });
      response.end(JSON.stringify({ kind: 'LeaseList', apiVersion: 'coordination.k8s.io/v1', metadata: { continue: token }, items }));
    };
  };

  it('3,000 member Leases of ~2 KiB (6 MiB, past the 4 MiB body bound) are listed in pages of 500', async () => {
    api = await startApiServer({ namespaces: ['ops'] });
    const note = 'x'.repeat(2_000);
    for (let i = 0; i < 3_000; i++) {
      const { kind: _, ...object } = lease(`g-member-${i}`, note);
      api.create('leases.coordination.k8s.io', { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', ...object });
    }
    api.create('leases.coordination.k8s.io', {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'other', namespace: 'ops', labels: { group: 'h' } },
      spec: { holderIdentity: 'o' },
    });
    api.clearRequests();
    const leases = await firstValueFrom(httpLeaseClients(api.kubeConfig, { namespace: 'ops' }).list({ group: 'g' }));
    expect(leases).toHaveLength(3_000);
    expect(new Set(leases.map((l) => l.name)).size).toBe(3_000);
    expect(leases.find((l) => l.name === 'g-member-2999')?.record).toMatchObject({ holderIdentity: 'g-member-2999' });
    const gets = api.requests.filter((r) => r.resource === 'leases' && r.method === 'GET');
    expect(gets.map((r) => [r.status, r.query['limit'], Boolean(r.query['continue'])])).toEqual([
      [200, '500', false],
      ...Array.from({ length: 5 }, () => [200, '500', true]),
    ]);
  });

  it('a server whose continue tokens never end: ListTooLong at maxListTotalBytes, each page given what is left of it', async () => {
    let n = 0;
    const server = await hostileServer({ list: page('a', 500, 't0', 'x'.repeat(2_000)) });
    server.on('continue', (request, response) => page(`p${++n}`, 500, `t${n}`, 'x'.repeat(2_000))(request, response));
    try {
      const clients = httpLeaseClients(server.kc, { namespace: 'ops', maxListTotalBytes: 8 * 1024 * 1024 });
      const error = (await firstValueFrom(clients.list({ group: 'g' })).catch((e: unknown) => e)) as LeaseError;
      expect(error).toBeInstanceOf(LeaseError);
      expect([error.reason, error.operation]).toEqual(['ListTooLong', 'list']);
      expect(error.message).toMatch(
        /^list lease \*: the listing is larger than the 8 MiB limit for a whole listing \(7 pages, \d+ bytes, then more\); option maxListTotalBytes$/,
      );
      // Pages of ~1.1 MiB: the eighth was cut at what was left, not read whole.
      expect(server.received.list + server.received.continue).toBe(8);
      expect(server.written.list + server.written.continue).toBeLessThan(9 * 1024 * 1024);
    } finally {
      await server.close();
    }
  });

  // A Lease kept as a snapshot costs 130–155 bytes of heap however few bytes it came in (CHARGE_PER_LEASE): before,
  // every item was kept and the listing charged its bytes alone (audit29: pages of `{}`, 20 MiB charged, 943 MiB of heap).
  const raw = (items: string, token: string): Behaviour => {
    return (_request, response) => {
      response.writeHead(200, { 'Content-Type': 'application/json' });
      response.end(`{"kind":"LeaseList","apiVersion":"coordination.k8s.io/v1","metadata":{"continue":"${token}"},"items":[${items}]}`);
    };
  };

  it('items without a name are no Lease: dropped, not kept', async () => {
    const server = await hostileServer({
      list: raw(`{},{"metadata":{}},{"metadata":{"name":""}},7,${JSON.stringify(lease('g-member-a', 'n'))}`, ''),
    });
    try {
      const leases = await firstValueFrom(httpLeaseClients(server.kc, { namespace: 'ops' }).list({ group: 'g' }));
      expect(leases.map((l) => l.name)).toEqual(['g-member-a']);
    } finally {
      await server.close();
    }
  });

  it("a listed Lease keeps the shard count's label only (the snapshots are held until the listing ends)", async () => {
    const many = Object.fromEntries(Array.from({ length: 1_000 }, (_, i) => [`l${i}`, 'v']));
    const item = { ...lease('g-member-a', 'n'), metadata: { name: 'g-member-a', labels: { ...many, [SHARDS_LABEL]: '4', odd: 7 } } };
    const server = await hostileServer({ list: raw(JSON.stringify(item), '') });
    try {
      const leases = await firstValueFrom(httpLeaseClients(server.kc, { namespace: 'ops' }).list({ group: 'g' }));
      expect(leases.map((l) => l.labels)).toEqual([{ [SHARDS_LABEL]: '4' }]);
    } finally {
      await server.close();
    }
  });

  it('tiny Leases are charged CHARGE_PER_LEASE each against maxListTotalBytes: ListTooLong, what was dropped named', async () => {
    // Pages of 20,000 Leases with only a name (~0.5 MiB, charged 1.25 MB each) and 1,000 `{}`: the second passes 2 MiB.
    let n = 0;
    const items = (p: string) =>
      [...Array.from({ length: 20_000 }, (_, i) => `{"metadata":{"name":"${p}-${i}"}}`), ...Array.from({ length: 1_000 }, () => '{}')].join(
        ',',
      );
    const server = await hostileServer({ list: raw(items('a'), 't0') });
    server.on('continue', (request, response) => raw(items(`p${++n}`), `t${n}`)(request, response));
    try {
      const clients = httpLeaseClients(server.kc, { namespace: 'ops', maxListTotalBytes: 2 * 1024 * 1024 });
      const error = (await firstValueFrom(clients.list({ group: 'g' })).catch((e: unknown) => e)) as LeaseError;
      expect([error.reason, error.operation]).toEqual(['ListTooLong', 'list']);
      expect(error.message).toBe(
        `list lease *: the listing is larger than the 2 MiB limit for a whole listing (2 pages, ${2 * 20_000 * CHARGE_PER_LEASE} bytes, ` +
          `2,000 items without a name dropped, 40,000 Leases charged at least ${CHARGE_PER_LEASE} bytes each); option maxListTotalBytes`,
      );
      expect(server.received.list + server.received.continue).toBe(2);
    } finally {
      await server.close();
    }
  });

  it('continue tokens with no Leases, never ending: ListTooLong after MAX_LEASE_LIST_PAGES pages; a repeated token at once', async () => {
    let n = 0;
    const server = await hostileServer({ list: page('a', 0, 't0') });
    server.on('continue', (request, response) => page('b', 0, `t${++n}`)(request, response));
    try {
      const clients = httpLeaseClients(server.kc, { namespace: 'ops' });
      const error = (await firstValueFrom(clients.list({ group: 'g' })).catch((e: unknown) => e)) as LeaseError;
      expect([error.reason, error.message]).toEqual([
        'ListTooLong',
        expect.stringMatching(
          new RegExp(
            `^list lease \\*: the listing went on past ${MAX_LEASE_LIST_PAGES} pages \\(${MAX_LEASE_LIST_PAGES} pages, \\d+ bytes\\)$`,
          ),
        ),
      ]);
      expect(server.received.list + server.received.continue).toBe(MAX_LEASE_LIST_PAGES);
      server.on('continue', page('b', 1, 't7'));
      const repeated = (await firstValueFrom(clients.list({ group: 'g' })).catch((e: unknown) => e)) as LeaseError;
      expect([repeated.reason, repeated.message]).toEqual([
        'ListTooLong',
        expect.stringMatching(/^list lease \*: the server repeated a continue token \(after 3 pages/),
      ]);
    } finally {
      await server.close();
    }
  });

  it('a continue token over MAX_CONTINUE_TOKEN_CHARS (a 100 KB one): MalformedLine naming its length, not sent back', async () => {
    const server = await hostileServer({ list: page('a', 1, 'x'.repeat(100_000)) });
    try {
      const clients = httpLeaseClients(server.kc, { namespace: 'ops' });
      const error = (await firstValueFrom(clients.list({ group: 'g' })).catch((e: unknown) => e)) as LeaseError;
      expect([error.reason, error.operation]).toEqual(['MalformedLine', 'list']);
      expect(error.message).toMatch(
        /^list lease \*: the server's continue token is 100,000 characters, over the 16,384 sent back to it \(after 1 pages/,
      );
      expect([server.received.list, server.received.continue]).toEqual([1, 0]);
    } finally {
      await server.close();
    }
  });

  it('a 410 on a continue token starts the listing again from its first page, once (client-go: a full list); a 410 on the first page fails', async () => {
    let lists = 0;
    let continues = 0;
    const server = await hostileServer();
    server.on('list', (request, response) => page(`l${++lists}`, 2, `from-${lists}`)(request, response));
    server.on('continue', (request, response) =>
      ++continues === 1 ? status(410, 'Expired', 'too old')(request, response) : page(`c${continues}`, 1, '')(request, response),
    );
    try {
      const clients = httpLeaseClients(server.kc, { namespace: 'ops' });
      const leases = await firstValueFrom(clients.list({ group: 'g' }));
      expect(leases.map((l) => l.name)).toEqual(['l2-0', 'l2-1', 'c2-0']);
      expect([lists, continues]).toEqual([2, 2]);
      server.on('list', status(410, 'Expired', 'too old'));
      const error = (await firstValueFrom(clients.list({ group: 'g' })).catch((e: unknown) => e)) as LeaseError;
      expect([error.reason, error.status, error.message]).toEqual(['Expired', 410, 'list lease *: too old']);
      // Every continue token expires (a broken server or proxy): one restart, then the 410 itself, not 100 listings
      // back to back ending in a ListTooLong that blames the listing's length (audit53).
      let again = 0;
      server.on('list', (request, response) => page(`a${++again}`, 2, `from-a${again}`)(request, response));
      server.on('continue', status(410, 'Expired', 'too old'));
      const expired = (await firstValueFrom(clients.list({ group: 'g' })).catch((e: unknown) => e)) as LeaseError;
      expect([expired.reason, expired.status, expired.message]).toEqual(['Expired', 410, 'list lease *: too old']);
      expect(again).toBe(2);
    } finally {
      await server.close();
    }
  });
});

describe("a Lease request's timeout is the transport's request timer", () => {
  let server: HostileServer | undefined;
  afterEach(async () => {
    vi.useRealTimers();
    await server?.close();
    server = undefined;
  });

  it('at its default, 5 s: nothing at 4.999 s, then Timeout waiting for the response headers', async () => {
    server = await hostileServer({ list: () => undefined }); // accepts, never answers
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const lease = httpLeaseClients(server.kc, { namespace: 'ops' }).lease('ctrl');
    let failed: unknown;
    const sub = lease.get().subscribe({ error: (e: unknown) => (failed = e) });
    try {
      for (let i = 0; server.received.list === 0; i++) {
        if (i > 5000) throw new Error('the request never arrived');
        await new Promise((resolve) => setImmediate(resolve));
      }
      vi.advanceTimersByTime(4_999);
      expect(failed).toBeUndefined();
      vi.advanceTimersByTime(1);
      expect(failed).toBeInstanceOf(LeaseError);
      expect(failed).toMatchObject({
        reason: 'Timeout',
        operation: 'get',
        message:
          'get lease ctrl: GET /apis/coordination.k8s.io/v1/namespaces/ops/leases/ctrl: no response headers within 5000 ms (waiting for: response headers)',
      });
    } finally {
      sub.unsubscribe();
    }
  });
});

describe("leaderElection(kc, …): the transport's timer follows renewDeadline / 2 by default", () => {
  let server: HostileServer | undefined;
  afterEach(async () => {
    vi.useRealTimers();
    await server?.close();
    server = undefined;
  });

  it("renewDeadline 30 s: a hanging Lease request fails at 15 s, not at the clients' own 5 s", async () => {
    server = await hostileServer({ list: () => undefined }); // accepts, never answers
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const election = leaderElection(server.kc, {
      name: 'ctrl',
      namespace: 'ops',
      identity: 'a',
      leaseDurationMs: 45_000,
      renewDeadlineMs: 30_000,
    });
    const errors: LeaseError[] = [];
    const subs = [election.errors$.subscribe((e) => errors.push(e)), election.leader$.subscribe()];
    try {
      for (let i = 0; server.received.list === 0; i++) {
        if (i > 5000) throw new Error('the request never arrived');
        await new Promise((resolve) => setImmediate(resolve));
      }
      vi.advanceTimersByTime(14_999);
      expect(errors).toEqual([]);
      vi.advanceTimersByTime(1);
      expect(errors.map((e) => [e.reason, e.message])).toEqual([
        [
          'Timeout',
          'get lease ctrl: GET /apis/coordination.k8s.io/v1/namespaces/ops/leases/ctrl: no response headers within 15000 ms (waiting for: response headers)',
        ],
      ]);
    } finally {
      subs.forEach((s) => s.unsubscribe());
    }
  });
});

describe('Lease requests with an exec credential plugin', () => {
  it('use the transport’s exec credentials: a 401 runs the plugin again; a failing plugin is CredentialPlugin', async () => {
    api = await startApiServer({ namespaces: ['ops'], token: 'one' });
    const dir = mkdtempSync(join(tmpdir(), 'rx-informer-lease-exec-'));
    try {
      writeFileSync(join(dir, 'token'), 'one');
      writeFileSync(
        join(dir, 'plugin.mjs'),
        `import { appendFileSync, readFileSync } from 'node:fs';
         const dir = process.env.PLUGIN_DIR;
         appendFileSync(dir + '/runs', 'x');
         const token = readFileSync(dir + '/token', 'utf8');
         if (token === 'fail') { process.stderr.write('no session for ' + token); process.exit(4); }
         process.stdout.write(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token } }));`,
      );
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'c', server: api.url, skipTLSVerify: true }],
        users: [
          {
            name: 'u',
            exec: {
              apiVersion: 'client.authentication.k8s.io/v1',
              command: process.execPath,
              args: [join(dir, 'plugin.mjs')],
              env: [{ name: 'PLUGIN_DIR', value: dir }],
              interactiveMode: 'Never',
            },
          },
        ],
        contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
        currentContext: 'c',
      });
      const lease = httpLeaseClients(kc, { namespace: 'ops' }).lease('ctrl');
      const runs = () => readFileSync(join(dir, 'runs'), 'utf8').length;
      expect(await firstValueFrom(lease.get())).toBeNull(); // 404: no Lease yet
      expect(await firstValueFrom(lease.get())).toBeNull();
      expect(runs()).toBe(1); // cached

      api.setToken('two');
      writeFileSync(join(dir, 'token'), 'two');
      expect(await firstValueFrom(lease.get()).catch((e: unknown) => e)).toMatchObject({ reason: 'Unauthorized', status: 401 });
      expect(await firstValueFrom(lease.get())).toBeNull();
      expect(runs()).toBe(2);

      api.setToken('three');
      writeFileSync(join(dir, 'token'), 'fail');
      await firstValueFrom(lease.get()).catch(() => undefined); // 401: the credential is dropped
      const error = (await firstValueFrom(lease.get()).catch((e: unknown) => e)) as LeaseError;
      expect(error).toBeInstanceOf(LeaseError);
      expect([error.reason, error.message]).toEqual([
        'CredentialPlugin',
        `get lease ctrl: exec plugin ${process.execPath}: failed with exit code 4: no session for fail`,
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
