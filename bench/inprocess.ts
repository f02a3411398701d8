/**
 * In-process cost of the pipeline over the raw limit, without HTTP or a
 * second process: quick to run while working on the hot path (about 30 s),
 * and steadier than the full suite because both sides parse the same
 * ready-made text. It is a development aid, not the benchmark of record.
 *
 *   node --expose-gc bench/inprocess.ts [--pods 1000] [--events 40000] [--rounds 5]
 *
 * watch: CPU µs per watch event, raw (JSON.parse + Map.set/delete) and rx
 * (the informer over a ListWatch fed the same lines: listAndWatch → decode →
 * deltaFifo → store → events$, one subscriber), and rx with lazy decoding
 * (reading metadata only, or every member). Fastest round of each.
 */
import { Observable, of } from 'rxjs';
import { parseWatchLine, parseWatchLineLazily } from '../src/1-transport/httpTransport.ts';
import { lazyParseList } from '../src/1-transport/lazyList.ts';
import { informer, Pod } from '../src/index.ts';
import { type ListWatch } from '../src/pipeline.ts';
import { makePod, playEvents } from './workload/pods.ts';

const args = new Map<string, number>();
for (let i = 2; i + 1 < process.argv.length; i += 2) args.set(process.argv[i]!.replace(/^--/, ''), Number(process.argv[i + 1]));
const pods = args.get('pods') ?? 1000;
const events = args.get('events') ?? 40_000;
const rounds = args.get('rounds') ?? 5;
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

const listText = JSON.stringify(Array.from({ length: pods }, (_, i) => makePod({ index: i, resourceVersion: i + 1, revision: 0 })));
const lines: string[] = [];
for (const e of playEvents(pods, events, 6)) lines.push(`{"type":"${e.type}","object":${JSON.stringify(makePod(e.pod))}}`);
// The lazy transport reads lines as bytes; the eager one gets them decoded (the splitter's work, left out of both).
const lineBytes = lines.map((line) => Buffer.from(line, 'utf8'));

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

interface Meta {
  readonly metadata: { readonly name: string; readonly namespace?: string };
}

function raw(): number {
  const cache = new Map<string, Meta>();
  for (const o of JSON.parse(listText) as Meta[]) cache.set(`${o.metadata.namespace}/${o.metadata.name}`, o);
  gc!();
  const start = cpuMs();
  for (const line of lines) {
    const event = JSON.parse(line) as { type: string; object: Meta };
    const key = `${event.object.metadata.namespace}/${event.object.metadata.name}`;
    if (event.type === 'DELETED') cache.delete(key);
    else cache.set(key, event.object);
  }
  return cpuMs() - start;
}

function rx(lazy = false, read: (pod: Pod) => unknown = () => undefined): number {
  let play: (() => void) | undefined;
  const listWatch: ListWatch = {
    list: () =>
      of({
        items: (lazy ? lazyParseList(Buffer.from(`{"items":${listText}}`)).items : JSON.parse(listText)) as unknown[],
        resourceVersion: String(pods),
      }),
    // The watch hands over the lines when told to, as the transport would, one parsed frame at a time.
    watch: () =>
      new Observable((subscriber) => {
        play = () => {
          if (lazy) for (const line of lineBytes) subscriber.next(parseWatchLineLazily(line));
          else for (const line of lines) subscriber.next(parseWatchLine(line));
        };
      }),
  };
  const pods$ = informer(listWatch, Pod);
  let seen = 0;
  const subscription = pods$.events$.subscribe((event) => {
    seen++;
    read(event.object);
  });
  gc!();
  const start = cpuMs();
  play!();
  const ms = cpuMs() - start;
  subscription.unsubscribe();
  if (seen !== pods + events) throw new Error(`rx delivered ${seen} events, expected ${pods + events}`);
  return ms;
}

const times = { raw: [] as number[], rx: [] as number[], lazy: [] as number[], rxRead: [] as number[], lazyRead: [] as number[] };
let sink = 0;
// Reading every member: what a handler that looks at spec and status of every event does.
const readAll = (pod: Pod) => {
  const read = pod as { spec?: unknown; status?: unknown; metadata: { managedFields?: unknown } };
  if (read.spec && read.status && read.metadata.managedFields) sink++;
};
for (let r = 0; r < rounds; r++) {
  times.raw.push(raw());
  times.rx.push(rx());
  times.lazy.push(rx(true));
  times.rxRead.push(rx(false, readAll));
  times.lazyRead.push(rx(true, readAll));
}
if (sink === 0) throw new Error('nothing read');
const best = (ms: number[]) => (Math.min(...ms) * 1000) / events;
console.log(`${pods} pods, ${events} watch events, best of ${rounds} rounds (CPU µs per event):`);
console.log(`  raw  ${best(times.raw).toFixed(2)}`);
console.log(`  rx   ${best(times.rx).toFixed(2)}  (+${(best(times.rx) - best(times.raw)).toFixed(2)})`);
console.log(
  `  rx, lazyDecode, metadata read                       ${best(times.lazy).toFixed(2)}  (${(best(times.lazy) - best(times.raw)).toFixed(2)})`,
);
console.log(`  rx, spec, status and managedFields read              ${best(times.rxRead).toFixed(2)}`);
console.log(
  `  rx, lazyDecode, spec, status and managedFields read  ${best(times.lazyRead).toFixed(2)}  (${(best(times.lazyRead) / best(times.rxRead)).toFixed(2)}×)`,
);
process.exit(0);
