/**
 * `openTrace(path)`: one pass in chunks, every line checked as `readTrace` checks it (the same line numbers and
 * messages, whatever the chunk size), an index kept, each line read again from the file when asked for; a file
 * that changes after it was opened is an error naming the line.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { appendFileSync, mkdtempSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TestScheduler } from 'rxjs/testing';
import type { Subscription } from 'rxjs';
import { readTrace, TRACE_FORMAT_VERSION, TraceFormatError, type TraceHeader } from '../../../src/1-transport/trace/format.ts';
import { openTrace, traceSource, type TraceSource } from '../../../src/1-transport/trace/reader.ts';
import { replayListWatch } from '../../../src/testing/replayListWatch.ts';
import { InformerError } from '../../../src/0-model/errors.ts';

const header: TraceHeader = {
  type: 'header',
  format: 'rx-informer-trace',
  version: TRACE_FORMAT_VERSION,
  startedAt: '2026-01-01T00:00:00.000Z',
  resources: ['pods'],
  redacted: true,
};
const lines = (...records: readonly unknown[]) => records.map((r) => `${JSON.stringify(r)}\n`).join('');
const pod = (name: string, rv: string) => ({ metadata: { name, namespace: 'default', resourceVersion: rv, labels: { ünïcode: '✓' } } });
const list = { type: 'list', at: 0, id: 0, options: { resourceVersion: '0', limit: 1 } };
const page = { type: 'page', at: 5, id: 0, resourceVersion: '10', continue: 'c1', items: [pod('a', '9')] };
const end = (at: number, id = 0) => ({ type: 'end', at, id, how: 'complete' });
const TEXT = lines(
  header,
  list,
  page,
  end(6),
  { type: 'list', at: 7, id: 1, options: { continue: 'c1', limit: 1 } },
  { type: 'page', at: 9, id: 1, resourceVersion: '10', items: [pod('b', '10')] },
  end(9, 1),
  { type: 'watch', at: 10, id: 2, options: { resourceVersion: '10', allowWatchBookmarks: true } },
  { type: 'event', at: 30, id: 2, event: { type: 'ADDED', object: pod('c', '11') } },
  { type: 'event', at: 30, id: 2, event: { type: 'MODIFIED', object: pod('c', '12') } },
  { type: 'failure', at: 90, id: 2, error: { reason: 'ServerError', message: 'HTTP 500', status: 500, phase: 'watch' } },
  { type: 'stop', at: 100, why: 'closed' },
);

const dir = mkdtempSync(join(tmpdir(), 'rx-informer-reader-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
function file(text: string): string {
  const path = join(dir, `t${files++}.jsonl`);
  writeFileSync(path, text);
  return path;
}

function failure(open: () => unknown): TraceFormatError {
  try {
    open();
  } catch (e) {
    if (e instanceof TraceFormatError) return e;
    throw e;
  }
  throw new Error('read without an error');
}

const everyLine = (source: TraceSource) => Array.from({ length: source.length }, (_, i) => source.read(i));

describe('openTrace', () => {
  it.each([1, 7, 64, 1 << 20])(
    'in chunks of %i bytes: the header, an index of every line, each line read back as readTrace reads it',
    (chunkBytes) => {
      const whole = readTrace(TEXT);
      const streamed = openTrace(file(TEXT), { chunkBytes });
      expect(streamed.header).toEqual(whole.header);
      expect(streamed.length).toBe(whole.lines.length);
      expect(everyLine(streamed)).toEqual(whole.lines);
      const memory = traceSource(whole);
      for (let i = 0; i < whole.lines.length; i++) {
        expect([streamed.typeOf(i), streamed.atOf(i), streamed.idOf(i), streamed.requestAt(i)]).toEqual([
          memory.typeOf(i),
          memory.atOf(i),
          memory.idOf(i),
          memory.requestAt(i),
        ]);
      }
      streamed.release();
    },
  );

  // The hostile traces of format.spec.ts, through the file: the same line, the same message.
  it.each([
    ['empty', ''],
    ['truncated: the last line cut', lines(header, list).slice(0, -8)],
    ['another format version', lines({ ...header, version: 2 }, list)],
    ['not a trace', lines({ hello: 1 })],
    ['not JSON', `${lines(header)}{"type":\n`],
    ['times going backwards', lines(header, { ...list, at: 9 }, { ...page, at: 3 })],
    ['a page of no open request', lines(header, page)],
    ['pages that do not chain', lines(header, list, page, end(6), { type: 'list', at: 8, id: 1, options: { continue: 'other' } })],
    ['a line after the stop line', lines(header, { type: 'stop', at: 1, why: 'maxBytes' }, list)],
    ['a request line over 64 KiB', lines(header, { ...list, options: { continue: 'x'.repeat(70_000) } })],
    ['an option no request has', lines(header, { ...list, options: { limit: 1, pad: 'x' } })],
    ['a request for a resource the header does not list', lines({ ...header, resources: [] }, { ...list, resource: 'secrets' })],
    [
      'a line nested 200,000 levels deep',
      `${lines(header, list)}{"type":"page","at":1,"id":0,"resourceVersion":"1","items":[${'['.repeat(200_000)}${']'.repeat(200_000)}]}\n`,
    ],
  ])('%s: the error readTrace gives, with its line', (_name, text) => {
    const expected = failure(() => readTrace(text));
    for (const chunkBytes of [3, 1 << 20]) expect(failure(() => openTrace(file(text), { chunkBytes })).message).toBe(expected.message);
  });

  it('a line over the limit is refused as it is read, before it is held whole (even one never ended)', () => {
    const big = { ...page, items: [pod('x'.repeat(5000), '1')] };
    const path = file(lines(header, list, big));
    expect(failure(() => openTrace(path, { maxLineBytes: 1000, chunkBytes: 256 })).message).toBe('trace line 3: longer than 1000 bytes');
    const unended = file(lines(header, list, big).slice(0, -1));
    expect(failure(() => openTrace(unended, { maxLineBytes: 1000, chunkBytes: 256 })).message).toBe('trace line 3: longer than 1000 bytes');
    expect(failure(() => openTrace(unended, { chunkBytes: 256 })).message).toBe('trace line 3: truncated: the last line has no newline');
  });

  it('a file that changes after it was opened: reading it is an error naming the line, until it is opened again', () => {
    const path = file(TEXT);
    const trace = openTrace(path);
    expect(trace.read(1).type).toBe('page');
    appendFileSync(path, lines({ type: 'stop', at: 200, why: 'closed' }));
    expect(failure(() => trace.read(2)).message).toMatch(/^trace line 4: the file changed after it was opened \(\d+ bytes then, \d+ now\)/);
    // The same size, another time of change.
    const same = file(TEXT);
    const again = openTrace(same);
    writeFileSync(same, TEXT.replace('"ADDED"', '"DELETE"'));
    utimesSync(same, new Date(), new Date(Date.now() + 60_000));
    expect(() => again.read(7)).toThrow(TraceFormatError);
    again.release();
    // Another file moved to the path, of the same size and time.
    const moved = file(TEXT);
    utimesSync(moved, 1_000, 1_000);
    const third = openTrace(moved);
    third.release();
    const other = file(TEXT);
    utimesSync(other, 1_000, 1_000);
    expect(statSync(other).mtimeMs).toBe(statSync(moved).mtimeMs);
    renameSync(other, moved);
    expect(failure(() => third.read(0)).message).toMatch(/^trace line 2: the file changed after it was opened/);
    trace.release();
  });

  it('replayListWatch plays an opened file as it plays the text; a line that cannot be read fails the request and is a mismatch', () => {
    const play = (trace: string | TraceSource) => {
      const seen: string[] = [];
      const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
      const replay = replayListWatch(trace, { scheduler });
      scheduler.run(() => {
        const note = (what: string) => (x?: unknown) => void seen.push(`${scheduler.now()} ${what} ${JSON.stringify(x ?? '')}`);
        const subs: Subscription[] = [];
        subs.push(
          replay.list({ resourceVersion: '0', limit: 1 }).subscribe({ next: note('page'), complete: note('end'), error: note('error') }),
        );
        subs.push(replay.list({ continue: 'c1', limit: 1 }).subscribe({ next: note('page'), complete: note('end'), error: note('error') }));
        subs.push(
          replay.watch({ resourceVersion: '10', allowWatchBookmarks: true }).subscribe({ next: note('frame'), error: note('error') }),
        );
      });
      return { seen, replay };
    };
    const fromText = play(TEXT);
    const path = file(TEXT);
    const fromFile = play(openTrace(path));
    expect(fromFile.seen).toEqual(fromText.seen);
    expect(fromFile.seen).toHaveLength(7);
    expect(fromFile.replay.mismatches).toEqual([]);

    const changing = openTrace(path);
    appendFileSync(path, '\n');
    const broken = play(changing);
    // Each request errors when it comes to a line it cannot read (the second list's page at 2 ms, the first's at 5).
    expect(broken.seen.map((s) => s.split(' ').slice(0, 2).join(' '))).toEqual(['2 error', '5 error', '20 error']);
    expect(broken.replay.mismatches.map((m) => m.message)).toEqual([
      expect.stringMatching(/^replay: trace line 6: the file changed after it was opened/),
      expect.stringMatching(/^replay: trace line 3: the file changed after it was opened/),
      expect.stringMatching(/^replay: trace line 9: the file changed after it was opened/),
    ]);
    expect(failure(() => changing.read(0)).line).toBe(2);
  });
});

describe('replayListWatch over a file', () => {
  it('an error while playing is an InformerError of the request', () => {
    const path = file(TEXT);
    const trace = openTrace(path);
    writeFileSync(path, '');
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    scheduler.run(({ expectObservable }) => {
      expectObservable(replayListWatch(trace, { scheduler }).list({ resourceVersion: '0', limit: 1 })).toBe(
        '5ms #',
        undefined,
        expect.any(InformerError),
      );
    });
  });
});
