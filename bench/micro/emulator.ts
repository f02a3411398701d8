/**
 * The API-server emulator's own speed: what spec/emulator once checked with a stopwatch (a test asserts behaviour; a
 * speed claim lives here). Lists 10 000 ConfigMaps whole and in pages of 500, and replays 20 000 watch events of history.
 *
 *   node --conditions=rx-informer-source bench/micro/emulator.ts
 *
 * Targets (on an idle machine): the 10 000-object work (create, list, page, select) under 8 s; the replay at more than
 * 20 000 events/s. Exit code 1 when a target is missed.
 */
import { startApiServer } from 'rx-informer-emulator';

const CM = { group: '', version: 'v1', resource: 'configmaps' } as const;

async function getJson(url: string): Promise<{ items: unknown[]; metadata: { continue?: string } }> {
  const r = await fetch(url, { headers: { Accept: 'application/json' } });
  return (await r.json()) as { items: unknown[]; metadata: { continue?: string } };
}

/** Reads a watch until `n` lines arrived, then aborts it. */
async function watchLines(url: string, n: number): Promise<number> {
  const ac = new AbortController();
  const r = await fetch(url, { signal: ac.signal });
  const decoder = new TextDecoder();
  let lines = 0;
  try {
    for await (const chunk of r.body!) {
      for (const c of decoder.decode(chunk as Uint8Array, { stream: true })) if (c === '\n') lines++;
      if (lines >= n) break;
    }
  } finally {
    ac.abort();
  }
  return lines;
}

let failed = false;
const report = (name: string, value: number, unit: string, ok: boolean, target: string) => {
  console.log(`${name.padEnd(34)} ${value.toFixed(0).padStart(8)} ${unit.padEnd(10)} ${ok ? 'PASS' : 'FAIL'} (target ${target})`);
  if (!ok) failed = true;
};

{
  const api = await startApiServer();
  const t0 = performance.now();
  for (let i = 0; i < 10_000; i++) {
    api.create(CM, {
      metadata: { name: `cm-${String(i).padStart(5, '0')}`, namespace: `ns-${i % 10}`, labels: { i: String(i % 3) } },
      data: { k: 'v'.repeat(50) },
    });
  }
  const whole = await getJson(`${api.url}/api/v1/configmaps`);
  let count = 0;
  let cont = '';
  do {
    const page = await getJson(`${api.url}/api/v1/configmaps?limit=500${cont ? `&continue=${cont}` : ''}`);
    count += page.items.length;
    cont = page.metadata.continue ?? '';
  } while (cont);
  const selected = await getJson(`${api.url}/api/v1/configmaps?labelSelector=i%3D1`);
  const ms = performance.now() - t0;
  await api.close();
  if (whole.items.length !== 10_000 || count !== 10_000 || selected.items.length !== 3333) throw new Error('wrong list answers');
  report('10 000 ConfigMaps: list + pages', ms, 'ms', ms < 8000, '< 8000 ms');
}

{
  const api = await startApiServer({ historyLimit: 50_000 });
  const cm = api.create(CM, { metadata: { name: 'hot', namespace: 'default' }, data: { n: '0' } });
  const N = 20_000;
  for (let i = 1; i <= N; i++) api.update(CM, { metadata: { name: 'hot', namespace: 'default' }, data: { n: String(i) } });
  const t0 = performance.now();
  const got = await watchLines(
    `${api.url}/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=${cm.metadata!.resourceVersion}`,
    N,
  );
  const rate = got / ((performance.now() - t0) / 1000);
  await api.close();
  report('watch replay of 20 000 events', rate, 'events/s', rate > 20_000, '> 20 000 events/s');
}

process.exit(failed ? 1 : 0);
