/**
 * Bearer tokens read from a file (src/1-transport/http/tokenFile.ts): kubectl's `tokenFile`, as the
 * CLI's loader wires it (client-node 2.x drops the field), and the in-cluster service account token.
 * Read again once a minute as client-go does, and after a 401; a failed read keeps the last token;
 * the file is named in errors, its contents never.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { ConfigMap, InformerError } from '../../src/index.ts';
import { forgetToken, MAX_TOKEN_FILE_BYTES, TOKEN_FILE_PERIOD_MS, tokenFromFile } from '../../src/1-transport/http/tokenFile.ts';
import { readKubeConfig, tokenFiles } from '../../src/cli/kubeconfig.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { cm, converged, run, waitFor, type Running } from '../resilience/harness/live.ts';
import type { KubeObject } from '../../src/index.ts';

let api: ApiServer | undefined;
let live: Running<KubeObject> | undefined;
let dir: string | undefined;
afterEach(async () => {
  live?.stop();
  live = undefined;
  await api?.close();
  api = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

function tempDir(): string {
  dir ??= mkdtempSync(join(tmpdir(), 'rx-informer-token-file-'));
  return dir;
}

async function rejection(promise: Promise<unknown>): Promise<InformerError> {
  try {
    await promise;
  } catch (error) {
    return error as InformerError;
  }
  throw new Error('expected a rejection');
}

describe('tokenFromFile', () => {
  it(`reads the file (trimmed), again after ${TOKEN_FILE_PERIOD_MS} ms and not before, and at once after a 401`, async () => {
    expect(TOKEN_FILE_PERIOD_MS).toBe(60_000);
    const kc = new KubeConfig();
    const file = join(tempDir(), 'token');
    writeFileSync(file, 'one\n');
    expect((await tokenFromFile(kc, file, 1_000)).token).toBe('one');
    writeFileSync(file, 'two');
    expect((await tokenFromFile(kc, file, 1_000 + TOKEN_FILE_PERIOD_MS - 1)).token).toBe('one');
    const issued = await tokenFromFile(kc, file, 1_000 + TOKEN_FILE_PERIOD_MS);
    expect(issued.token).toBe('two');

    writeFileSync(file, 'three');
    forgetToken(issued); // the server answered 401 to "two"
    expect((await tokenFromFile(kc, file, 1_000 + TOKEN_FILE_PERIOD_MS + 1)).token).toBe('three');
    forgetToken(issued); // a late 401 to "two" does not throw "three" away
    expect((await tokenFromFile(kc, file, 1_000 + TOKEN_FILE_PERIOD_MS + 2)).token).toBe('three');
  });

  it('a file that cannot be read: the last token stays in use (client-go); never read: a Config error naming the file', async () => {
    const kc = new KubeConfig();
    const file = join(tempDir(), 'token');
    writeFileSync(file, 'one');
    expect((await tokenFromFile(kc, file, 0)).token).toBe('one');
    rmSync(file);
    expect((await tokenFromFile(kc, file, TOKEN_FILE_PERIOD_MS)).token).toBe('one');

    const missing = join(tempDir(), 'missing');
    const error = await rejection(tokenFromFile(kc, missing, 0));
    expect([error.reason, error.phase, error.message]).toEqual(['Config', 'config', `cannot read the token file ${missing}: no such file`]);
  });

  it(`an empty file, or one over ${MAX_TOKEN_FILE_BYTES} bytes, is an error that quotes none of it`, async () => {
    const kc = new KubeConfig();
    const empty = join(tempDir(), 'empty');
    writeFileSync(empty, ' \n');
    expect((await rejection(tokenFromFile(kc, empty, 0))).message).toBe(`cannot read the token file ${empty}: it is empty`);
    const huge = join(tempDir(), 'huge');
    writeFileSync(huge, 'x'.repeat(MAX_TOKEN_FILE_BYTES + 1));
    expect((await rejection(tokenFromFile(kc, huge, 0))).message).toBe(`cannot read the token file ${huge}: larger than 1 MiB`);
  });
});

describe("kubectl's tokenFile in a kubeconfig file", () => {
  it('is found per user, relative paths against the file that names it; the first file to define a user decides', () => {
    const a = join(tempDir(), 'a.yaml');
    const texts = [
      'users:\n- name: alice\n  user:\n    tokenFile: tokens/alice\n- name: bob\n  user:\n    token: x\n',
      'users:\n- name: bob\n  user:\n    tokenFile: /abs/bob\n- name: carol\n  user:\n    tokenFile: /abs/carol\n',
      'not: [valid',
    ];
    expect(tokenFiles([a, '/elsewhere/b.yaml', '/c.yaml'], texts)).toEqual(
      new Map([
        ['alice', join(tempDir(), 'tokens/alice')],
        ['carol', '/abs/carol'],
      ]),
    );
  });

  it('is honoured through the CLI’s loader: the informer syncs, and after the token rotates (401) reads the file again', async () => {
    api = await startApiServer({ token: 'one' });
    api.create('configmaps', cm('a'));
    writeFileSync(join(tempDir(), 'token'), 'one\n');
    const file = join(tempDir(), 'config.yaml');
    writeFileSync(
      file,
      [
        'apiVersion: v1',
        'kind: Config',
        'clusters:',
        '- name: emulator',
        '  cluster:',
        `    server: ${api.url}`,
        '    insecure-skip-tls-verify: true',
        'users:',
        '- name: someone',
        '  user:',
        '    tokenFile: token',
        'contexts:',
        '- name: emulator',
        '  context: {cluster: emulator, user: someone}',
        'current-context: emulator',
        '',
      ].join('\n'),
    );
    live = run(api, ConfigMap, { backoff: { initialMs: 10, maxMs: 40 } }, readKubeConfig(file, undefined).kubeConfig);
    await waitFor('the informer to sync', live.synced);
    expect(live.errors).toEqual([]);

    // The server revokes the token; the file already holds the next one (as a projected token volume would).
    writeFileSync(join(tempDir(), 'token'), 'two\n');
    api.setToken('two');
    api.closeWatches();
    await waitFor('a 401', () => live!.errors.some((e) => e.reason === 'Unauthorized'));
    api.create('configmaps', cm('b'));
    await converged(api, live, 'configmaps');
  });
});
