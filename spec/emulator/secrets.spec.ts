/**
 * A Secret's `stringData` is write-only, as on kube-apiserver: folded into `data` (base64, over a `data`
 * value of the same key) on create, update and patch; never stored, listed or sent in a watch event.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { call } from './helpers.ts';

let api: ApiServer | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

describe('Secret stringData', () => {
  it('is folded into data on create (over a data value of the same key) and not stored', async () => {
    api = await startApiServer();
    const created = api.create('secrets', {
      metadata: { name: 'db', namespace: 'vault' },
      data: { user: b64('admin'), password: b64('old') },
      stringData: { password: 'hunter2', 'token.txt': 'ünïcode' },
    });
    expect(created['stringData']).toBeUndefined();
    expect(created['data']).toEqual({ user: b64('admin'), password: b64('hunter2'), 'token.txt': b64('ünïcode') });
    expect(api.get('secrets', 'vault', 'db')).toEqual(created);
  });

  it('over HTTP: POST, merge patch and PUT fold it; GET, LIST and WATCH never show it', async () => {
    api = await startApiServer();
    const posted = await call(api, 'POST', '/api/v1/namespaces/vault/secrets', {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'db', namespace: 'vault' },
      stringData: { password: 'hunter2' },
    });
    expect(posted.status).toBe(201);
    expect(posted.body.data).toEqual({ password: b64('hunter2') });
    expect(posted.body.stringData).toBeUndefined();
    const patched = await call(
      api,
      'PATCH',
      '/api/v1/namespaces/vault/secrets/db',
      { stringData: { token: 't0ken' } },
      { 'Content-Type': 'application/merge-patch+json' },
    );
    expect(patched.status).toBe(200);
    expect(patched.body.data).toEqual({ password: b64('hunter2'), token: b64('t0ken') });
    const put = await call(api, 'PUT', '/api/v1/namespaces/vault/secrets/db', {
      ...patched.body,
      stringData: { password: 'correct-horse' },
    });
    expect(put.status).toBe(200);
    expect(put.body.data).toEqual({ password: b64('correct-horse'), token: b64('t0ken') });
    const got = await call(api, 'GET', '/api/v1/namespaces/vault/secrets/db');
    const listed = await call(api, 'GET', '/api/v1/namespaces/vault/secrets');
    const watched = await call(api, 'GET', '/api/v1/namespaces/vault/secrets?watch=1&resourceVersion=0&timeoutSeconds=1');
    expect(got.raw).not.toContain('stringData');
    expect(listed.raw).not.toContain('stringData');
    expect(watched.raw).toContain('"ADDED"');
    expect(watched.raw).not.toContain('stringData');
  });

  it('a stringData that is not a map of strings is invalid (422)', async () => {
    api = await startApiServer();
    const bad = await call(api, 'POST', '/api/v1/namespaces/vault/secrets', {
      metadata: { name: 'db', namespace: 'vault' },
      stringData: { password: 42 },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.details.causes).toEqual([expect.objectContaining({ field: 'stringData' })]);
  });
});
