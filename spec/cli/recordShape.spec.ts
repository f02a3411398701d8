/**
 * `rx-informer record` in process, against the emulator: an object of a resource other than `secrets` shaped like a
 * Secret (a string `type` beside `data`) loses its values in the trace, as the library's `record` and `watch` do
 * (one rule, `isSecretObject` in src/0-model/redact.ts); an ordinary object of that resource is written as it is.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { recordCommand } from '../../src/cli/recordCommand.ts';

let api: ApiServer;
let dir: string;

beforeAll(async () => {
  api = await startApiServer();
  dir = mkdtempSync(join(tmpdir(), 'rx-informer-record-shape-'));
});

afterAll(async () => {
  await api.close();
});

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

describe('rx-informer record (in process)', () => {
  it('redacts a Secret-shaped object of another resource, and leaves an ordinary one as it is', async () => {
    api.create('configmaps', { metadata: { name: 'looks-secret', namespace: 'shop' }, type: 'Opaque', data: { password: b64('hunter2') } });
    api.create('configmaps', { metadata: { name: 'plain', namespace: 'shop' }, data: { colour: 'blue' } });
    const file = join(dir, 'trace.jsonl');
    const lines: string[] = [];
    const recording = await recordCommand(
      api.kubeConfig,
      { resources: ['configmaps'], namespace: 'shop', file, redact: true },
      { err: (line) => lines.push(line) },
    );
    await recording.synced;
    recording.stop();
    expect(recording.error).toBeUndefined();
    const text = readFileSync(file, 'utf8');
    expect(text).not.toContain(b64('hunter2'));
    expect(text).toContain('"colour":"blue"');
    const items = text
      .split('\n')
      .filter((line) => line.includes('"type":"page"'))
      .flatMap((line) => (JSON.parse(line) as { items: { metadata: { name: string }; data?: Record<string, string> }[] }).items);
    const shaped = items.find((item) => item.metadata.name === 'looks-secret');
    expect(shaped?.data?.password).toBeDefined();
    expect(shaped?.data?.password).not.toBe(b64('hunter2'));
  });
});
