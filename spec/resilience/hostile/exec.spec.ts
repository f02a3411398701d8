/**
 * Hostile exec credential plugins (issue #31): endless stdout, 300 MiB of stderr, a plugin that hangs,
 * one that hangs through a shell's child, and plugins that print their credential where an error could
 * quote it. Each ends in a typed error whose message holds no token; the plugin's whole process group
 * is gone afterwards (`process.kill(-pgid, 0)` throws ESRCH); reading stops at the limit, so memory
 * stays bounded. Plugins are small scripts written to a temporary directory; the server is never
 * reached (nothing listens on the address), only the credentials are asked for.
 */
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { InformerError } from '../../../src/index.ts';
import { httpListWatch } from '../../../src/pipeline.ts';
import { DEFAULT_REQUEST_TIMEOUT_MS } from '../../../src/1-transport/httpTransport.ts';
import { EXEC_MAX_STDERR_BYTES, EXEC_MAX_STDOUT_BYTES } from '../../../src/1-transport/http/execCredential.ts';
import { EXEC_EXIT_GRACE_MS } from '../../../src/1-transport/http/execPlugin.ts';
import { EXEC_RUN_TIMEOUT_MS } from '../../../src/1-transport/http/execAuth.ts';
import { MiB, retainedBytes } from './memory.ts';
import { BUDGET, failure, target } from './support.ts';

const NODE = new URL('../../../node_modules/.bin/node', import.meta.url).pathname;
const ORPHAN_CHILD = new URL('./execOrphan.child.mjs', import.meta.url).pathname;
const TOKEN = 'tok-hostile-5e3c1f0a9b7d4e2f8a6c';
const JWT = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2EifQ.c2lnbmF0dXJlLXNpZ25hdHVyZQ';
const CREDENTIAL = JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: TOKEN } });

const realSetTimeout = globalThis.setTimeout;
/** Polls with the real clock (some tests fake setTimeout for the transport's timer); a bound, not an oracle. */
async function waitFor(what: string, check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => realSetTimeout(resolve, 5));
  }
}
let dir: string | undefined;
/** Plugins (and the children they named) started by a test, killed after it if the transport did not. */
const started: number[] = [];
afterEach(() => {
  vi.useRealTimers();
  // Only if a test failed before the transport killed them.
  for (const pid of started.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** Whether a process runs: a killed one nobody has reaped yet (a zombie, `Z` in `ps`) does not. */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const state = spawnSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' }).stdout.trim();
  return state !== '' && !state.startsWith('Z');
}

function tempDir(): string {
  dir ??= mkdtempSync(join(tmpdir(), 'rx-informer-hostile-exec-'));
  return dir;
}

/** A kubeconfig whose exec plugin is `command args` (PLUGIN_DIR in its environment), for a server nobody listens on. */
function pluginKubeConfig(command: string, args: string[]): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'http://127.0.0.1:1', skipTLSVerify: true }],
    users: [
      {
        name: 'u',
        exec: {
          apiVersion: 'client.authentication.k8s.io/v1',
          command,
          args,
          env: [{ name: 'PLUGIN_DIR', value: tempDir() }],
          interactiveMode: 'Never',
        },
      },
    ],
    contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
    currentContext: 'c',
  });
  return kc;
}

/** A Node plugin: `script` runs after it wrote its pid and process group to PLUGIN_DIR/pid. */
function nodePlugin(script: string): KubeConfig {
  const file = join(tempDir(), 'plugin.mjs');
  writeFileSync(
    file,
    `import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
     const dir = process.env.PLUGIN_DIR;
     appendFileSync(dir + '/runs', 'x');
     const pgrp = existsSync('/proc/self/stat') ? readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')[2] : String(process.pid);
     writeFileSync(dir + '/pid', process.pid + ' ' + pgrp);
     ${script}`,
  );
  return pluginKubeConfig(process.execPath, [file]);
}

/** The plugin's pid and process group (and a shell plugin's child), once it has started. */
async function pluginStarted(): Promise<{ pid: number; pgid: number; child: number }> {
  const file = join(tempDir(), 'pid');
  await waitFor('the plugin to start', () => existsSync(file) && readFileSync(file, 'utf8').trim().split(' ').length >= 2);
  const [pid, pgid, child] = readFileSync(file, 'utf8').trim().split(' ').map(Number) as [number, number, number | undefined];
  started.push(pid, ...(child === undefined ? [] : [child]));
  return { pid, pgid, child: child ?? NaN };
}

/** No process of the group is left: a zombie still counts until it is reaped, so this polls (real time). */
function groupGone(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** The process is gone, or a zombie (killed, not yet reaped by its new parent). */
function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z') ?? false;
  } catch {
    return true;
  }
}

function expectNoSecret(text: string): void {
  for (const secret of [TOKEN, JWT, 'PRIVATE KEY-----\nMIIE', 'MIIEsecretkeymaterial']) expect(text).not.toContain(secret);
}

describe('hostile exec plugins: output bounded, process group killed, no credential in any message', () => {
  it('endless stdout: CredentialPlugin at the 1 MiB limit, reading stops, the group is killed, memory bounded', async () => {
    expect(EXEC_MAX_STDOUT_BYTES).toBe(MiB);
    const kc = nodePlugin(
      `const chunk = Buffer.alloc(64 * 1024, '{"token":"${TOKEN}"}');
       const write = () => { while (process.stdout.write(chunk)); process.stdout.once('drain', write); };
       write();`,
    );
    const before = retainedBytes();
    const error = await failure(httpListWatch(kc, target).list({}));
    const { pid, pgid } = await pluginStarted();
    expect(pgid).toBe(pid); // a process group of its own
    expect([error.reason, error.phase]).toEqual(['CredentialPlugin', 'config']);
    expect(error.message).toBe(`exec plugin ${process.execPath}: its stdout passed the 1 MiB limit; stopped reading and killed it`);
    expectNoSecret(error.message);
    await waitFor('the group to be gone', () => groupGone(pgid));
    expect(retainedBytes() - before).toBeLessThan(BUDGET);
  });

  it('300 MiB of stderr quoting its own token: CredentialPlugin at the 1 MiB limit, scrubbed, the group killed, memory bounded', async () => {
    expect(EXEC_MAX_STDERR_BYTES).toBe(MiB);
    const line = `debug: using token ${TOKEN} (Authorization: Bearer ${TOKEN}) and ${JWT}\n`;
    const kc = nodePlugin(
      `process.stdout.write(${JSON.stringify(CREDENTIAL)});
       const chunk = Buffer.from(${JSON.stringify(line)}.repeat(Math.ceil(65536 / ${line.length})));
       let left = 300 * 1024 * 1024;
       const write = () => {
         while (left > 0) { left -= chunk.length; if (!process.stderr.write(chunk)) return void process.stderr.once('drain', write); }
         writeFileSync(dir + '/done', 'all of it');
       };
       write();`,
    );
    const before = retainedBytes();
    const error = await failure(httpListWatch(kc, target).list({}));
    const { pgid } = await pluginStarted();
    expect(error.reason).toBe('CredentialPlugin');
    expect(error.message).toMatch(
      /^exec plugin \S+: its stderr passed the 1 MiB limit; stopped reading and killed it: …( \| debug: using token <redacted> \(Authorization: <redacted>\) and <redacted>)+$/,
    );
    expect(error.message.length).toBeLessThan(1200);
    expectNoSecret(error.message);
    await waitFor('the group to be gone', () => groupGone(pgid));
    expect(existsSync(join(tempDir(), 'done'))).toBe(false); // killed long before it wrote everything
    expect(retainedBytes() - before).toBeLessThan(BUDGET);
  });

  it(`a hung plugin: Timeout naming it at the default 30 s (not before); it runs on, alone, until its own ${EXEC_RUN_TIMEOUT_MS / 1000} s, then its group is gone`, async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const kc = nodePlugin('setInterval(() => {}, 1 << 30);');
    let error: InformerError | undefined;
    httpListWatch(kc, target)
      .list({})
      .subscribe({ error: (e: InformerError) => (error = e) });
    const { pid, pgid } = await pluginStarted();
    expect(pgid).toBe(pid);
    vi.advanceTimersByTime(DEFAULT_REQUEST_TIMEOUT_MS - 1);
    expect(error).toBeUndefined();
    vi.advanceTimersByTime(1);
    expect([error?.reason, error?.message]).toEqual([
      'Timeout',
      `list /api/v1/namespaces/default/configmaps: no response headers within 30000 ms (waiting for: credentials from exec plugin ${process.execPath})`,
    ]);
    // Left alone, the run holds no handle that keeps the process alive (its deadline timer is unref'd too).
    const held = () => process.getActiveResourcesInfo().includes('ProcessWrap');
    await waitFor('the run to be let go', () => !held());
    // A retry just before the deadline joins the run, and hears how it ended.
    vi.advanceTimersByTime(EXEC_RUN_TIMEOUT_MS - DEFAULT_REQUEST_TIMEOUT_MS - 10_000);
    expect(groupGone(pgid)).toBe(false);
    let retried: InformerError | undefined;
    httpListWatch(kc, target)
      .list({})
      .subscribe({ error: (e: InformerError) => (retried = e) });
    await waitFor('the run to be held again (waited for)', held);
    vi.advanceTimersByTime(10_000 - 1);
    await Promise.resolve();
    expect(retried).toBeUndefined();
    expect(groupGone(pgid)).toBe(false);
    vi.advanceTimersByTime(1);
    await waitFor('the retry to fail', () => retried !== undefined);
    expect([retried?.reason, retried?.message]).toEqual([
      'CredentialPlugin',
      `exec plugin ${process.execPath}: no credential within 180 s (EXEC_RUN_TIMEOUT_MS); killed it`,
    ]);
    await waitFor('the group to be gone', () => groupGone(pgid));
    expect(readFileSync(join(tempDir(), 'runs'), 'utf8')).toBe('x'); // one run for both requests
    // Reaped, so its exit was seen: the run ended before it, so no grace timer is left behind.
    vi.advanceTimersByTime(DEFAULT_REQUEST_TIMEOUT_MS);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a plugin slower than requestTimeoutMs (default 30 s): the request times out, the run goes on, the retry gets its credential (client-go)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    // It answers once told to (PLUGIN_DIR/go): a kubelogin or a cold `aws eks get-token` slower than a Lease's 5 s.
    const kc = nodePlugin(
      `const answer = () => existsSync(dir + '/go') ? process.stdout.write(${JSON.stringify(CREDENTIAL)}) : setTimeout(answer, 5);
       answer();`,
    );
    const errors: InformerError[] = [];
    const list = () =>
      httpListWatch(kc, target)
        .list({})
        .subscribe({ error: (e: InformerError) => void errors.push(e) });
    list();
    const { pid } = await pluginStarted();
    vi.advanceTimersByTime(DEFAULT_REQUEST_TIMEOUT_MS);
    expect(errors.map((e) => e.reason)).toEqual(['Timeout']);
    list(); // the informer's retry, after its backoff: it waits for the same run
    writeFileSync(join(tempDir(), 'go'), '');
    await waitFor('the plugin to answer and exit', () => processGone(pid));
    await waitFor('the retry to reach the server', () => errors.length === 2);
    // The credential read: the request went on to the server (nobody listens there), not a Timeout on credentials.
    expect(errors.map((e) => e.reason)).toEqual(['Timeout', 'NetworkError']);
    list(); // and the next one finds it cached
    await waitFor('the third request to reach the server', () => errors.length === 3);
    expect(errors.map((e) => e.reason)).toEqual(['Timeout', 'NetworkError', 'NetworkError']);
    expect(readFileSync(join(tempDir(), 'runs'), 'utf8')).toBe('x'); // one run: the timeout did not kill it
  });

  it(`a plugin hung in a shell’s child (sh -c "sleep 1000"): the shell and its child are killed at the run's ${EXEC_RUN_TIMEOUT_MS / 1000} s`, async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const script = join(tempDir(), 'plugin.sh');
    // The shell records itself and its child, then waits for it: killing the shell alone would orphan `sleep`.
    writeFileSync(script, 'sleep 1000 &\nchild=$!\necho "$$ $$ $child" > "$PLUGIN_DIR/pid"\nwait $child\n');
    const kc = pluginKubeConfig('sh', [script]);
    let error: InformerError | undefined;
    httpListWatch(kc, target, { requestTimeoutMs: 250 }) // the kill mechanics; the default is the test above
      .list({})
      .subscribe({ error: (e: InformerError) => (error = e) });
    const { pgid, child: sleepPid } = await pluginStarted();
    vi.advanceTimersByTime(250);
    expect(error?.reason).toBe('Timeout');
    expect(processGone(sleepPid)).toBe(false);
    vi.advanceTimersByTime(EXEC_RUN_TIMEOUT_MS - 250);
    await waitFor('the shell’s child to be killed', () => processGone(sleepPid));
    await waitFor('the group to be gone', () => groupGone(pgid));
  });

  it(`a plugin that exits 0 leaving a child of its own session on stdout (setsid sleep &): its credential is used ${EXEC_EXIT_GRACE_MS} ms after it exits`, async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const script = join(tempDir(), 'plugin.sh');
    // The child escapes the group kill (a session of its own) and keeps the plugin's stdout open for 40 s.
    // It names itself once in its session (so that the group kill at the plugin's exit cannot reach it).
    writeFileSync(
      script,
      `echo '${CREDENTIAL}'\nsetsid sh -c 'echo $$ > "$PLUGIN_DIR/orphan"; exec sleep 40' &\n` +
        `while [ ! -s "$PLUGIN_DIR/orphan" ]; do :; done\necho "$$ $$ $(cat "$PLUGIN_DIR/orphan")" > "$PLUGIN_DIR/pid"\nexit 0\n`,
    );
    let error: InformerError | undefined;
    httpListWatch(pluginKubeConfig('sh', [script]), target)
      .list({})
      .subscribe({ error: (e: InformerError) => (error = e) });
    const { pid, child: orphan } = await pluginStarted();
    await waitFor('the plugin to exit', () => processGone(pid));
    expect(processGone(orphan)).toBe(false);
    await waitFor('its exit to be seen', () => vi.getTimerCount() === 3, 5_000); // the request's timer, the run's deadline, the grace
    vi.advanceTimersByTime(EXEC_EXIT_GRACE_MS - 1);
    expect(error).toBeUndefined();
    vi.advanceTimersByTime(1);
    // The credential read: the request goes on to the server (nobody listens there), not a Timeout on credentials.
    await waitFor('the request to fail', () => error !== undefined, 5_000);
    expect(error?.reason).toBe('NetworkError');
  });

  it('requests waiting for one hung plugin share its run, which outlives them (not killed when the last goes away) until its deadline', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const kc = nodePlugin('setInterval(() => {}, 1 << 30);');
    const kills = vi.spyOn(process, 'kill');
    try {
      const first = httpListWatch(kc, target)
        .list({})
        .subscribe({ error: () => undefined });
      const second = httpListWatch(kc, target)
        .list({})
        .subscribe({ error: () => undefined });
      const { pgid } = await pluginStarted();
      const sigkills = () => kills.mock.calls.filter(([pid, signal]) => pid === -pgid && signal === 'SIGKILL').length;
      first.unsubscribe();
      second.unsubscribe();
      expect(sigkills()).toBe(0); // the run goes on, for the next request
      vi.advanceTimersByTime(EXEC_RUN_TIMEOUT_MS);
      expect(sigkills()).toBe(1);
      await waitFor('the group to be gone', () => groupGone(pgid));
      expect(readFileSync(join(tempDir(), 'runs'), 'utf8')).toBe('x'); // one run, not two
    } finally {
      kills.mockRestore();
    }
  });

  const leaks: { name: string; script: string; message: RegExp }[] = [
    {
      name: 'output that is not JSON, holding the token',
      script: `process.stdout.write('token: ${TOKEN} {"token":"${TOKEN}"');`,
      message: /: its output is not JSON \(\d+ bytes; not shown: it may hold a credential\)$/,
    },
    {
      name: 'the wrong apiVersion',
      script: `process.stdout.write(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1beta1', kind: 'ExecCredential', status: { token: '${TOKEN}' } }));`,
      message: /: it is configured to use client.authentication.k8s.io\/v1, and returned apiVersion client.authentication.k8s.io\/v1beta1$/,
    },
    {
      name: 'a token where the apiVersion goes',
      script: `process.stdout.write(JSON.stringify({ apiVersion: '${TOKEN}', kind: 'ExecCredential' }));`,
      message: /: it is configured to use client.authentication.k8s.io\/v1, and returned another apiVersion$/,
    },
    {
      name: 'the wrong kind',
      script: `process.stdout.write(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: '${TOKEN}' }));`,
      message: /: its output is not an ExecCredential \(another kind\)$/,
    },
    {
      name: 'no status',
      script: `process.stdout.write(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', spec: { token: '${TOKEN}' } }));`,
      message: /: it returned no status$/,
    },
    {
      name: 'a non-zero exit after printing its credential and quoting it on stderr',
      script: `process.stdout.write(${JSON.stringify(CREDENTIAL)});
        process.stderr.write('got ${TOKEN}\\nid_token=${JWT}\\n-----BEGIN RSA PRIVATE KEY-----\\nMIIEsecretkeymaterial\\n-----END RSA PRIVATE KEY-----\\nrefused\\n');
        process.exit(3);`,
      message: /: failed with exit code 3: got <redacted> \| id_token=<redacted> \| <redacted> \| refused$/,
    },
  ];
  for (const leak of leaks)
    it(`${leak.name}: a CredentialPlugin error that quotes no credential`, async () => {
      const error = await failure(httpListWatch(nodePlugin(leak.script), target).list({}));
      expect(error.reason).toBe('CredentialPlugin');
      expect(error.message).toMatch(leak.message);
      expectNoSecret(error.message);
      expectNoSecret(String((error as { cause?: unknown }).cause ?? ''));
    });

  it('secrets its kubeconfig hands it (args, env values) are scrubbed from what it says (audit43)', async () => {
    const [arg, env, pin] = ['ARGPW-audit43-hunter', 'ENVPIN-audit43-plugh', 'PIN-audit43-xyzzy'];
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: 'http://127.0.0.1:1', skipTLSVerify: true }],
      users: [
        {
          name: 'u',
          exec: {
            apiVersion: 'client.authentication.k8s.io/v1',
            command: 'sh',
            args: ['-c', 'echo "login failed: $* (pin $LOGIN_PIN)" >&2; exit 1', '_', '--user', 'bob', '--password', arg, `--pin=${pin}`],
            env: [{ name: 'LOGIN_PIN', value: env }],
            interactiveMode: 'Never',
          },
        } as never,
      ],
      contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
      currentContext: 'c',
    });
    const error = await failure(httpListWatch(kc, target).list({}));
    expect([error.reason, error.message]).toEqual([
      'CredentialPlugin',
      // A flag's name stays (it says what was asked); `--pin=…` goes whole.
      'exec plugin sh: failed with exit code 1: login failed: --user bob --password <redacted> <redacted> (pin <redacted>)',
    ]);
  });

  it('a plugin no request waits for any more is killed when the process exits, not left running without a parent (audit46)', async () => {
    // In a child process: its list times out at 500 ms, then Node ends by itself with the plugin still running.
    const pidFile = join(tempDir(), 'plugin.pid');
    const exit = await new Promise<{ error: Error | null; stdout: string }>((resolve) =>
      execFile(NODE, ['--conditions=rx-informer-source', ORPHAN_CHILD, pidFile], { timeout: 30_000 }, (error, stdout) =>
        resolve({ error, stdout }),
      ),
    );
    expect(exit.error).toBeNull();
    expect(exit.stdout).toMatch(/^list failed: .*waiting for: credentials from exec plugin/);
    const pid = Number(readFileSync(pidFile, 'utf8'));
    const alive = running(pid);
    if (alive) process.kill(-pid, 'SIGKILL'); // leave nothing behind if it failed
    expect(alive).toBe(false);
  }, 40_000);

  it('a plugin that is not installed: CredentialPlugin, not found, with the install hint', async () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: 'http://127.0.0.1:1', skipTLSVerify: true }],
      users: [
        {
          name: 'u',
          exec: {
            apiVersion: 'client.authentication.k8s.io/v1beta1',
            command: 'rx-informer-no-such-plugin',
            installHint: 'install it with: brew install rx-informer-no-such-plugin',
          },
        },
      ],
      contexts: [{ name: 'c', cluster: 'c', user: 'u' }],
      currentContext: 'c',
    });
    const error = await failure(httpListWatch(kc, target).list({}));
    expect([error.reason, error.message]).toEqual([
      'CredentialPlugin',
      'exec plugin rx-informer-no-such-plugin: executable not found (install it with: brew install rx-informer-no-such-plugin)',
    ]);
  });
});
