/**
 * Known token and Secret values (as written, base64, in `data`, `stringData` and the last-applied annotation), and
 * every byte the CLI emits grepped for them: `watch -o json` (JSON and protobuf, with an update and an addition),
 * `watch --all`, `record` (its trace and its stderr), and a 401 (audit43's sweep, kept as coverage).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { cli, killAll, until } from './support.ts';

const TOKEN = 'TOKENsecretsLeak0123456789';
const PW = 'PWsecretsLeakHunter2';
const SD = 'STRINGDATAsecretsLeak';
const b64 = (t: string) => Buffer.from(t, 'utf8').toString('base64');
const NEEDLES = [TOKEN, PW, b64(PW), SD, b64(SD)];
let api: ApiServer;
let dir: string;
let kubeconfig: string;
const read = (f: string) => (existsSync(f) ? readFileSync(f, 'utf8') : '');
/** Each needle found in `text`, with the lines that hold it. */
const leaks = (text: string) =>
  NEEDLES.filter((n) => text.includes(n)).map(
    (n) =>
      `${n} in: ${text
        .split('\n')
        .filter((l) => l.includes(n))
        .join(' | ')
        .slice(0, 600)}`,
  );

beforeAll(async () => {
  api = await startApiServer({ bookmarkIntervalMs: 200, token: TOKEN });
  dir = mkdtempSync(join(tmpdir(), 'rx-informer-secrets-leak-'));
  kubeconfig = join(dir, 'config');
  writeFileSync(kubeconfig, api.kubeConfig.exportConfig());
  const lastApplied = JSON.stringify({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'db', namespace: 'shop' },
    data: { password: b64(PW) },
  });
  api.create('secrets', {
    metadata: { name: 'db', namespace: 'shop', annotations: { 'kubectl.kubernetes.io/last-applied-configuration': lastApplied } },
    type: 'Opaque',
    data: { password: b64(PW) },
  });
});
afterAll(async () => {
  killAll();
  await api.close();
});

describe('no secret in what the CLI writes', () => {
  for (const encoding of ['json', 'protobuf'])
    it(`watch secrets -o json (${encoding}), with an update and an addition`, async () => {
      const run = cli(['watch', 'secrets', '-o', 'json', '--encoding', encoding, '--kubeconfig', kubeconfig]);
      await run.line('err', /watching for changes/);
      api.patch('secrets', 'shop', 'db', { stringData: { extra: SD }, data: { password: b64(PW + encoding) } });
      const lastApplied = JSON.stringify({ kind: 'Secret', stringData: { password: PW } });
      api.create('secrets', {
        metadata: {
          name: `new-${encoding}`,
          namespace: 'shop',
          annotations: { 'kubectl.kubernetes.io/last-applied-configuration': lastApplied },
        },
        type: 'Opaque',
        stringData: { extra: SD },
        data: { password: b64(PW) },
      });
      await until(() => run.out.some((l) => l.includes('UPDATED')) && run.out.some((l) => l.includes('ADDED')));
      run.proc.kill('SIGINT');
      await run.exit;
      expect(leaks(run.raw())).toEqual([]);
    });

  for (const encoding of ['json', 'protobuf'])
    it(`record secrets and configmaps (${encoding}): the trace and stderr`, async () => {
      const file = join(dir, `trace-${encoding}.jsonl`);
      const run = cli(['record', 'secrets', 'configmaps', '-o', file, '--encoding', encoding, '--kubeconfig', kubeconfig]);
      await run.line('err', /^synced; recording to /);
      api.patch('secrets', 'shop', 'db', { data: { password: b64(`${PW}y${encoding}`) } });
      await until(() => read(file).includes('"MODIFIED"'));
      run.proc.kill('SIGTERM');
      await run.exit;
      expect(leaks(read(file) + run.raw())).toEqual([]);
    });

  it('watch --all -o json', async () => {
    const run = cli(['watch', '--all', '-o', 'json', '--kubeconfig', kubeconfig]);
    await run.line('err', /watching for changes/);
    api.patch('secrets', 'shop', 'db', { data: { password: b64(`${PW}all`) } });
    api.create('secrets', { metadata: { name: 'all', namespace: 'shop' }, type: 'Opaque', data: { password: b64(PW) } });
    await until(() => run.out.some((l) => l.includes('UPDATED')) && run.out.some((l) => l.includes('"all"')));
    run.proc.kill('SIGINT');
    await run.exit;
    expect(leaks(run.raw())).toEqual([]);
  });

  it('the sweep can fail: --show-secret-values prints the values it looks for', async () => {
    const run = cli(['watch', 'secrets', '-o', 'json', '--show-secret-values', '--kubeconfig', kubeconfig]);
    await run.line('err', /watching for changes/);
    api.create('secrets', { metadata: { name: 'shown', namespace: 'shop' }, type: 'Opaque', data: { password: b64(PW) } });
    await until(() => run.out.some((l) => l.includes('"shown"')));
    run.proc.kill('SIGINT');
    await run.exit;
    expect(leaks(run.raw()).length).toBeGreaterThan(0);
  });

  it('a 401 (a wrong token in the kubeconfig): the failure shows no token', async () => {
    const other = join(dir, 'bad');
    writeFileSync(other, api.kubeConfig.exportConfig().replace(TOKEN, `${TOKEN}BAD`));
    const run = cli(['watch', 'secrets', '--kubeconfig', other]);
    expect((await run.exit).code).not.toBe(0);
    expect(run.raw()).toMatch(/Unauthorized|401|credentials/i);
    expect(leaks(run.raw())).toEqual([]);
  });
});
