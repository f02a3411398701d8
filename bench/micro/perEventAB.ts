/**
 * The eager informer's per-event path, A/B over copies of src/ in one process: each round lists a fresh informer of
 * each copy (untimed) and plays the same watch events into it, the copies taking turns, their order reversed every
 * other round, so that the machine's load (shared with other sessions) weighs on every copy alike. Where
 * perEvent.ts --src runs one copy a process, which a shared machine's load moves by ±25 % between runs.
 *
 *   node --expose-gc bench/micro/perEventAB.ts [cached=1000] [events=20000] [rounds=7] [--lines] SRC1,SRC2,…
 *
 * By default the frames are parsed beforehand (the pipeline alone: reflector, decode, deltaFifo, store, events$);
 * `--lines` hands each copy the watch lines through its own `parseWatchLine` (the transport's JSON decode too).
 * Prints each copy's main-thread CPU µs an event, round by round and the median, and each round's ratio of every
 * copy to the first (the median of the ratios and their range).
 */
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Observable, of } from 'rxjs';
import type * as Library from '../../src/index.ts';
import type * as Transport from '../../src/1-transport/httpTransport.ts';
import { makePod, playEvents } from '../workload/pods.ts';

const withLines = process.argv.includes('--lines');
const positional = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const srcs = (positional.find((a) => a.includes('/')) ?? join(import.meta.dirname, '..', '..', 'src')).split(',').map((s) => resolve(s));
const [cached = 1000, events = 20_000, rounds = 7] = positional.filter((a) => !a.includes('/')).map(Number);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc');

interface Meta {
  readonly metadata: { readonly name: string; readonly namespace?: string };
}

const listText = JSON.stringify(Array.from({ length: cached }, (_, i) => makePod({ index: i, resourceVersion: i + 1, revision: 0 })));
const lines: string[] = [];
for (const e of playEvents(cached, events, 6)) lines.push(`{"type":"${e.type}","object":${JSON.stringify(makePod(e.pod))}}`);
const frames = withLines ? [] : lines.map((line) => JSON.parse(line) as unknown);
if (!withLines) lines.length = 0;
let checksum = 0;

/** A copy's round maker: lists a fresh informer (the previous one unsubscribed) and returns the play. */
const copies = await Promise.all(
  srcs.map(async (src) => {
    const { informer, Pod } = (await import(pathToFileURL(join(src, 'index.ts')).href)) as typeof Library;
    const { parseWatchLine } = (await import(pathToFileURL(join(src, '1-transport', 'httpTransport.ts')).href)) as typeof Transport;
    let subscription: { unsubscribe(): void } | undefined;
    const prepare = (): (() => void) => {
      subscription?.unsubscribe();
      let feed: (() => void) | undefined;
      const pods = informer(
        {
          list: () => of({ items: JSON.parse(listText) as unknown[], resourceVersion: String(cached) }),
          watch: () =>
            new Observable((subscriber) => {
              feed = withLines
                ? () => {
                    for (const line of lines) subscriber.next(parseWatchLine(line));
                  }
                : () => {
                    for (const frame of frames) subscriber.next(frame as never);
                  };
            }),
        },
        Pod,
      );
      let seen = 0;
      subscription = pods.events$.subscribe((event) => {
        seen++;
        checksum += (event.object as Meta).metadata.name.length;
      });
      if (seen !== cached || !feed) throw new Error(`${src}: the informer synced ${seen} of ${cached}`);
      return () => {
        feed!();
        if (seen !== cached + events) throw new Error(`${src}: delivered ${seen - cached} of ${events} events`);
      };
    };
    return { src, prepare, perRound: [] as number[] };
  }),
);

for (let r = 0; r < rounds; r++) {
  const order = r % 2 === 0 ? copies : [...copies].reverse();
  for (const copy of order) {
    const play = copy.prepare();
    gc();
    const t0 = process.threadCpuUsage();
    play();
    const t = process.threadCpuUsage(t0);
    copy.perRound.push((t.user + t.system) / events);
  }
}

const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const load = (await import('node:os')).loadavg()[0]!.toFixed(1);
console.log(
  `${withLines ? 'lines' : 'parsed frames'}, cached=${cached} events=${events} rounds=${rounds}, load ${load}: main-thread CPU µs an event`,
);
for (const copy of copies) {
  const ratios = copy.perRound.map((x, i) => x / copies[0]!.perRound[i]!);
  console.log(
    `${copy.src}: median ${median(copy.perRound).toFixed(2)} (rounds ${copy.perRound.map((x) => x.toFixed(2)).join(' ')})` +
      (copy === copies[0]
        ? ''
        : `; / first: median ${median(ratios).toFixed(3)} (${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)})`),
  );
}
if (checksum < 0) console.log(checksum);
process.exit(0);
