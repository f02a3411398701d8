/**
 * Issue #36: the sync of P pods over protobuf (lazy) with the next page asked as soon as a page's continue token has
 * come (`http.prefetchPages`, the default) and without (client-go's pager: once the page has been read), alternating in
 * one process, against a server in a child process (pinned to the last core when taskset exists) that answers each page
 * after `delay` ms (a real apiserver's pages take tens of ms from etcd; 0: the bench's workload server) from bodies
 * encoded once. Per run: wall ms to synced, the process's CPU ms, the reflector's mean wait for a page (from its ask
 * to the page decoded), and the server's view: the mean time from the end of page N's body (written to the socket)
 * to page N+1's request (negative: asked before page N had been sent). Medians of the repetitions.
 *
 *   node --conditions=rx-informer-source bench/micro/prefetch.ts [pods=50000] [delays=0,20] [reps=3]
 */
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { filter, firstValueFrom } from 'rxjs';
import { KubeConfig } from '@kubernetes/client-node';

const PAGE = 500;

if (process.argv[2] === '--server') {
  // The server: every page encoded once, each answered after the delay asked in its query (`delayMs`, a bench knob).
  const { encodeEnvelope } = await import('../../packages/emulator/src/protobuf/encode.ts');
  const { makePod } = await import('../workload/pods.ts');
  const pods = Number(process.argv[3]);
  const pages: Buffer[] = [];
  for (let start = 0, n = 0; start < pods; start += PAGE, n++) {
    const last = start + PAGE >= pods;
    pages.push(
      encodeEnvelope({
        apiVersion: 'v1',
        kind: 'PodList',
        metadata: { resourceVersion: String(pods), ...(last ? {} : { continue: `page-${n + 1}` }) },
        items: Array.from({ length: Math.min(PAGE, pods - start) }, (_, i) => {
          const { apiVersion: _a, kind: _k, ...item } = makePod({ index: start + i, resourceVersion: start + i + 1, revision: 1 });
          return item;
        }),
      }),
    );
  }
  /** Per page: when its request came, when its body had been written (ms, this process's clock). */
  let log: { page: number; asked: number; written?: number }[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    if (url.pathname === '/log') return res.end(JSON.stringify(log.splice(0)));
    if (url.searchParams.get('watch')) return void res.writeHead(200, { 'Content-Type': 'application/json' }).flushHeaders(); // quiet
    const token = url.searchParams.get('continue');
    const page = token ? Number(token.slice('page-'.length)) : 0;
    const entry: { page: number; asked: number; written?: number } = { page, asked: performance.now() };
    log.push(entry);
    const delay = Number(process.env.PAGE_DELAY_MS ?? '0');
    setTimeout(() => {
      res.writeHead(200, { 'Content-Type': 'application/vnd.kubernetes.protobuf' });
      res.end(pages[page], () => (entry.written = performance.now()));
    }, delay);
  });
  server.listen(0, '127.0.0.1', () => process.send!((server.address() as { port: number }).port));
  process.on('message', (m: { delay: number }) => {
    process.env.PAGE_DELAY_MS = String(m.delay);
    log = [];
  });
} else {
  const [podsArg = '50000', delaysArg = '0,20', repsArg = '3'] = process.argv.slice(2);
  const { informer, Pod } = await import('../../src/index.ts');
  const { httpListWatch } = await import('../../src/1-transport/httpTransport.ts');
  const { tap } = await import('rxjs');
  const pin = spawnSync('taskset', ['--version']).status === 0 && cpus().length >= 2;
  const last = String(cpus().length - 1);
  const self = fileURLToPath(import.meta.url);
  const args = ['--conditions=rx-informer-source', self, '--server', podsArg];
  const child = pin
    ? spawn('taskset', ['-c', last, process.execPath, ...args], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    : spawn(process.execPath, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  if (pin) spawnSync('taskset', ['-cp', Array.from({ length: cpus().length - 1 }, (_, i) => i).join(','), String(process.pid)]);
  const port = await new Promise<number>((resolve) => child.once('message', (p) => resolve(p as number)));
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'b', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'c', cluster: 'b', user: 'u' }],
    currentContext: 'c',
  });
  const pods = Number(podsArg);
  const sync = async (prefetchPages: boolean) => {
    // The reflector's wait for each page: from its ask (the list's subscription) to the page (decoded, emitted).
    const waits: number[] = [];
    const http = httpListWatch(kc, { resource: Pod }, { lazyDecode: true, encoding: 'protobuf', prefetchPages });
    const timed = {
      ...http,
      list: (options: Parameters<typeof http.list>[0]) => {
        let asked = 0;
        return http
          .list(options)
          .pipe(tap({ subscribe: () => (asked = performance.now()), next: () => waits.push(performance.now() - asked) }));
      },
    };
    const pods$ = informer(timed, Pod, { pageSize: PAGE });
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const running = pods$.store$.subscribe();
    await firstValueFrom(pods$.synced$.pipe(filter(Boolean)));
    const wall = performance.now() - t0;
    const c = process.cpuUsage(c0);
    const count = (await firstValueFrom(pods$.store$)).keys().length;
    running.unsubscribe();
    const log = (await (await fetch(`http://127.0.0.1:${port}/log`)).json()) as { page: number; asked: number; written: number }[];
    if (process.env.SHOW_LOG)
      console.log(prefetchPages, log.map((e) => `${e.page}@${Math.round(e.asked)}-${Math.round(e.written)}`).join(' '));
    const gaps = log.slice(1).map((entry, i) => entry.asked - log[i]!.written);
    if (count !== pods) throw new Error(`synced ${count} of ${pods}`);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    return { wall, cpu: (c.user + c.system) / 1000, gap: mean(gaps), ask: mean(waits), pages: log.length };
  };
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const f = (x: number) => Math.round(x).toLocaleString('en-US');
  console.log(
    `| delay a page | prefetch | wall ms to synced (reps) | CPU ms | a page, ask → page, ms | page N sent → N+1 asked, ms | pages |`,
  );
  console.log(`|---:|---|---|---:|---:|---:|---:|`);
  for (const delay of delaysArg.split(',').map(Number)) {
    child.send({ delay });
    await sync(true); // warm-up (JIT, connections)
    const runs: Record<'on' | 'off', { wall: number; cpu: number; gap: number; ask: number; pages: number }[]> = { on: [], off: [] };
    for (let rep = 0; rep < Number(repsArg); rep++) {
      // Alternating, the order rotated each repetition.
      for (const on of rep % 2 === 0 ? [true, false] : [false, true]) {
        globalThis.gc?.();
        runs[on ? 'on' : 'off'].push(await sync(on));
      }
    }
    for (const key of ['on', 'off'] as const) {
      const r = runs[key];
      const row = [
        `${delay} ms`,
        key,
        `**${f(median(r.map((x) => x.wall)))}** (${r.map((x) => f(x.wall)).join(', ')})`,
        f(median(r.map((x) => x.cpu))),
        median(r.map((x) => x.ask)).toFixed(1),
        median(r.map((x) => x.gap)).toFixed(1),
        String(r[0]!.pages),
      ];
      console.log(`| ${row.join(' | ')} |`);
    }
  }
  child.kill();
}
