/**
 * One rule for "is this object a Secret's" (isSecretObject, 0-model/redact.ts), used by record's trace, watch and
 * replay (audit10): a Secret under another resource name (a `--no-redact` trace's, or a resource that serves Secrets)
 * is shown redacted by replay and watch, as record redacts it.
 */
import { describe, expect, it } from 'vitest';
import { LAST_APPLIED, isSecretObject, lastAppliedOfSecret } from '../../src/0-model/redact.ts';
import { readTrace } from '../../src/pipeline.ts';
import type { KubeObject } from '../../src/index.ts';
import { secretRedaction, toRecord } from '../../src/cli/record.ts';
import { parseReplayLine, type ReplayCommandOptions } from '../../src/cli/replayArgs.ts';
import { replayCommand } from '../../src/cli/replayCommand.ts';

const metadata = { name: 'db', namespace: 'a', uid: 's1', resourceVersion: '4' };
/** A Secret as a list item holds it: no kind, a `type` beside `data`. */
const listedSecret = { metadata, type: 'Opaque', data: { password: 'aHVudGVyMg==' } };

describe('isSecretObject', () => {
  it.each([
    ['a listed Secret (its shape), resource not known', listedSecret, undefined, true],
    ['kind: Secret, resource not known', { kind: 'Secret', metadata, data: {} }, undefined, true],
    ['kind: Secret, resource known to hold none', { kind: 'Secret', metadata, data: {} }, false, true],
    ['the shape, resource known to hold none', listedSecret, false, false],
    ['anything of a secret resource', { metadata }, true, true],
    ['a ConfigMap (no type)', { metadata, data: { k: 'v' } }, undefined, false],
    ['a kind that is not Secret, shaped alike', { ...listedSecret, kind: 'Vault' }, undefined, false],
    ['no metadata', { kind: 'Secret', data: {} }, true, false],
    ['not an object', 'Secret', true, false],
  ])('%s', (_, object, secret, expected) => {
    expect(isSecretObject(object, secret)).toBe(expected);
  });
});

describe('watch and replay redact a Secret under another resource name', () => {
  it("watch's redaction (secretRedaction, as showChange takes it) hides a Secret of a resource not named secrets", () => {
    const object = listedSecret as unknown as KubeObject;
    const redact = secretRedaction(undefined)(false);
    const shown = toRecord('vaultsecrets', { type: 'added', object, isInInitialList: false }, new Date(0), {
      utc: true,
      ...(redact ? { redact } : {}),
    });
    expect(JSON.stringify(shown)).not.toContain('aHVudGVyMg');
    expect(JSON.stringify(shown)).toMatch(/"password":"<redacted:[0-9a-f]{12}>"/);
    // A ConfigMap of that resource is shown as it is; --show-secret-values shows the Secret's values.
    const configMap = { metadata, data: { level: 'debug' } } as unknown as KubeObject;
    expect(redact?.(configMap)).toBe(configMap);
    expect(secretRedaction(true)(false)).toBeUndefined();
  });

  it('replay of a --no-redact trace recorded under another resource name prints its Secrets redacted', async () => {
    const watched = (rv: string, password: string, name = 'db') => ({
      kind: 'Secret',
      apiVersion: 'v1',
      metadata: { ...metadata, name, resourceVersion: rv },
      type: 'Opaque',
      data: { password },
    });
    const resource = 'vaultsecrets';
    const clear = [
      {
        type: 'header',
        format: 'rx-informer-trace',
        version: 1,
        startedAt: '2026-01-01T00:00:00Z',
        resources: [resource],
        redacted: false,
      },
      { type: 'list', at: 0, id: 0, resource, options: { limit: 500, resourceVersion: '0' } },
      { type: 'page', at: 1, id: 0, resourceVersion: '5', items: [listedSecret] },
      { type: 'end', at: 1, id: 0, how: 'complete' },
      { type: 'watch', at: 2, id: 1, resource, options: { allowWatchBookmarks: true, resourceVersion: '5', timeoutSeconds: 300 } },
      { type: 'event', at: 3, id: 1, event: { type: 'MODIFIED', object: watched('6', 'Y29ycmVjdC1ob3JzZQ==') } },
      { type: 'event', at: 4, id: 1, event: { type: 'ADDED', object: watched('7', 'c3dvcmRmaXNo', 'new') } },
      { type: 'end', at: 10, id: 1, how: 'unsubscribe' },
    ]
      .map((l) => `${JSON.stringify(l)}\n`)
      .join('');
    const run = async (...argv: string[]) => {
      const out: string[] = [];
      const options = parseReplayLine(['replay', 'trace.jsonl', '--utc', ...argv]) as ReplayCommandOptions;
      expect(await replayCommand(readTrace(clear), options, (line) => out.push(line))).toEqual([]);
      return out;
    };
    const values = /aHVudGVyMg|Y29ycmVjdC1ob3JzZQ|c3dvcmRmaXNo/;
    expect(await run()).toEqual([`00:00:00 UPDATED ${resource} a/db  data.password: <changed>`, `00:00:00 ADDED   ${resource} a/new`]);
    const json = await run('-o', 'json');
    expect(json.join('\n')).not.toMatch(values);
    expect(json[1]).toMatch(/"password":"<redacted:[0-9a-f]{12}>"/);
    expect((await run('--show-secret-values', '-o', 'json')).join('\n')).toMatch(values);
  });
});

describe("a Secret's last-applied annotation on any object (audit43: a metadata-only Secret's, PartialObjectMetadata)", () => {
  const PW = 'PWsecretRule0hunter2';
  const applied = (text: string) => ({
    apiVersion: 'meta.k8s.io/v1',
    kind: 'PartialObjectMetadata',
    metadata: { ...metadata, annotations: { [LAST_APPLIED]: text, team: 'shop' } },
  });

  it.each([
    ["kubectl's compact JSON", JSON.stringify({ apiVersion: 'v1', kind: 'Secret', data: { p: PW } }), true],
    ['spaces about the colon', `{ "kind" : "Secret", "stringData": { "p": "${PW}" } }`, true],
    ["a ConfigMap's", JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', data: { note: 'see "Secret"' } }), false],
    ['"kind":"Secret" inside a string value', JSON.stringify({ kind: 'ConfigMap', data: { doc: '{"kind":"Secret"}' } }), false],
  ])('lastAppliedOfSecret: %s', (_, text, expected) => {
    expect(lastAppliedOfSecret(applied(text))).toBe(expected);
  });

  it.each([
    ['no metadata', { kind: 'Secret' }],
    ['no annotations', { metadata }],
    ['not text', { metadata: { annotations: { [LAST_APPLIED]: 7 } } }],
  ])('lastAppliedOfSecret: %s is false', (_, object) => {
    expect(lastAppliedOfSecret(object)).toBe(false);
  });

  it("watch's redaction (and so replay's) hides it on a resource not known to hold Secrets, and keeps the rest", () => {
    const object = applied(JSON.stringify({ apiVersion: 'v1', kind: 'Secret', stringData: { password: PW } })) as unknown as KubeObject;
    const redact = secretRedaction(undefined)(false)!;
    const shown = toRecord('secrets-metadata', { type: 'added', object, isInInitialList: false }, new Date(0), { utc: true, redact });
    const text = JSON.stringify(shown);
    expect(text).not.toContain(PW);
    expect(text).toMatch(/"kubectl.kubernetes.io\/last-applied-configuration":"<redacted:[0-9a-f]{12}>"/);
    expect(text).toContain('"team":"shop"');
    // Another object's annotation is shown as it is: the object itself comes back.
    const other = applied(JSON.stringify({ kind: 'ConfigMap', data: { a: '1' } })) as unknown as KubeObject;
    expect(redact(other)).toBe(other);
  });
});
