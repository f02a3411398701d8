/**
 * `--encoding json|protobuf|auto` (the library's `http.encoding`): parsed and checked for `watch`, `start` and
 * `record`, and reaching the informers' lists and watches: with `protobuf` the emulator answers pods and configmaps
 * in protobuf (its request log's `contentType`), a custom resource stays JSON, and what is printed is what JSON prints.
 */
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodingOptions, parseCommandLine } from '../../src/cli/args.ts';
import { parseRecordLine } from '../../src/cli/recordArgs.ts';
import { watchCommand, type Terminal } from '../../src/cli/watch.ts';
import { readTrace } from '../../src/pipeline.ts';
import { startApiServer, type ApiServer, type RequestRecord } from 'rx-informer-emulator';
import { APPLES } from '../emulator/helpers.ts';
import { cli, cliRuns, expectNoStack, killAll, until } from './support.ts';

const PROTOBUF = 'application/vnd.kubernetes.protobuf';
const ASKED = `${PROTOBUF}, application/json`;
const SYNCED = /^synced \d+ resources?, \d+ objects? in \d+ ms/;

afterAll(() => killAll());

describe('--encoding', () => {
  it('takes json, protobuf or auto (watch, start and record); anything else is a usage error naming the value', () => {
    for (const encoding of ['json', 'protobuf', 'auto'] as const) {
      expect(parseCommandLine(['watch', 'pods', '--encoding', encoding])).toMatchObject({ kind: 'run', options: { encoding } });
      expect(parseCommandLine(['start', `--encoding=${encoding}`])).toMatchObject({ kind: 'run', options: { encoding } });
      expect(parseRecordLine(['record', 'pods', '-o', 'f', '--encoding', encoding])).toMatchObject({ encoding });
    }
    const plain = parseCommandLine(['watch', 'pods']);
    expect(plain.kind === 'run' && 'encoding' in plain.options).toBe(false);
    expect('encoding' in (parseRecordLine(['record', 'pods', '-o', 'f']) as object)).toBe(false);
    for (const bad of ['JSON', 'proto', 'yaml', '', 'protobuf\u001b[31m']) {
      const shown = bad.replace('\u001b', '');
      expect(parseCommandLine(['watch', 'pods', `--encoding=${bad}`]), bad).toEqual({
        kind: 'usage',
        message: `--encoding must be json, protobuf or auto, not "${shown}"`,
      });
      expect(parseRecordLine(['record', 'pods', '-o', 'f', `--encoding=${bad}`])).toBe(
        `--encoding must be json, protobuf or auto, not "${shown}"`,
      );
    }
    expect(parseCommandLine(['watch', 'pods', '--encoding'])).toEqual({ kind: 'usage', message: '--encoding needs a value' });
  });

  it('sets http.encoding; protobuf turns on lazyDecode (the library reads protobuf only into lazy objects)', () => {
    expect(encodingOptions(undefined)).toEqual({});
    expect(encodingOptions('json')).toEqual({ encoding: 'json' });
    expect(encodingOptions('auto')).toEqual({ encoding: 'auto' });
    expect(encodingOptions('protobuf')).toEqual({ encoding: 'protobuf', lazyDecode: true });
  });

  it('a bad value through the bin: one line, the pointer to --help, exit 2, before any request', async () => {
    const results = await cliRuns([
      ['watch', 'pods', '--encoding', 'proto'],
      ['record', 'pods', '-o', join(tmpdir(), 'never.jsonl'), '--encoding=cbor'],
    ]);
    expect(results.map((r) => [r.code, r.err])).toEqual([
      [2, ['error: --encoding must be json, protobuf or auto, not "proto"', 'run `rx-informer --help` for usage']],
      [2, ['error: --encoding must be json, protobuf or auto, not "cbor"', 'run `rx-informer --help` for usage']],
    ]);
    for (const r of results) expectNoStack(r.raw());
  });

  describe('against the emulator', () => {
    let api: ApiServer;
    beforeEach(async () => {
      api = await startApiServer({ namespaces: ['shop'], resources: [APPLES], bookmarkIntervalMs: 50 });
      api.create('configmaps', { metadata: { name: 'a', namespace: 'shop' }, data: { k: 'v' } });
      api.create('pods', { metadata: { name: 'web', namespace: 'shop' }, spec: { containers: [{ name: 'c', image: 'nginx:1' }] } });
      api.create('apples', {
        apiVersion: 'pb.example.com/v1',
        kind: 'Apple',
        metadata: { name: 'red', namespace: 'shop' },
        spec: { n: 1 },
      });
    });
    afterEach(async () => {
      killAll();
      await api.close();
    });

    const RESOURCES = ['pods', 'configmaps', 'apples'];
    /** resource, watch or list, and what the emulator answered in. */
    const answers = (requests: readonly RequestRecord[]) =>
      [...new Set(requests.map((r) => `${r.resource} ${r.watch ? 'watch' : 'list'} ${r.contentType}`))].sort();

    it("protobuf: a line prints the same text as JSON, its keys in the server's order (a container's fields in Go's, not by number)", async () => {
      // Go struct order, as a server's JSON writes it: terminationMessagePolicy (field 20) between terminationMessagePath (13)
      // and imagePullPolicy (14); restartPolicy (3) after initContainers (20) and containers (2).
      const container = {
        name: 'c',
        image: 'nginx:1',
        resources: {},
        terminationMessagePath: '/dev/termination-log',
        terminationMessagePolicy: 'File',
        imagePullPolicy: 'Always',
      };
      const spec = { initContainers: [{ ...container, name: 'init' }], containers: [container], restartPolicy: 'Always' };
      api.create('pods', { metadata: { name: 'ordered', namespace: 'shop' }, spec });
      const lines = { json: [] as string[], protobuf: [] as string[] };
      const terminal = (out: string[]): Terminal => ({ out: (l) => out.push(l), err: () => undefined, now: () => new Date(0) });
      const base = { resources: ['pods'], all: false, output: 'json', utc: true } as const;
      const json = await watchCommand(api.kubeConfig, base, terminal(lines.json));
      const protobuf = await watchCommand(api.kubeConfig, { ...base, encoding: 'protobuf' }, terminal(lines.protobuf));
      try {
        await Promise.all([json.synced, protobuf.synced]);
        await until(() => api.requests.filter((r) => r.watch && r.resource === 'pods').length === 2);
        const changed = { ...container, terminationMessagePolicy: 'FallbackToLogsOnError', imagePullPolicy: 'IfNotPresent' };
        api.patch('pods', 'shop', 'ordered', { spec: { ...spec, containers: [changed] } });
        await until(() => lines.json.length === 1 && lines.protobuf.length === 1);
        expect(lines.json[0]).toMatch(/terminationMessagePolicy.*imagePullPolicy/);
        expect(lines.protobuf).toEqual(lines.json);
      } finally {
        json.stop();
        protobuf.stop();
      }
    });

    it("protobuf: pods and configmaps are read in protobuf, the custom resource in JSON; the lines printed are JSON's", async () => {
      const lines = { json: [] as string[], protobuf: [] as string[] };
      const terminal = (out: string[]): Terminal => ({ out: (l) => out.push(l), err: () => undefined, now: () => new Date(0) });
      const base = { resources: RESOURCES, all: false, output: 'json', utc: true } as const;
      const json = await watchCommand(api.kubeConfig, base, terminal(lines.json));
      const protobuf = await watchCommand(api.kubeConfig, { ...base, encoding: 'protobuf' }, terminal(lines.protobuf));
      try {
        await Promise.all([json.synced, protobuf.synced]);
        const watches = (resource: string) => api.requests.filter((r) => r.watch && r.resource === resource).length;
        await until(() => RESOURCES.every((resource) => watches(resource) === 2));
        api.patch('pods', 'shop', 'web', {
          metadata: { labels: { tier: 'front' } },
          spec: { containers: [{ name: 'c', image: 'nginx:2' }] },
        });
        api.patch('configmaps', 'shop', 'a', { data: { k: 'w', more: 'x' } });
        api.patch('apples', 'shop', 'red', { spec: { n: 2 } });
        api.delete('configmaps', 'shop', 'a');
        await until(() => lines.json.length === 4 && lines.protobuf.length === 4);
        // Sorted: each resource's informer prints in its own order, the resources' lines interleave as they come.
        expect(lines.protobuf.toSorted()).toEqual(lines.json.toSorted());
        expect(lines.json.map((l) => (JSON.parse(l) as { type: string }).type).toSorted()).toEqual([
          'DELETED',
          'UPDATED',
          'UPDATED',
          'UPDATED',
        ]);
      } finally {
        json.stop();
        protobuf.stop();
      }
      // The JSON run asked JSON and got it; the protobuf run asked protobuf for the built-in two and got it, and asked
      // the custom resource in JSON (the library's schema does not know it), as the JSON run did.
      const asked = (accept: string) => api.requests.filter((r) => r.resource !== undefined && r.accept === accept);
      expect(asked(ASKED).length + asked('application/json').length).toBe(api.requests.filter((r) => r.resource !== undefined).length);
      expect(answers(asked('application/json')).map((a) => a.split(' ')[0])).toEqual([
        'apples',
        'apples',
        'configmaps',
        'configmaps',
        'pods',
        'pods',
      ]);
      expect(answers(asked('application/json')).every((a) => a.endsWith(' application/json'))).toBe(true);
      expect(asked('application/json').filter((r) => r.resource === 'apples' && r.watch)).toHaveLength(2);
      expect(answers(asked(ASKED))).toEqual([
        `configmaps list ${PROTOBUF}`,
        `configmaps watch ${PROTOBUF};stream=watch`,
        `pods list ${PROTOBUF}`,
        `pods watch ${PROTOBUF};stream=watch`,
      ]);
    });

    it('auto: JSON for a watch of a few namespaces, protobuf for one of more than 16 (read cluster-wide, objects dropped by key)', async () => {
      const many = Array.from({ length: 17 }, (_, i) => (i === 0 ? 'shop' : `ns-${i}`));
      const cases = [
        ['json', [], ['pods list application/json', 'pods watch application/json']],
        ['auto', ['shop'], ['pods list application/json', 'pods watch application/json']],
        ['json', many, ['pods list application/json', 'pods watch application/json']],
        ['auto', many, [`pods list ${PROTOBUF}`, `pods watch ${PROTOBUF};stream=watch`]],
      ] as const;
      for (const [encoding, namespaces, expected] of cases) {
        api.clearRequests();
        const w = await watchCommand(
          api.kubeConfig,
          { resources: ['pods'], all: false, output: 'json', encoding, namespaces },
          { out: () => undefined, err: () => undefined },
        );
        try {
          await w.synced;
          await api.waitForRequest((r) => r.watch && r.resource === 'pods', 10_000);
        } finally {
          w.stop();
        }
        expect(answers(api.requests.filter((r) => r.resource === 'pods')), `${encoding} ${namespaces.length}`).toEqual(expected);
      }
    });

    it('the bin: watch --encoding protobuf reads pods in protobuf and prints the change; record --encoding protobuf writes a trace that reads', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'rx-informer-encoding-'));
      const kubeconfig = join(dir, 'config');
      writeFileSync(kubeconfig, api.kubeConfig.exportConfig());
      const file = join(dir, 'trace.jsonl');
      const watching = cli(['watch', 'pods', '--encoding', 'protobuf', '-o', 'json', '--kubeconfig', kubeconfig]);
      const recording = cli(['record', 'pods', '-o', file, '--encoding', 'protobuf', '--kubeconfig', kubeconfig]);
      await watching.line('err', SYNCED);
      await recording.line('err', /^synced; recording to /);
      await until(() => api.requests.filter((r) => r.watch && r.resource === 'pods' && r.accept === ASKED).length === 2);
      api.patch('pods', 'shop', 'web', { metadata: { labels: { tier: 'front' } } });
      const line = await watching.line('out', /"UPDATED"/);
      expect(JSON.parse(line)).toMatchObject({ type: 'UPDATED', resource: 'pods', namespace: 'shop', name: 'web' });
      await until(() => readFileSync(file, 'utf8').includes('"MODIFIED"'));
      watching.proc.kill('SIGINT');
      recording.proc.kill('SIGTERM');
      expect([(await watching.exit).code, (await recording.exit).code]).toEqual([130, 143]);
      expect(answers(api.requests.filter((r) => r.resource === 'pods'))).toEqual([
        `pods list ${PROTOBUF}`,
        `pods watch ${PROTOBUF};stream=watch`,
      ]);
      // The trace holds the objects as JSON would have given them.
      const trace = readTrace(readFileSync(file, 'utf8'));
      const page = trace.lines.find((l) => l.type === 'page');
      expect(page).toMatchObject({
        items: [{ metadata: { name: 'web', namespace: 'shop' }, spec: { containers: [{ name: 'c', image: 'nginx:1' }] } }],
      });
      const event = trace.lines.find((l) => l.type === 'event');
      expect(event).toMatchObject({ event: { type: 'MODIFIED', object: { metadata: { labels: { tier: 'front' } } } } });
    });
  });
});
