/**
 * Exec credential plugins against the emulator, through a real KubeConfig: what the plugin is given
 * (args, env, KUBERNETES_EXEC_INFO with provideClusterInfo), what it may hand back (a token, a client
 * certificate and key), how long a credential is used (expirationTimestamp), one run shared by the
 * requests that wait for it, and the kubeconfig's own credentials winning over the plugin (client-go).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { ConfigMap } from '../../src/index.ts';
import { httpListWatch } from '../../src/pipeline.ts';
import { startApiServer, TEST_TLS_CERT, TEST_TLS_CERT_B, TEST_TLS_KEY, TEST_TLS_KEY_B, type ApiServer } from 'rx-informer-emulator';

const V1 = 'client.authentication.k8s.io/v1';
let api: ApiServer | undefined;
let dir: string | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

function tempDir(): string {
  dir ??= mkdtempSync(join(tmpdir(), 'rx-informer-exec-auth-'));
  return dir;
}

/**
 * A kubeconfig for `server` whose user's exec plugin is a Node script: it appends one line to
 * PLUGIN_DIR/runs per run (what it was given), then runs `script`.
 */
function withPlugin(
  server: string,
  script: string,
  exec: Record<string, unknown> = {},
  user: Record<string, unknown> = {},
  cluster: Record<string, unknown> = {},
) {
  const file = join(tempDir(), 'plugin.mjs');
  writeFileSync(
    file,
    `import { appendFileSync } from 'node:fs';
     const dir = process.env.PLUGIN_DIR;
     appendFileSync(dir + '/runs', JSON.stringify({ args: process.argv.slice(2), x: process.env.X_PLUGIN, info: JSON.parse(process.env.KUBERNETES_EXEC_INFO) }) + '\\n');
     const print = (status) => process.stdout.write(JSON.stringify({ apiVersion: '${V1}', kind: 'ExecCredential', status }));
     ${script}`,
  );
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server, skipTLSVerify: false, ...cluster }],
    users: [
      {
        name: 'u',
        exec: {
          apiVersion: V1,
          command: process.execPath,
          args: [file],
          env: [{ name: 'PLUGIN_DIR', value: tempDir() }],
          interactiveMode: 'Never',
          ...exec,
        },
        ...user,
      },
    ],
    contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
    currentContext: 'c',
  });
  return kc;
}

/** What each run of the plugin was given. */
function runs(): { args: string[]; x?: string; info: { kind: string; apiVersion: string; spec: Record<string, unknown> } }[] {
  const file = join(tempDir(), 'runs');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as ReturnType<typeof runs>[number]);
}

const list = (kc: KubeConfig) => firstValueFrom(httpListWatch(kc, { resource: ConfigMap }).list({}));

describe('exec credential plugins (client.authentication.k8s.io)', () => {
  it('are given their args and env, and KUBERNETES_EXEC_INFO: interactive false, the cluster with provideClusterInfo', async () => {
    api = await startApiServer({ tls: true, token: 'tok-1' });
    const caData = Buffer.from(api.caPem!).toString('base64');
    const kc = withPlugin(
      api.url,
      `print({ token: 'tok-1' });`,
      {
        args: [join(tempDir(), 'plugin.mjs'), '--region', 'eu'],
        env: [
          { name: 'PLUGIN_DIR', value: tempDir() },
          { name: 'X_PLUGIN', value: 'x-value' },
        ],
        provideClusterInfo: true,
      },
      {},
      { caData },
    );
    await list(kc);
    expect(runs()).toEqual([
      {
        args: ['--region', 'eu'],
        x: 'x-value',
        info: {
          kind: 'ExecCredential',
          apiVersion: V1,
          spec: { cluster: { server: api.url, 'certificate-authority-data': caData }, interactive: false },
        },
      },
    ]);
  });

  it('without provideClusterInfo the plugin is told nothing of the cluster', async () => {
    api = await startApiServer({ token: 'tok-1' });
    await list(withPlugin(api.url, `print({ token: 'tok-1' });`, {}, {}, { skipTLSVerify: true }));
    expect(runs().map((r) => r.info)).toEqual([{ kind: 'ExecCredential', apiVersion: V1, spec: { interactive: false } }]);
  });

  it('a credential is used until its expirationTimestamp has passed, then the plugin runs again', async () => {
    api = await startApiServer({ token: 'tok-1' });
    const later = new Date(Date.now() + 3600_000).toISOString();
    const fresh = withPlugin(api.url, `print({ token: 'tok-1', expirationTimestamp: '${later}' });`, {}, {}, { skipTLSVerify: true });
    for (let i = 0; i < 3; i++) await list(fresh);
    expect(runs()).toHaveLength(1);

    rmSync(join(tempDir(), 'runs'));
    const expired = withPlugin(
      api.url,
      `print({ token: 'tok-1', expirationTimestamp: '2020-01-01T00:00:00Z' });`,
      {},
      {},
      { skipTLSVerify: true },
    );
    for (let i = 0; i < 3; i++) await list(expired);
    expect(runs()).toHaveLength(3);
  });

  it('requests that need a credential while the plugin runs wait for that one run', async () => {
    api = await startApiServer({ token: 'tok-1' });
    // Answers only once PLUGIN_DIR/go exists, so that every request is waiting when it does.
    const kc = withPlugin(
      api.url,
      `import { existsSync } from 'node:fs';
       const wait = () => (existsSync(dir + '/go') ? print({ token: 'tok-1' }) : setTimeout(wait, 5));
       wait();`,
      {},
      {},
      { skipTLSVerify: true },
    );
    const lists = Array.from({ length: 4 }, () => list(kc));
    const deadline = Date.now() + 20_000;
    while (runs().length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    writeFileSync(join(tempDir(), 'go'), '');
    await Promise.all(lists);
    expect(runs()).toHaveLength(1);
    expect(api.requests.filter((r) => r.status === 200)).toHaveLength(4);
  });

  it('a client certificate and key from the plugin are used for TLS', async () => {
    api = await startApiServer({ tls: { cert: TEST_TLS_CERT, key: TEST_TLS_KEY, clientCa: TEST_TLS_CERT_B } });
    const kc = withPlugin(
      api.url,
      `print({ clientCertificateData: ${JSON.stringify(TEST_TLS_CERT_B)}, clientKeyData: ${JSON.stringify(TEST_TLS_KEY_B)} });`,
      {},
      {},
      { caData: Buffer.from(TEST_TLS_CERT).toString('base64') },
    );
    const page = await list(kc);
    expect(page.items).toEqual([]);
    expect(runs()).toHaveLength(1);
  });

  it('a token in the kubeconfig wins over the plugin, which is not run (client-go)', async () => {
    api = await startApiServer({ token: 'static' });
    await list(withPlugin(api.url, `print({ token: 'from-plugin' });`, {}, { token: 'static' }, { skipTLSVerify: true }));
    expect(runs()).toEqual([]);
  });
});
