/**
 * `rx-informer record` with an exec plugin that fails quoting its environment (a configured secret): the trace's
 * failure line is scrubbed as stderr is (audit43: the scrubber wrapped stderr only, and the trace, whose header says
 * `"redacted":true`, held the value). The emulator's token changes under a running recording: the next request is
 * answered 401, the plugin runs again and fails. No timing: each step waits for what the previous one caused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { readTrace } from '../../src/pipeline.ts';
import { cli, killAll, until } from './support.ts';

const TOKEN = 'TOKENrecordExec0123456789';
const PIN = 'ENVPINrecordExecPlugh';
let api: ApiServer;
let dir: string;
const read = (f: string) => (existsSync(f) ? readFileSync(f, 'utf8') : '');

beforeAll(async () => {
  api = await startApiServer({ token: TOKEN });
  dir = mkdtempSync(join(tmpdir(), 'rx-informer-record-exec-'));
  const plugin = join(dir, 'plugin.sh');
  const calls = join(dir, 'calls');
  // The first call gives the token; every later one fails, quoting its environment's secret on stderr.
  writeFileSync(
    plugin,
    `#!/bin/sh
if [ ! -e ${calls} ]; then
  touch ${calls}
  echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"${TOKEN}"}}'
  exit 0
fi
echo "login failed (pin $LOGIN_PIN)" >&2
exit 1
`,
  );
  chmodSync(plugin, 0o755);
  const kc = JSON.parse(api.kubeConfig.exportConfig()) as { users: { user: unknown }[] };
  kc.users[0]!.user = {
    exec: {
      apiVersion: 'client.authentication.k8s.io/v1',
      command: plugin,
      env: [{ name: 'LOGIN_PIN', value: PIN }],
      interactiveMode: 'Never',
    },
  };
  writeFileSync(join(dir, 'config'), JSON.stringify(kc));
});
afterAll(async () => {
  killAll();
  await api.close();
});

describe('record: a credential failure in the trace', () => {
  it("the failure line says the plugin failed, its environment's value <redacted>, as on stderr", async () => {
    const file = join(dir, 'trace.jsonl');
    const run = cli(['record', 'configmaps', '-o', file, '--kubeconfig', join(dir, 'config')]);
    await run.line('err', /^synced; recording to /);
    // The server no longer takes the token: the watch resumed is answered 401, the plugin runs again, and fails.
    api.setToken('another-token-0123456789');
    api.closeWatches({ clean: false });
    await until(() => read(file).includes('login failed'), 30_000);
    run.proc.kill('SIGTERM');
    expect((await run.exit).code).toBe(143);
    const text = read(file);
    expect(text).not.toContain(PIN);
    expect(run.raw()).not.toContain(PIN);
    const failures = readTrace(text).lines.filter((l) => l.type === 'failure' && l.error.message.includes('login failed'));
    expect(failures.length).toBeGreaterThan(0);
    expect(failures[0]).toMatchObject({ error: { message: expect.stringContaining('login failed (pin <redacted>)') } });
  }, 60_000);
});
