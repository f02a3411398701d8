/**
 * An exec plugin slower than a request's 30 s (kubelogin waiting on a browser login, an MFA prompt): the CLI waits on,
 * one line per request timed out, until the plugin answers, instead of exiting blaming the server and killing the
 * plugin's half-done login (audit49 F1). At default timeouts: the plugin answers once the test has seen the CLI wait
 * (a file it polls for), so nothing depends on how fast the machine is; the policy's bound is checked in virtual time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TestScheduler } from 'rxjs/testing';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { InformerError } from '../../src/index.ts';
import { explain } from '../../src/cli/explain.ts';
import { slowPlugin, waitingOnPlugin } from '../../src/cli/pluginWait.ts';
import { EXEC_RUN_TIMEOUT_MS } from '../../src/1-transport/http/execAuth.ts';
import { cli, killAll } from './support.ts';

const TOKEN = 'TOKENslowExecPlugin0123456789';
const SERVER = 'https://k8s.example.com:6443';
let api: ApiServer;
let dir: string;

/** The transport's Timeout for a request still waiting for the plugin's credential (requestStep.ts's words and field). */
const waitingForPlugin = (ms = 30_000) =>
  new InformerError('Timeout', `GET /api: no response headers within ${ms} ms (waiting for: credentials from exec plugin /bin/kubelogin)`, {
    phase: 'list',
    execPlugin: '/bin/kubelogin',
  });

beforeAll(async () => {
  api = await startApiServer({ token: TOKEN });
  dir = mkdtempSync(join(tmpdir(), 'rx-informer-slow-exec-'));
  const plugin = join(dir, 'plugin.sh');
  // A login that ends when the user is done: here, when the test creates the file `go`.
  writeFileSync(
    plugin,
    `#!/bin/sh
while [ ! -e ${join(dir, 'go')} ]; do sleep 0.2; done
echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"${TOKEN}"}}'
`,
  );
  chmodSync(plugin, 0o755);
  const kc = JSON.parse(api.kubeConfig.exportConfig()) as { users: { user: unknown }[] };
  kc.users[0]!.user = { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: plugin, interactiveMode: 'Never' } };
  writeFileSync(join(dir, 'config'), JSON.stringify(kc));
});
afterAll(async () => {
  killAll();
  await api.close();
});

describe('the CLI waits for a slow exec plugin', () => {
  it('watch: past the 30 s request timeout it says it waits for the plugin, then syncs once the plugin answers', async () => {
    const run = cli(['watch', 'configmaps', '--kubeconfig', join(dir, 'config')]);
    const line = await run.line('err', /^waiting for the exec plugin /, 90_000);
    expect(line).toMatch(/^waiting for the exec plugin \S+\/plugin\.sh \(still running, \d+ s\)$/);
    writeFileSync(join(dir, 'go'), '');
    await run.line('err', /^synced \d+ resources?, \d+ objects? in \d+ ms/, 60_000);
    expect(run.err.join('\n')).not.toMatch(/did not answer in time|error:/);
    run.proc.kill('SIGTERM');
    await run.exit;
  }, 180_000);
});

describe('waitingOnPlugin (virtual time, default bounds)', () => {
  it('tries again while the plugin runs, one line each, and gives up at the plugin’s own bound (180 s)', () => {
    const said: string[] = [];
    new TestScheduler((a, b) => expect(a).toEqual(b)).run(({ cold, expectObservable }) => {
      // Every attempt times out at the request's 30 s, waiting for the plugin: the one ending at the bound is the caller's.
      const attempt = () => cold('30s #', {}, waitingForPlugin());
      expectObservable(waitingOnPlugin(attempt, (l) => said.push(l))).toBe(`${EXEC_RUN_TIMEOUT_MS / 1000}s #`, {}, waitingForPlugin());
    });
    const seconds = [30, 60, 90, 120, 150];
    expect(said).toEqual(seconds.map((s) => `waiting for the exec plugin /bin/kubelogin (still running, ${s} s)`));
  });

  it('answers once the plugin has (the third request), after two lines; any other error ends it at once', () => {
    const said: string[] = [];
    new TestScheduler((a, b) => expect(a).toEqual(b)).run(({ cold, expectObservable }) => {
      let n = 0;
      const attempt = () => (++n < 3 ? cold('30s #', {}, waitingForPlugin()) : cold('5s (a|)', { a: 'discovered' }));
      expectObservable(waitingOnPlugin(attempt, (l) => said.push(l))).toBe('65s (a|)', { a: 'discovered' });
      const refused = new InformerError('Unauthorized', 'no');
      expectObservable(
        waitingOnPlugin(
          () => cold('1s #', {}, refused),
          (l) => said.push(l),
        ),
      ).toBe('1s #', {}, refused);
    });
    expect(said).toEqual([30, 60].map((s) => `waiting for the exec plugin /bin/kubelogin (still running, ${s} s)`));
  });

  it("slowPlugin reads the Timeout's execPlugin field, not its message (the words alone are no plugin)", () => {
    expect(slowPlugin(waitingForPlugin())).toBe('exec plugin /bin/kubelogin');
    const words = new InformerError('Timeout', waitingForPlugin().message, { phase: 'list' });
    expect(slowPlugin(words)).toBeUndefined();
    expect(slowPlugin(new InformerError('NetworkError', 'x', { execPlugin: '/bin/kubelogin' }))).toBeUndefined();
    // Kept when the error is named again (forRequest, inPhase).
    expect(slowPlugin(waitingForPlugin().forRequest('GET /api').inPhase('watch'))).toBe('exec plugin /bin/kubelogin');
  });

  it('explain names the plugin, not the server or the network', () => {
    expect(slowPlugin(waitingForPlugin())).toBe('exec plugin /bin/kubelogin');
    const line = explain(waitingForPlugin(), SERVER);
    expect(line).toMatch(/^the exec plugin \/bin\/kubelogin gave no credential in time \(the API server was not asked yet\)/);
    expect(line).not.toMatch(/network|did not answer/);
  });
});
