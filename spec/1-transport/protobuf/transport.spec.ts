import { Socket } from 'node:net';
import { Gunzip } from 'node:zlib';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { firstValueFrom, lastValueFrom, take, toArray } from 'rxjs';
import { startApiServer, type ApiServer, type CustomResourceDefinitionSpec } from 'rx-informer-emulator';
import { InformerError } from '../../../src/0-model/errors.ts';
import { ConfigMap } from '../../../src/0-model/resources.ts';
import { httpListWatch } from '../../../src/1-transport/httpTransport.ts';
import type { HttpTransportOptions } from '../../../src/1-transport/http/options.ts';
import { isSkipped } from '../../../src/1-transport/lazyJson.ts';
import type { ListWatch, RawWatchEvent } from '../../../src/1-transport/listWatch.ts';

/**
 * The transport with `encoding: 'protobuf'` against the emulator (issue #36 step 2): which requests ask protobuf,
 * paged lists, error Status bodies that make the same InformerError as JSON's, watch faults (a garbage frame, a
 * frame over maxLineBytes) as MalformedLine, and the keep predicate dropping objects to skeletons.
 */
let api: ApiServer | undefined;
afterEach(async () => {
  await api?.close();
  api = undefined;
});

const PROTOBUF: HttpTransportOptions = { encoding: 'protobuf', lazyDecode: true };

/** A custom resource whose kind is a built-in's (Lease): its group says it is not the schema's. */
const CUSTOM_LEASES: CustomResourceDefinitionSpec = {
  group: 'pb.example.com',
  version: 'v1',
  plural: 'leases',
  kind: 'Lease',
  namespaced: true,
};

async function server(): Promise<ApiServer> {
  const s = await startApiServer({ namespaces: ['ns'], resources: [CUSTOM_LEASES] });
  for (const name of ['cm-1', 'cm-2', 'cm-3']) s.create('configmaps', { metadata: { name, namespace: 'ns' }, data: { key: name } });
  return s;
}

const lw = (options: HttpTransportOptions): ListWatch => httpListWatch(api!.kubeConfig, { resource: ConfigMap, namespace: 'ns' }, options);
const accepts = () => api!.requests.filter((r) => r.resource === 'configmaps').map((r) => r.accept);

describe('http.encoding', () => {
  it("asks protobuf only with 'protobuf' (or 'auto' with a keepObject) and lazy decoding, for a kind the schema knows", async () => {
    api = await server();
    const cases: [HttpTransportOptions, boolean][] = [
      [{}, false],
      [{ encoding: 'protobuf' }, false], // eager decoding keeps JSON
      [PROTOBUF, true],
      [{ encoding: 'auto', lazyDecode: true }, false],
      [{ encoding: 'auto', lazyDecode: true, keepObject: () => true }, true],
      [{ encoding: 'json', lazyDecode: true, keepObject: () => true }, false],
    ];
    for (const [options, protobuf] of cases) {
      const before = accepts().length;
      const page = await firstValueFrom(lw(options).list({}));
      expect(page.items.map((i) => (i as ConfigMap).metadata.name)).toEqual(['cm-1', 'cm-2', 'cm-3']);
      expect([options, accepts().slice(before)]).toEqual([
        options,
        [protobuf ? 'application/vnd.kubernetes.protobuf, application/json' : 'application/json'],
      ]);
    }
    // The kinds of apps/v1 and coordination.k8s.io/v1 are in the schema; a custom resource of the same kind name is not.
    const accept = async (group: string, plural: string, kind: string) => {
      await firstValueFrom(
        httpListWatch(api!.kubeConfig, { resource: { group, version: 'v1', plural, namespaced: true, kind } }, PROTOBUF).list({}),
      );
      return api!.requests.at(-1)!.accept;
    };
    expect(await accept('apps', 'deployments', 'Deployment')).toBe('application/vnd.kubernetes.protobuf, application/json');
    expect(await accept('apps', 'replicasets', 'ReplicaSet')).toBe('application/vnd.kubernetes.protobuf, application/json');
    expect(await accept('coordination.k8s.io', 'leases', 'Lease')).toBe('application/vnd.kubernetes.protobuf, application/json');
    expect(await accept('pb.example.com', 'leases', 'Lease')).toBe('application/json');
  });

  it('pages a protobuf list (continue, remainingItemCount) into the same pages as JSON', async () => {
    api = await server();
    const pages = async (options: HttpTransportOptions) => {
      const first = await firstValueFrom(lw(options).list({ limit: 2 }));
      const second = await firstValueFrom(lw(options).list({ limit: 2, continue: first.continue }));
      return JSON.parse(JSON.stringify([first, second])) as unknown;
    };
    const [json, protobuf] = [await pages({ lazyDecode: true }), await pages(PROTOBUF)];
    expect(protobuf).toStrictEqual(json);
    expect(json).toMatchObject([{ remainingItemCount: 1, continue: expect.any(String) }, { items: [{ metadata: { name: 'cm-3' } }] }]);
  });

  it("frees an HTTP/1.1 protobuf page's reads, gzip's inflater buffers too (not a JSON one's), kept objects whole", async () => {
    api = await server();
    // Text that gzip does not shrink much: the gzip page, too, comes in several reads.
    const noise = (seed: number) => {
      let x = seed + 1;
      return Array.from({ length: 4000 }, () => String.fromCharCode(33 + ((x = (x * 1103515245 + 12345) & 0x7fffffff) % 90))).join('');
    };
    for (let i = 0; i < 60; i++)
      api.create('configmaps', { metadata: { name: `big-${i}`, namespace: 'ns' }, data: { big: noise(i), i: String(i) } });
    type Transfer = { transfer(length: number): ArrayBuffer };
    const transfer = vi.spyOn(ArrayBuffer.prototype as unknown as Transfer, 'transfer');
    const push = vi.spyOn(Gunzip.prototype, 'push');
    try {
      const read = async (options: HttpTransportOptions) => {
        transfer.mockClear();
        const page = await firstValueFrom(lw(options).list({}));
        const freed = transfer.mock.contexts as unknown as ArrayBuffer[];
        // Every member read only now, after the page's memory was freed: kept objects hold copies of their own.
        return { items: JSON.parse(JSON.stringify(page.items.filter((i) => !isSkipped(i)))) as unknown, freed };
      };
      const json = await read({ lazyDecode: true, compression: 'none', keepObject: (s) => !String(s.metadata.name).endsWith('7') });
      expect(json.freed).toEqual([]);
      // A JSON page over gzip: its inflated chunks are left alone (its readers do not say they keep no bytes); only the
      // compressed pieces, which the inflater alone reads, are freed.
      const inflatedBy = () => new Set(push.mock.calls.flatMap(([chunk]) => (Buffer.isBuffer(chunk) ? [chunk.buffer] : [])));
      push.mockClear();
      const jsonGzip = await read({ lazyDecode: true, compression: 'gzip', keepObject: (s) => !String(s.metadata.name).endsWith('7') });
      expect(inflatedBy().size).toBeGreaterThan(1);
      expect(jsonGzip.freed.filter((b) => inflatedBy().has(b))).toEqual([]);
      expect([...inflatedBy()].every((b) => b.byteLength > 0)).toBe(true);
      expect(jsonGzip.items).toStrictEqual(json.items);
      // Of a protobuf page over gzip, the inflater's output buffers too, each (64 KiB of its own) once read.
      push.mockClear();
      const gzip = await read({ ...PROTOBUF, compression: 'gzip', keepObject: (s) => !String(s.metadata.name).endsWith('7') });
      const inflated = inflatedBy();
      expect(gzip.freed.length).toBeGreaterThan(0);
      expect(gzip.freed.every((b) => b.byteLength === 0)).toBe(true);
      expect(inflated.size).toBeGreaterThan(1); // the page (~250 KB inflated) filled several
      expect([...inflated].every((b) => gzip.freed.includes(b as ArrayBuffer))).toBe(true);
      const protobuf = await read({ ...PROTOBUF, compression: 'none', keepObject: (s) => !String(s.metadata.name).endsWith('7') });
      expect(protobuf.freed.length).toBeGreaterThan(1); // the page (~250 KB) came in several reads
      expect(protobuf.freed.every((b) => b.byteLength === 0)).toBe(true);
      expect(protobuf.items).toStrictEqual(json.items);
      expect(gzip.items).toStrictEqual(json.items);
      expect((json.items as unknown[]).length).toBe(63 - 6);
    } finally {
      transfer.mockRestore();
      push.mockRestore();
    }
  });

  it("over HTTP/2, frees a gzip protobuf page's inflater buffers (never the session's reads), kept objects whole", async () => {
    api = await startApiServer({ namespaces: ['ns'], http2: true });
    const noise = (seed: number) => {
      let x = seed + 1;
      return Array.from({ length: 4000 }, () => String.fromCharCode(33 + ((x = (x * 1103515245 + 12345) & 0x7fffffff) % 90))).join('');
    };
    for (let i = 0; i < 60; i++)
      api.create('configmaps', { metadata: { name: `big-${i}`, namespace: 'ns' }, data: { big: noise(i), i: String(i) } });
    type Transfer = { transfer(length: number): ArrayBuffer };
    const transfer = vi.spyOn(ArrayBuffer.prototype as unknown as Transfer, 'transfer');
    const push = vi.spyOn(Gunzip.prototype, 'push');
    const keepObject = (s: { metadata: { name?: string } }) => !String(s.metadata.name).endsWith('7');
    try {
      const read = async (options: HttpTransportOptions) => {
        transfer.mockClear();
        push.mockClear();
        const page = await firstValueFrom(lw({ ...options, protocol: 'h2', keepObject }).list({}));
        const inflated = new Set(push.mock.calls.flatMap(([chunk]) => (Buffer.isBuffer(chunk) ? [chunk.buffer] : [])));
        const freed = [...(transfer.mock.contexts as unknown as ArrayBuffer[])];
        return { items: JSON.parse(JSON.stringify(page.items.filter((i) => !isSkipped(i)))) as unknown, freed, inflated };
      };
      const json = await read({ lazyDecode: true, compression: 'none' });
      expect(json.freed).toEqual([]);
      const gzip = await read({ ...PROTOBUF, compression: 'gzip' });
      expect(gzip.inflated.size).toBeGreaterThan(1); // the page (~250 KB inflated) filled several
      // The inflater's buffers, and nothing else: DATA frames are the session's.
      expect(new Set(gzip.freed)).toEqual(gzip.inflated);
      expect(gzip.freed.every((b) => b.byteLength === 0)).toBe(true);
      expect(gzip.items).toStrictEqual(json.items);
      expect((json.items as unknown[]).length).toBe(60 - 6);
      expect(api.http2!.streams).toBeGreaterThan(0);
    } finally {
      transfer.mockRestore();
      push.mockRestore();
    }
  });

  it('frees each socket read of a protobuf page as soon as its objects are decoded, before the page ends', async () => {
    api = await server();
    const big = 'x'.repeat(4000);
    for (let i = 0; i < 200; i++)
      api.create('configmaps', { metadata: { name: `big-${i}`, namespace: 'ns' }, data: { big, i: String(i) } });
    type Transfer = { transfer(length: number): ArrayBuffer };
    const transfer = vi.spyOn(ArrayBuffer.prototype as unknown as Transfer, 'transfer');
    const emit = vi.spyOn(Socket.prototype, 'emit');
    try {
      // Reads freed so far, seen by the keep predicate as each object is decoded (the last one: before the page ends).
      const seen: number[] = [];
      const keepObject = (s: { metadata: { name?: string } }) => {
        seen.push(transfer.mock.calls.length);
        return String(s.metadata.name).endsWith('7');
      };
      const page = await firstValueFrom(lw({ ...PROTOBUF, compression: 'none', keepObject }).list({}));
      expect(page.items).toHaveLength(203);
      expect(seen).toHaveLength(203);
      // The page (~830 KB) came in many reads: most are freed by the time its last object is decoded.
      expect(transfer.mock.calls.length).toBeGreaterThan(4);
      expect(seen.at(-1)!).toBeGreaterThan(transfer.mock.calls.length / 2);
      expect((transfer.mock.contexts as unknown as ArrayBuffer[]).every((b) => b.byteLength === 0)).toBe(true);
      const kept = page.items.filter((i) => !isSkipped(i)) as ConfigMap[];
      expect(kept.map((i) => Number(i.data?.i)).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, k) => 10 * k + 7));
      expect(kept.every((i) => i.data?.big === big)).toBe(true);
      // The socket's reads themselves (the HTTP parser copies each body piece out of them) are freed too.
      const reads = (emit.mock.calls as unknown[][]).flatMap(([event, read], i) =>
        event === 'data' && (emit.mock.contexts[i] as Socket).remotePort === api!.port ? [read as Buffer] : [],
      );
      expect(reads.length).toBeGreaterThan(4);
      // But the first: it carried the response's head, and was read before the body was (left to the collector).
      expect(reads.slice(1).filter((read) => read.buffer.byteLength > 0)).toEqual([]);
    } finally {
      transfer.mockRestore();
      emit.mockRestore();
    }
  });

  it('reads a protobuf error Status into the same InformerError as its JSON twin', async () => {
    api = await server();
    const failure = async (options: HttpTransportOptions) => {
      try {
        await firstValueFrom(lw(options).list({ resourceVersion: '999999', resourceVersionMatch: 'Exact' }));
      } catch (error) {
        return error as InformerError;
      }
      throw new Error('the list succeeded');
    };
    const [json, protobuf] = [await failure({ lazyDecode: true }), await failure(PROTOBUF)];
    expect(api.requests.at(-1)!.accept).toBe('application/vnd.kubernetes.protobuf, application/json');
    expect(protobuf).toBeInstanceOf(InformerError);
    expect({
      reason: protobuf.reason,
      status: protobuf.status,
      message: protobuf.message,
      statusObject: protobuf.statusObject,
    }).toStrictEqual({
      reason: json.reason,
      status: json.status,
      message: json.message,
      statusObject: json.statusObject,
    });
  });

  it('watches in frames; a keepObject drops objects to skeletons; BOOKMARK and ERROR frames arrive', async () => {
    api = await server();
    const { resourceVersion } = await firstValueFrom(lw(PROTOBUF).list({}));
    const events = lastValueFrom(
      lw({ ...PROTOBUF, keepObject: (s) => s.metadata.name !== 'cm-2' })
        .watch({ resourceVersion })
        .pipe(take(3), toArray()),
    );
    await api.waitForRequest((r) => r.watch && r.resource === 'configmaps');
    for (const name of ['cm-1', 'cm-2', 'cm-3']) api.patch('configmaps', 'ns', name, { data: { key: `${name}!` } });
    const frames = (await events) as RawWatchEvent[];
    expect(frames.map((f) => [f.type, (f.object as ConfigMap).metadata.name, isSkipped(f.object)])).toEqual([
      ['MODIFIED', 'cm-1', false],
      ['MODIFIED', 'cm-2', true],
      ['MODIFIED', 'cm-3', false],
    ]);
    expect((frames[2]!.object as ConfigMap).data).toEqual({ key: 'cm-3!' });
    api.compact();
    const expired = await firstValueFrom(lw(PROTOBUF).watch({ resourceVersion }));
    expect(expired).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } });
  });

  it('reports a garbage frame and a frame over maxLineBytes as MalformedLine (the emulator faults, in protobuf)', async () => {
    api = await server();
    const { resourceVersion } = await firstValueFrom(lw(PROTOBUF).list({}));
    api.faults.add({ fault: { type: 'malformedLine' } });
    const garbage = await firstValueFrom(lw(PROTOBUF).watch({ resourceVersion }));
    expect(garbage).toBeInstanceOf(InformerError);
    expect(garbage).toMatchObject({ reason: 'MalformedLine', message: expect.stringMatching(/watch frame is not a protobuf WatchEvent/) });
    api.faults.add({ fault: { type: 'oversizeLine', bytes: 100_000 } });
    const oversize = await firstValueFrom(lw({ ...PROTOBUF, maxLineBytes: 65_536 }).watch({ resourceVersion }));
    expect(oversize).toMatchObject({
      reason: 'MalformedLine',
      message: expect.stringMatching(/a frame passed the 64 KiB limit \(100000 bytes; option maxLineBytes\)/),
    });
  });
});
