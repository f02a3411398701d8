/**
 * What `record` costs per watch event by itself, in one process, without a server or an informer: the bench's
 * ≈ 4.7 KB pod events (2,000 lines, cycled), parsed as the transport parses them, pushed through `record` into a
 * trace file, in bursts of 14 events (a 64 KiB socket chunk) with a microtask between bursts, as a watch
 * stream read faster than it arrives delivers them within one turn of the event loop (the file sink writes at the
 * end of a turn or when its 256 KiB buffer is full: here, every ≈ 53 events). CPU time (user + system) of this
 * process per event, for each way, and its system share (the kernel's: writing the trace to the file is most of it,
 * see docs/performance.md "Recording a watch, end to end"):
 *
 *   parse         JSON.parse of each line alone (what the informer's transport does anyway, for scale)
 *   pass          frames through a ListWatch not recorded (the baseline of the three below)
 *   stringify     record over `watch`: each event serialized again (JSON.stringify), the line to `write` whole
 *   lines         record over `watchLines`: each event written as its line came, through `writeParts`
 *   lines-shm     the same to a file in /dev/shm (a tmpfs: the page cache without a disk behind it)
 *   lines-null    the same to /dev/null: what is left when the file system costs nothing
 *   writes        no informer, no record: the bytes `lines` writes (each event's trace line), written with
 *                 `writeSync` in 256 KiB calls in a tight loop to a fresh file beside `lines`' (writes-shm: in
 *                 /dev/shm; writes-null: to /dev/null): what the file system alone costs an event
 *   pre-…         pass, lines, lines-shm, lines-null with each line parsed once before the run (not in the timing):
 *                 what record's own path costs, without JSON.parse's time and its noise
 *   lazy-…        pass, stringify and lines with the events decoded lazily (`lazyDecode`) from the lines' bytes:
 *                 serialized again, a lazy event is parsed whole; written as it came, its line is decoded to text
 *
 *   node bench/micro/recordWatch.ts [events=100000] [rounds=3] [ways=parse,pass,stringify,lines,lines-null,lazy-pass,lazy-stringify,lazy-lines]
 */
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Subject, type Observable } from 'rxjs';
import type { LinedFrame, ListWatch, WatchFrame } from '../../src/1-transport/listWatch.ts';
import { parseWatchLineLazily } from '../../src/1-transport/http/decode.ts';
import { record } from '../../src/1-transport/trace/record.ts';
import { traceFileSink } from '../../src/1-transport/trace/traceFileSink.ts';
import { traceWriter } from '../../src/1-transport/trace/writer.ts';
import { makePod, playEvents } from '../workload/pods.ts';

const EVENTS = Number(process.argv[2] ?? 100_000);
const ROUNDS = Number(process.argv[3] ?? 3);
const WAYS = (process.argv[4] ?? 'parse,pass,stringify,lines,lines-null,lazy-pass,lazy-stringify,lazy-lines').split(',');
const BURST = 14;

const lines: string[] = [];
for (const event of playEvents(1000, 2000, 1)) lines.push(JSON.stringify({ type: event.type, object: makePod(event.pod) }));
const bytes = lines.map((line) => Buffer.byteLength(line));
/** The lines parsed once, for the `pre-` ways. */
const parsed = lines.map((line) => JSON.parse(line) as WatchFrame);
const buffers = lines.map((line) => Buffer.from(line));
const dir = mkdtempSync(join(tmpdir(), 'rx-informer-record-micro-'));
const shm = mkdtempSync('/dev/shm/rx-informer-record-micro-');
/** Where a way writes its trace: `…-shm` in /dev/shm, `…-null` to /dev/null, else in os.tmpdir(). */
const target = (way: string) => (way.endsWith('-null') ? '/dev/null' : join(way.endsWith('-shm') ? shm : dir, `${way}.jsonl`));
/** The trace lines `lines` writes, back to back (`at` and `id` as the first event's), for `writes`. */
const traceBytes = Buffer.from(lines.map((line) => `{"type":"event","at":0,"id":0,"event":${line}}\n`).join(''));

/** CPU µs per event of one way's run: the whole, and the system (kernel) part of it. */
interface Cpu {
  readonly cpu: number;
  readonly system: number;
}

/** Pushes EVENTS lines through `emit`, a microtask after every burst; CPU µs per event. */
async function timed(emit: (line: string, bytes: number, buffer: Buffer, index: number) => void): Promise<Cpu> {
  const start = process.cpuUsage();
  for (let i = 0; i < EVENTS; i++) {
    emit(lines[i % lines.length]!, bytes[i % bytes.length]!, buffers[i % buffers.length]!, i % lines.length);
    if (i % BURST === BURST - 1) await Promise.resolve();
  }
  await Promise.resolve();
  const used = process.cpuUsage(start);
  return { cpu: (used.user + used.system) / EVENTS, system: used.system / EVENTS };
}

/** A ListWatch whose watch is `frames` (and `watchLines` is `lined`), subscribed through `record` (or not). */
async function through(way: string): Promise<Cpu> {
  if (way === 'parse') return timed((line) => JSON.parse(line));
  if (way.startsWith('writes')) return writes(target(way));
  const frames = new Subject<WatchFrame>();
  const lined = new Subject<LinedFrame>();
  const base: ListWatch = { list: () => frames as unknown as Observable<never>, watch: () => frames };
  const kind = way.replace(/^(lazy|pre)-/, '');
  const source: ListWatch = kind.startsWith('lines') ? { ...base, watchLines: () => lined } : base;
  const file = traceFileSink(target(way));
  const writer = traceWriter({ write: (t) => file.write(t), writeParts: (p) => file.writeParts(p), resources: ['pods'] });
  const listWatch = kind === 'pass' ? source : record(source, writer, { resource: 'pods' });
  let seen = 0;
  const subscription = listWatch.watch({}).subscribe(() => seen++);
  const lazy = way.startsWith('lazy-');
  const cpu = await timed(
    way.startsWith('pre-')
      ? kind.startsWith('lines')
        ? (line, n, _buffer, i) => lined.next({ frame: parsed[i]!, line, bytes: n })
        : (_line, _n, _buffer, i) => frames.next(parsed[i]!)
      : lazy
        ? kind.startsWith('lines')
          ? (_line, n, buffer) => lined.next({ frame: parseWatchLineLazily(buffer), line: buffer.toString('utf8'), bytes: n })
          : (_line, _n, buffer) => frames.next(parseWatchLineLazily(buffer))
        : kind.startsWith('lines')
          ? (line, n) => lined.next({ frame: JSON.parse(line) as WatchFrame, line, bytes: n })
          : (line) => frames.next(JSON.parse(line) as WatchFrame),
  );
  subscription.unsubscribe();
  writer.close();
  file.close();
  if (seen !== EVENTS) throw new Error(`${way}: ${seen} of ${EVENTS} events`);
  return cpu;
}

/** EVENTS events' trace bytes (cycling the 2,000 lines') written to `path` in 256 KiB `writeSync` calls; CPU µs per event. */
function writes(path: string): Cpu {
  const fd = openSync(path, 'w');
  const chunk = 256 * 1024;
  let left = Math.round((traceBytes.length / lines.length) * EVENTS);
  let at = 0;
  const start = process.cpuUsage();
  while (left > 0) {
    const length = Math.min(chunk, left, traceBytes.length - at);
    writeSync(fd, traceBytes, at, length);
    left -= length;
    at = (at + length) % traceBytes.length;
  }
  const used = process.cpuUsage(start);
  closeSync(fd);
  return { cpu: (used.user + used.system) / EVENTS, system: used.system / EVENTS };
}

const results = new Map<string, number[]>();
const systems = new Map<string, number[]>();
for (let round = 0; round < ROUNDS; round++)
  for (const way of WAYS) {
    const { cpu, system } = await through(way);
    results.set(way, [...(results.get(way) ?? []), cpu]);
    systems.set(way, [...(systems.get(way) ?? []), system]);
  }
rmSync(dir, { recursive: true, force: true });
rmSync(shm, { recursive: true, force: true });

const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const passOf = (way: string) => (results.has(way) ? median(results.get(way)!) : undefined);
console.log(`${EVENTS} events of ≈ ${Math.round(bytes.reduce((a, b) => a + b, 0) / bytes.length)} B, ${ROUNDS} rounds, medians`);
for (const [way, values] of results) {
  const m = median(values);
  const base = way.startsWith('lazy-') ? 'lazy-pass' : way.startsWith('pre-') ? 'pre-pass' : 'pass';
  const pass = passOf(base);
  const extra =
    pass !== undefined && way !== 'parse' && !way.startsWith('writes') && way !== base
      ? `  (+${(m - pass).toFixed(2)} µs over ${base})`
      : '';
  const system = median(systems.get(way)!);
  console.log(
    `${way.padEnd(12)} ${m.toFixed(2)} µs CPU/event, system ${system.toFixed(2)}${extra}   [${values.map((v) => v.toFixed(2)).join(', ')}]`,
  );
}
