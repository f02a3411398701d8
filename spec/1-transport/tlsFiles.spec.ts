/**
 * The kubeconfig's TLS settings as the transport applies them (src/1-transport/http/credentials.ts, tlsFiles.ts):
 * certificate-authority, client-certificate and client-key files read without blocking the process (a FIFO, a hung
 * mount: client-node read them with readFileSync at every request); a context without a user still gets its
 * cluster's CA, insecure-skip-tls-verify and tls-server-name (kubectl goes on with an empty user); over a proxy-url,
 * a rotated CA file and an exec plugin's client certificate are used (the proxy agent is made per TLS material).
 * Review audit40.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect as netConnect, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { ConfigMap } from '../../src/index.ts';
import { httpListWatch } from '../../src/pipeline.ts';
import { startApiServer, TEST_TLS_CERT, TEST_TLS_CERT_B, TEST_TLS_KEY, TEST_TLS_KEY_B, type ApiServer } from 'rx-informer-emulator';

const NODE = new URL('../../node_modules/.bin/node', import.meta.url).pathname;
const CHILD = new URL('./tlsFifo.child.mjs', import.meta.url).pathname;

let api: ApiServer | undefined;
let proxy: Server | undefined;
let dir: string | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
  proxy?.close();
  proxy = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

function tempDir(): string {
  dir ??= mkdtempSync(join(tmpdir(), 'rx-informer-tls-files-'));
  return dir;
}

/** One list with the KubeConfig: `listed`, or the error's message. */
const list = (kc: KubeConfig, requestTimeoutMs = 5_000) =>
  firstValueFrom(httpListWatch(kc, { resource: ConfigMap }, { requestTimeoutMs }).list({})).then(
    () => 'listed',
    (e: Error) => e.message,
  );

describe('certificate-authority, client-certificate and client-key files are read without blocking the process', () => {
  // In a child process: with readFileSync, a FIFO nobody writes to blocked its event loop for good (no timer of
  // this test could fire), so the child is what hangs, and is killed at the bound below.
  it.each([
    ['certificate-authority', 'ca'],
    ['client-certificate', 'cert'],
  ])(
    'a %s file that is a FIFO: Config, not a regular file; the event loop runs meanwhile',
    async (field, which) => {
      const fifo = join(tempDir(), 'fifo');
      const { stdout, error } = await new Promise<{ stdout: string; error: Error | null }>((resolve) =>
        execFile(NODE, ['--conditions=rx-informer-source', CHILD, fifo, which], { timeout: 30_000 }, (e, out) =>
          resolve({ stdout: out, error: e }),
        ),
      );
      expect(error).toBeNull();
      expect(JSON.parse(stdout)).toEqual({
        said: `Config: cannot read the ${field} file ${fifo}: not a regular file (a fifo)`,
        beating: true,
      });
    },
    40_000,
  );

  it('a CA file rewritten between requests is used by the next one (fstat sees the change)', async () => {
    api = await startApiServer({ tls: true });
    const caFile = join(tempDir(), 'ca.crt');
    writeFileSync(caFile, TEST_TLS_CERT_B); // the wrong CA first
    const kc = kubeConfig({ server: api.url, caFile }, { name: 'u' });
    expect(await list(kc)).toMatch(/not trusted/);
    writeFileSync(caFile, TEST_TLS_CERT);
    expect(await list(kc)).toBe('listed');
  });
});

function kubeConfig(cluster: Record<string, unknown>, user: Record<string, unknown> | undefined, context: Record<string, unknown> = {}) {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', ...cluster } as never],
    users: user ? [user as never] : [],
    contexts: [{ name: 'c', cluster: 'c', ...(user ? { user: 'u' } : {}), ...context } as never],
    currentContext: 'c',
  });
  return kc;
}

describe('a context without a user gets its cluster’s TLS settings (kubectl goes on with an empty user)', () => {
  const ca = Buffer.from(TEST_TLS_CERT).toString('base64');
  it.each([
    ['no user field', {}],
    ['a user name the kubeconfig does not define', { user: 'missing' }],
  ])('%s: the cluster’s CA is trusted', async (_name, context) => {
    api = await startApiServer({ tls: true });
    expect(await list(kubeConfig({ server: api.url, caData: ca }, undefined, context))).toBe('listed');
  });

  it('insecure-skip-tls-verify', async () => {
    api = await startApiServer({ tls: true });
    expect(await list(kubeConfig({ server: api.url, skipTLSVerify: true }, undefined))).toBe('listed');
  });

  it('tls-server-name: the certificate is checked against it', async () => {
    api = await startApiServer({ tls: true });
    expect(await list(kubeConfig({ server: api.url, caData: ca, tlsServerName: 'other.example' }, undefined))).toMatch(
      /does not name the host|ERR_TLS_CERT_ALTNAME_INVALID/,
    );
  });
});

/** A minimal HTTP CONNECT proxy on 127.0.0.1; counts the tunnels it opened. */
async function connectProxy(): Promise<{ url: string; tunnels: () => number }> {
  let tunnels = 0;
  const server = createServer((client) => {
    client.once('data', (head) => {
      const m = /^CONNECT ([^:\s]+):(\d+)/.exec(head.toString('latin1'));
      if (!m) return void client.destroy();
      tunnels++;
      const upstream = netConnect(Number(m[2]), m[1]!, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.pipe(client).pipe(upstream);
      });
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
    });
  });
  proxy = server;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, tunnels: () => tunnels };
}

describe('proxy-url: the proxy agent is made for the TLS material of the request', () => {
  it('a CA file fixed on disk after a request is used by the next one through the proxy', async () => {
    api = await startApiServer({ tls: true });
    const { url, tunnels } = await connectProxy();
    const caFile = join(tempDir(), 'ca.crt');
    writeFileSync(caFile, TEST_TLS_CERT_B);
    const kc = kubeConfig({ server: api.url, caFile, proxyUrl: url }, { name: 'u' });
    expect(await list(kc)).toMatch(/not trusted/);
    writeFileSync(caFile, TEST_TLS_CERT);
    expect(await list(kc)).toBe('listed');
    expect(tunnels()).toBe(2);
  });

  it('an exec plugin’s client certificate is presented through the proxy', async () => {
    api = await startApiServer({ tls: { cert: TEST_TLS_CERT, key: TEST_TLS_KEY, clientCa: TEST_TLS_CERT_B } });
    const { url, tunnels } = await connectProxy();
    const plugin = join(tempDir(), 'plugin.mjs');
    const status = { clientCertificateData: TEST_TLS_CERT_B, clientKeyData: TEST_TLS_KEY_B };
    writeFileSync(
      plugin,
      `process.stdout.write(${JSON.stringify(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status }))});`,
    );
    const exec = { apiVersion: 'client.authentication.k8s.io/v1', command: process.execPath, args: [plugin], interactiveMode: 'Never' };
    const kc = kubeConfig({ server: api.url, caData: Buffer.from(TEST_TLS_CERT).toString('base64'), proxyUrl: url }, { name: 'u', exec });
    expect(await list(kc)).toBe('listed');
    expect(tunnels()).toBe(1);
  });
});
