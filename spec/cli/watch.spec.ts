import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { UsageError, watchCommand, type EventRecord } from '../../src/cli/watch.ts';
import { parseSinkUrl } from '../../src/cli/sinkUrl.ts';
import { webhookSink } from '../../src/cli/webhook.ts';
import { MY_APPLES, startApiServer, type ApiServer } from 'rx-informer-emulator';

const execFileAsync = promisify(execFile);

/** Runs a command and returns its exit code and stderr, whether it failed or not. */
async function run(command: string, args: string[]): Promise<{ code: number; stderr: string }> {
  try {
    const { stderr } = await execFileAsync(command, args);
    return { code: 0, stderr };
  } catch (error) {
    const failed = error as { code: number; stderr: string };
    return { code: failed.code, stderr: failed.stderr };
  }
}

function collector() {
  const out: string[] = [];
  const err: string[] = [];
  return { out, err, terminal: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) } };
}

async function until(check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('rx-informer watch against the emulator', () => {
  let api: ApiServer;
  beforeEach(async () => {
    api = await startApiServer({ bookmarkIntervalMs: 50 });
    api.registerCustomResource(MY_APPLES);
    api.create('pods', {
      metadata: { name: 'web-1', namespace: 'shop', labels: { app: 'web' } },
      spec: { containers: [{ name: 'c', image: 'nginx:1' }] },
    });
  });
  afterEach(async () => {
    await api.close();
  });

  it('resolves names through discovery, shows sync, then one line per change with a compact diff', async () => {
    const t = collector();
    const w = await watchCommand(api.kubeConfig, { resources: ['po', 'ma'], all: false, output: 'pretty' }, t.terminal);
    try {
      await w.synced;
      expect(t.err.some((l) => l === 'synced pods: 1 object')).toBe(true);
      expect(t.err.some((l) => /^synced 2 resources, 1 object in \d+ ms/.test(l))).toBe(true);
      expect(t.out).toEqual([]); // the initial list is summarised, not printed
      api.patch('pods', 'shop', 'web-1', {
        metadata: { labels: { app: 'web', tier: 'fe' } },
        spec: { containers: [{ name: 'c', image: 'nginx:2' }] },
      });
      api.create('myapples.stable.example.com', {
        apiVersion: 'stable.example.com/v1',
        kind: 'MyApple',
        metadata: { name: 'red', namespace: 'fruit' },
        spec: { color: 'red', quantity: 2 },
      });
      api.delete('pods', 'shop', 'web-1');
      await until(() => t.out.length >= 3);
      // Each resource has its own connection: order holds per resource, not across them.
      const pods = t.out.filter((l) => l.includes(' pods '));
      expect(pods[0]).toMatch(
        /^\d\d:\d\d:\d\d UPDATED pods shop\/web-1  metadata\.labels\.tier: \+"fe", spec\.containers\[0\]\.image: "nginx:1" → "nginx:2"$/,
      );
      expect(pods[1]).toMatch(/DELETED pods shop\/web-1$/);
      expect(t.out.filter((l) => l.includes('myapples'))).toEqual([
        expect.stringMatching(/ADDED   myapples\.stable\.example\.com fruit\/red$/),
      ]);
      expect(t.out.join('\n')).not.toContain('resourceVersion');
    } finally {
      w.stop();
    }
  });

  it('--all watches every listable resource, custom resources included; --output json prints records', async () => {
    const t = collector();
    const w = await watchCommand(api.kubeConfig, { resources: [], all: true, output: 'json', namespaces: ['shop'] }, t.terminal);
    try {
      await w.synced;
      const synced = t.err.filter((l) => l.startsWith('synced ') && l.includes(':')).map((l) => l.slice(7, l.indexOf(':')));
      expect(synced).toEqual(
        expect.arrayContaining(['pods', 'configmaps', 'deployments.apps', 'leases.coordination.k8s.io', 'myapples.stable.example.com']),
      );
      api.create('configmaps', { metadata: { name: 'cfg', namespace: 'shop' }, data: { a: '1' } });
      api.create('configmaps', { metadata: { name: 'elsewhere', namespace: 'other' }, data: { a: '1' } });
      api.patch('configmaps', 'shop', 'cfg', { data: { a: '2' } });
      const records = () => t.out.map((l) => JSON.parse(l) as EventRecord).filter((r) => r.resource === 'configmaps');
      await until(() => records().length >= 2);
      // Namespaces are cluster-scoped, so the namespace "other" (created on the way) is seen too; its configmap is not.
      expect(t.out.map((l) => JSON.parse(l) as EventRecord).some((r) => r.resource === 'namespaces' && r.name === 'other')).toBe(true);
      expect(records().map((r) => [r.type, r.resource, r.namespace, r.name])).toEqual([
        ['ADDED', 'configmaps', 'shop', 'cfg'],
        ['UPDATED', 'configmaps', 'shop', 'cfg'],
      ]);
      expect(records()[1]?.diff).toEqual([{ path: 'data.a', old: '1', new: '2' }]);
    } finally {
      w.stop();
    }
  });

  it('--all picks up a CRD installed while it runs, and lets go of one whose CRD is deleted: one line, no more requests', async () => {
    const t = collector();
    const w = await watchCommand(
      api.kubeConfig,
      { resources: [], all: true, output: 'pretty', namespaces: ['orchard', 'elsewhere'] },
      t.terminal,
    );
    try {
      await w.synced;
      api.registerCustomResource({ group: 'fresh.example.com', version: 'v1', plural: 'pears', kind: 'Pear' });
      await until(
        () =>
          t.err.includes('synced pears.fresh.example.com in orchard: 0 objects') &&
          t.err.includes('synced pears.fresh.example.com in elsewhere: 0 objects'),
      );
      api.create('pears.fresh.example.com', {
        apiVersion: 'fresh.example.com/v1',
        kind: 'Pear',
        metadata: { name: 'conference', namespace: 'orchard' },
        spec: { ripe: true },
      });
      await until(() => t.out.some((l) => / ADDED {3}pears\.fresh\.example\.com orchard\/conference$/.test(l)));

      // As a real server may have it: the resource is gone (its watches end, the next request is a 404) before the CRD's DELETED event
      // comes. The watch in "elsewhere" saw no event: it ends "very short" (under a second old), which is no news either.
      const notFound = api.faults.add({
        match: { path: /\/pears/ },
        times: Infinity,
        fault: { type: 'status', code: 404, reason: 'NotFound', message: 'the server could not find the requested resource' },
      });
      api.faults.add({ live: true, match: { path: /\/pears/ }, fault: { type: 'closeWatch' } });
      await api.waitForRequest((r) => r.path.includes('/pears') && r.status === 404);
      api.delete('customresourcedefinitions', undefined, 'pears.fresh.example.com');
      const rediscovery = api.nextRequest((r) => r.path === '/apis');
      await until(() => t.err.filter((l) => l.startsWith('- stopped watching')).length === 2);
      // By path: once the resource is gone, the log cannot name it.
      const pears = () => api.requests.filter((r) => r.path.includes('/pears'));
      const atStop = pears().length;
      // A bounded wait: discovery runs again (it must not start pears anew), then a later, unrelated event arrives.
      await rediscovery;
      api.create('configmaps', { metadata: { name: 'later', namespace: 'orchard' } });
      await until(() => t.out.some((l) => l.endsWith('ADDED   configmaps orchard/later')));

      expect(t.err.filter((l) => /^[-+!]/.test(l))).toEqual([
        '+ watching pears.fresh.example.com in orchard (new resource)',
        '+ watching pears.fresh.example.com in elsewhere (new resource)',
        '- stopped watching pears.fresh.example.com in orchard: customresourcedefinition pears.fresh.example.com was deleted',
        '- stopped watching pears.fresh.example.com in elsewhere: customresourcedefinition pears.fresh.example.com was deleted',
      ]);
      expect(pears().length).toBe(atStop);
      expect(pears().filter((r) => r.status === 404)).toHaveLength(notFound.hits);
      expect(
        pears()
          .filter((r) => r.watch && r.status === 200)
          .every((r) => r.ended !== undefined),
      ).toBe(true);
    } finally {
      w.stop();
    }
  });

  it('--all leaves out a resource it may not list, and leaves it alone: no retries in the background', async () => {
    const forbidden = api.faults.add({
      match: { resource: 'leases' },
      times: Infinity,
      fault: { type: 'status', code: 403, reason: 'Forbidden', message: 'leases.coordination.k8s.io is forbidden' },
    });
    const t = collector();
    const w = await watchCommand(api.kubeConfig, { resources: [], all: true, output: 'pretty' }, t.terminal);
    try {
      await w.synced;
      expect(t.err.filter((l) => l.startsWith('!'))).toEqual([
        '! not watching leases.coordination.k8s.io: forbidden (403): leases.coordination.k8s.io is forbidden',
      ]);
      const leases = () => api.requests.filter((r) => r.resource === 'leases').length;
      const atSync = leases();
      // A bounded wait longer than an informer's first retry (0.8–1.6 s): configmaps' watch ends at once (a very short
      // watch), then fails, and comes back after two backoffs (at least 0.8 + 1.6 s); a leases informer still running
      // would have retried by then.
      const from = api.requests.length;
      api.faults.add({
        match: { resource: 'configmaps', watch: true },
        fault: { type: 'status', code: 500, reason: 'InternalError', message: 'try later' },
      });
      api.faults.add({ live: true, match: { resource: 'configmaps' }, fault: { type: 'closeWatch' } });
      await api.waitForRequest((r) => r.seq > from && r.resource === 'configmaps' && r.status === 200, 10_000);
      expect(leases()).toBe(atSync);
      api.create('configmaps', { metadata: { name: 'still-here', namespace: 'default' } });
      await until(() => t.out.some((l) => l.endsWith('ADDED   configmaps default/still-here')));
    } finally {
      w.stop();
      forbidden.remove();
    }
  });

  it('--all: a group version discovery cannot read is reported once, as that group version, however often discovery runs again', async () => {
    const unreadable = api.faults.add({
      match: { path: '/apis/stable.example.com/v1' },
      times: Infinity,
      fault: { type: 'status', code: 503, reason: 'ServiceUnavailable', message: 'the server is currently unable to handle the request' },
    });
    const t = collector();
    const w = await watchCommand(api.kubeConfig, { resources: [], all: true, output: 'pretty' }, t.terminal);
    try {
      await w.synced;
      // Two CRDs installed: two more discoveries, each failing to read stable.example.com/v1.
      for (const plural of ['pears', 'plums']) {
        const before = api.requests.filter((r) => r.path === '/apis/stable.example.com/v1').length;
        api.registerCustomResource({ group: 'other.example.com', version: 'v1', plural, kind: plural === 'pears' ? 'Pear' : 'Plum' });
        await until(() => t.err.includes(`+ watching ${plural}.other.example.com (new resource)`));
        expect(api.requests.filter((r) => r.path === '/apis/stable.example.com/v1').length).toBeGreaterThan(before);
      }
      expect(t.err.filter((l) => l.startsWith('!'))).toEqual([
        expect.stringMatching(
          /^! discovery of stable\.example\.com\/v1 failed: ServerError: .*unable to handle the request.* \(what is watched of it goes on; resources it adds wait until discovery reads it\)$/,
        ),
      ]);
    } finally {
      w.stop();
      unreadable.remove();
    }
  });

  it('posts each event to --webhook, and reports failed deliveries without blocking the watch', async () => {
    const received: unknown[] = [];
    let failNext = 1;
    const hook = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (failNext-- > 0) {
          res.writeHead(500).end();
          return;
        }
        received.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/events`;
    const t = collector();
    const target = parseSinkUrl('--webhook', url);
    if (!target.ok) throw new Error(target.error);
    const sink = webhookSink(target.target, (l) => t.err.push(`! ${l}`), { backoff: { initialMs: 10 } });
    const w = await watchCommand(api.kubeConfig, { resources: ['configmaps'], all: false, output: 'pretty', sinks: [sink] }, t.terminal);
    try {
      await w.synced;
      api.create('configmaps', { metadata: { name: 'a', namespace: 'default' } });
      api.create('configmaps', { metadata: { name: 'b', namespace: 'default' } });
      await until(() => received.length >= 2);
      expect(received.map((r) => (r as EventRecord).name)).toEqual(['a', 'b']);
      expect(t.err).toEqual([
        expect.stringMatching(/^synced/),
        expect.stringMatching(/^synced/),
        `! webhook ${url.replace('/events', '')}: 1 failed attempt (last: HTTP 500); ${t.err.at(-1)?.slice(-9)}`,
      ]);
      expect(t.out).toHaveLength(2);
    } finally {
      w.stop();
      expect(await sink.close(Date.now() + 1000)).toEqual({ delivered: 2, dropped: 0, rejected: 0, unsent: 0 });
      hook.closeAllConnections();
      await new Promise((r) => hook.close(r));
    }
  });

  it('a hostile object costs at most one line: control characters are stripped, a deep object is diffed to a depth cap', async () => {
    const t = collector();
    api.registerCustomResource({ group: 'hostile.example.com', version: 'v1', plural: 'deeps', kind: 'Deep' });
    const w = await watchCommand(
      api.kubeConfig,
      { resources: ['configmaps', 'deeps'], all: false, output: 'pretty', namespaces: ['evil'] },
      t.terminal,
    );
    try {
      await w.synced;
      api.create('configmaps', { metadata: { name: 'cm', namespace: 'evil', labels: { a: 'b' } }, data: { title: 'ok' } });
      api.patch('configmaps', 'evil', 'cm', { data: { title: '\x1b]0;pwned\x07\x1b[2J\u009b31m\u202eevil' } });
      // As deep as the emulator itself can serialise (V8's JSON.stringify stops near 4,500 levels); diff.spec goes to 100,000.
      const deep = (n: number, leaf: unknown) => {
        let o: unknown = leaf;
        for (let i = 0; i < n; i++) o = { d: o };
        return o;
      };
      api.create('deeps.hostile.example.com', {
        apiVersion: 'hostile.example.com/v1',
        kind: 'Deep',
        metadata: { name: 'deep', namespace: 'evil' },
        spec: deep(2000, 1),
      });
      api.update('deeps.hostile.example.com', { ...api.get('deeps.hostile.example.com', 'evil', 'deep')!, spec: deep(2000, 2) });
      await until(() => t.out.some((l) => l.includes('UPDATED deeps')) && t.out.some((l) => l.includes('UPDATED configmaps')));
      const cm = t.out.find((l) => l.includes('UPDATED configmaps'))!;
      expect(cm).toMatch(/ UPDATED configmaps evil\/cm  data\.title: "ok" → "/);
      expect(cm).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202e]/);
      expect(t.out.find((l) => l.includes('UPDATED deeps'))).toMatch(
        /spec(\.d)+: "<nested deeper than 64 levels>" → "<nested deeper than 64 levels>"$/,
      );
      expect(t.err.filter((l) => l.startsWith('!'))).toEqual([]);
    } finally {
      w.stop();
    }
  });

  it('says clearly when a resource is unknown or the server unreachable', async () => {
    const t = collector();
    await expect(
      watchCommand(api.kubeConfig, { resources: ['nothing-like-it'], all: false, output: 'pretty' }, t.terminal),
    ).rejects.toThrow(
      new UsageError(
        `the server doesn't have a resource type "nothing-like-it" (a custom resource is served once its CRD is installed; \`kubectl api-resources\` lists what the server has)`,
      ),
    );
    // One name close (by plural, singular, kind, short name or plural.group, as discovery gives them): a hint kubectl does not give.
    const typos: [string, string][] = [
      ['podz', 'pods'],
      ['deploymnets', 'deployments'],
      ['deploymnets.apps', 'deployments.apps'],
      ['configmpa', 'configmap'],
      ['ConfigMpa', 'configmap'], // case aside, the singular comes first
    ];
    for (const [typo, meant] of typos)
      await expect(watchCommand(api.kubeConfig, { resources: ['pods', typo], all: false, output: 'pretty' }, t.terminal)).rejects.toThrow(
        new UsageError(`the server doesn't have a resource type "${typo}"; did you mean ${meant}?`),
      );
    api.registerCustomResource({ group: 'a.example.com', version: 'v1', plural: 'certificates', kind: 'Certificate' });
    api.registerCustomResource({ group: 'b.example.com', version: 'v1', plural: 'certificates', kind: 'Certificate' });
    await expect(watchCommand(api.kubeConfig, { resources: ['certificates'], all: false, output: 'pretty' }, t.terminal)).rejects.toThrow(
      new UsageError(
        '"certificates" is ambiguous: it could be certificates.v1.a.example.com, certificates.v1.b.example.com; name the group (e.g. certificates.a.example.com)',
      ),
    );
    const dead = new KubeConfig();
    dead.loadFromOptions({
      clusters: [{ name: 'c', server: 'http://127.0.0.1:1', skipTLSVerify: true }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    await expect(watchCommand(dead, { resources: ['pods'], all: true, output: 'pretty' }, t.terminal)).rejects.toThrow(
      /cannot reach the API server at http:\/\/127\.0\.0\.1:1/,
    );
  });

  it('says clearly when credentials are rejected', async () => {
    const guarded = await startApiServer({ token: 'right' });
    try {
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'c', server: guarded.url, skipTLSVerify: true }],
        users: [{ name: 'u', token: 'wrong' }],
        contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
        currentContext: 'x',
      });
      await expect(watchCommand(kc, { resources: ['pods'], all: false, output: 'pretty' }, collector().terminal)).rejects.toThrow(
        /rejected our credentials \(401 Unauthorized\): check the token or certificate in the kubeconfig$/,
      );
    } finally {
      await guarded.close();
    }
  });

  it.each([
    [
      'an exec plugin',
      (plugin: string) => ({
        exec: { apiVersion: 'client.authentication.k8s.io/v1', command: process.execPath, args: [plugin], interactiveMode: 'Never' },
      }),
      `the exec plugin ${process.execPath}`,
    ],
    ['a token file', (file: string) => ({ authProvider: { name: 'tokenFile', config: { tokenFile: file } } }), 'the token file FILE'],
  ])('a 401 to a credential from %s names it (not the kubeconfig’s token or certificate)', async (_what, userOf, named) => {
    const guarded = await startApiServer({ token: 'right' });
    const dir = mkdtempSync(join(tmpdir(), 'rx-informer-401-'));
    try {
      const file = join(dir, 'credential');
      // The plugin's credential, or the token file's: both wrong.
      writeFileSync(
        file,
        named.startsWith('the exec')
          ? `process.stdout.write(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: 'wrong' } }))`
          : 'wrong',
      );
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'c', server: guarded.url, skipTLSVerify: true }],
        users: [{ name: 'u', ...userOf(file) } as never],
        contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
        currentContext: 'x',
      });
      const error = await watchCommand(kc, { resources: ['pods'], all: false, output: 'pretty' }, collector().terminal).then(
        () => undefined,
        (e: Error) => e.message,
      );
      expect(error).toMatch(/rejected our credentials \(401 Unauthorized\): check /);
      expect(error?.replace(/^.*: check /, '')).toBe(named.replace('FILE', file));
    } finally {
      await guarded.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
