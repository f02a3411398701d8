import { afterEach, describe, expect, it } from 'vitest';
import { serve } from '../../bench/workload/server.ts';

/**
 * The bench's workload server can generate list items as it serves them (for
 * stores of hundreds of thousands of pods) instead of holding them serialized:
 * what it serves must not change.
 */
describe('bench workload server, generated lists', () => {
  const closing: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closing.splice(0)) await close();
  });

  const get = async (port: number, path: string, metadata = false): Promise<string> => {
    const accept = metadata ? 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1' : 'application/json';
    const response = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { accept } });
    expect(response.status).toBe(200);
    return response.text();
  };

  /** Every page of a paged list, following continue tokens. */
  const pages = async (port: number, metadata: boolean): Promise<string[]> => {
    const out: string[] = [];
    let token: string | undefined;
    do {
      const body = await get(port, `/api/v1/pods?limit=7${token ? `&continue=${encodeURIComponent(token)}` : ''}`, metadata);
      out.push(body);
      token = (JSON.parse(body) as { metadata: { continue?: string } }).metadata.continue;
    } while (token);
    return out;
  };

  it('serves the same bytes as a server that holds every item serialized: paged, unpaged, metadata-only, and after the 410', async () => {
    const config = { pods: 23, events: 12, relist: true, seed: 6 };
    const held = await serve(config);
    const generated = await serve({ ...config, generate: true });
    closing.push(held.close, generated.close);
    expect(generated.ready.listBytes).toBe(held.ready.listBytes);
    expect(generated.ready.metaListBytes).toBe(held.ready.metaListBytes);
    expect(generated.ready.finalCount).toBe(held.ready.finalCount);
    for (const metadata of [false, true]) {
      const a = await pages(held.ready.port, metadata);
      expect(a.length).toBe(4);
      expect(await pages(generated.ready.port, metadata)).toEqual(a);
      expect(await get(generated.ready.port, '/api/v1/pods', metadata)).toBe(await get(held.ready.port, '/api/v1/pods', metadata));
    }
    const items = (body: string) => (JSON.parse(body) as { items: { metadata: { name: string } }[] }).items.map((i) => i.metadata.name);
    expect(items(await get(generated.ready.port, '/api/v1/pods'))).toHaveLength(23);
    // Play the watch to its 410: lists then serve the state after the events.
    for (const server of [held, generated]) {
      await get(server.ready.port, '/_bench/go');
      const watch = await get(server.ready.port, '/api/v1/pods?watch=1&resourceVersion=23');
      expect(watch).toContain('"code":410');
    }
    const after = await get(held.ready.port, '/api/v1/pods');
    expect(items(after)).toHaveLength(held.ready.finalCount);
    expect(await get(generated.ready.port, '/api/v1/pods')).toBe(after);
  });
});
