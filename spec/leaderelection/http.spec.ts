import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom, filter, type Subscription } from 'rxjs';
import { KubeConfig } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { LeaseError } from '../../src/leaderelection/errors.ts';
import { httpLeaseClients } from '../../src/leaderelection/httpLeaseClient.ts';
import { leaderElection } from '../../src/leaderelection/leaderElection.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { endless, hostileServer, status } from '../resilience/hostile/server.ts';

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

describe('Lease requests to a hostile server', () => {
  it('an endless body is cut at maxBodyBytes (ResponseTooLarge), and a huge Status message is capped', async () => {
    const server = await hostileServer({ list: endless(200, { head: '{"kind":"Lease","metadata":{"name":"ctrl"' }) });
    try {
      const lease = httpLeaseClients(server.kc, { namespace: 'ops', maxBodyBytes: 256 * 1024 }).lease('ctrl');
      const error = (await firstValueFrom(lease.get()).catch((e: unknown) => e)) as LeaseError;
      expect(error).toBeInstanceOf(LeaseError);
      expect(error.reason).toBe('ResponseTooLarge');
      expect(error.message).toBe('get lease ctrl: the response is larger than the 262144-byte limit (option maxBodyBytes); aborted');
      expect(server.written.list).toBeLessThan(32 * 1024 * 1024);
      server.on('list', status(500, 'InternalError', 'z'.repeat(100_000)));
      const failed = (await firstValueFrom(lease.get()).catch((e: unknown) => e)) as LeaseError;
      expect(failed.message).toBe(`get lease ctrl: ${'z'.repeat(1024)}… (100000 bytes)`);
    } finally {
      await server.close();
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
