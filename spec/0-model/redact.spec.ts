import { describe, expect, it } from 'vitest';
import { LAST_APPLIED, isSecretResource, secretRedactor } from '../../src/0-model/redact.ts';
import type { KubeObject } from '../../src/index.ts';

describe('secretRedactor', () => {
  const secret = (data: Record<string, string>, extra: Record<string, unknown> = {}): KubeObject =>
    ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'db', namespace: 'default', annotations: { [LAST_APPLIED]: JSON.stringify({ data }), keep: 'me' } },
      data,
      ...extra,
    }) as KubeObject;

  it('hides every value of data and stringData and the last-applied annotation; keys, other fields and the input stay', () => {
    const redact = secretRedactor(Buffer.alloc(32, 1));
    const input = secret({ password: 'aHVudGVyMg==', user: 'YWRtaW4=' }, { stringData: { plain: 'hunter2' }, type: 'Opaque' });
    const out = redact(input) as KubeObject & { data: Record<string, string>; stringData: Record<string, string>; type: string };
    const text = JSON.stringify(out);
    for (const value of ['aHVudGVyMg==', 'YWRtaW4=', 'hunter2']) expect(text).not.toContain(value);
    expect(Object.keys(out.data)).toEqual(['password', 'user']);
    expect(out.stringData.plain).toMatch(/^<redacted:[0-9a-f]{12}>$/);
    expect(out.metadata.annotations?.[LAST_APPLIED]).toMatch(/^<redacted:[0-9a-f]{12}>$/);
    expect(out.metadata.annotations?.['keep']).toBe('me');
    expect(out.type).toBe('Opaque');
    expect((input as unknown as { data: Record<string, string> }).data.password).toBe('aHVudGVyMg==');
  });

  it('hashes under a key: equal values match within a run, not across keys', () => {
    const a = secretRedactor(Buffer.alloc(32, 1));
    const b = secretRedactor(Buffer.alloc(32, 2));
    const data = (o: KubeObject) => (o as unknown as { data: Record<string, string> }).data;
    const one = data(a(secret({ x: 'same', y: 'same', z: 'other' })));
    expect(one.x).toBe(one.y);
    expect(one.x).not.toBe(one.z);
    expect(data(b(secret({ x: 'same' }))).x).not.toBe(one.x);
  });

  it('knows core Secrets only', () => {
    expect(isSecretResource({ group: '', plural: 'secrets' })).toBe(true);
    expect(isSecretResource({ group: 'example.com', plural: 'secrets' })).toBe(false);
    expect(isSecretResource({ group: '', plural: 'configmaps' })).toBe(false);
  });
});
