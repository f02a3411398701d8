import { describe, expect, it } from 'vitest';
import { EMPTY, of } from 'rxjs';
import { testScheduler } from '../../support/testScheduler.ts';
import { record } from '../../../src/1-transport/trace/record.ts';
import { traceWriter, type TraceWriter } from '../../../src/1-transport/trace/writer.ts';
import { readTrace, type TraceLine } from '../../../src/1-transport/trace/format.ts';
import type { LinedFrame, ListWatch, RawWatchEvent } from '../../../src/1-transport/listWatch.ts';
import { fakeListWatch, httpFailure, listPage, watchBookmark, watchEvent, watchStatus } from '../../../src/testing/index.ts';
import { InformerError } from '../../../src/0-model/errors.ts';

const pod = (name: string, rv: string) => ({ metadata: { name, namespace: 'default', resourceVersion: rv } });
const secret = (name: string, value: string) => ({
  kind: 'Secret',
  metadata: { name, namespace: 'default', resourceVersion: '3' },
  data: { password: value },
});

/** Records into a string; returns it and the writer. */
function recorder(options: Partial<Parameters<typeof traceWriter>[0]> = {}) {
  const out = { text: '' };
  const writer = traceWriter({ write: (line) => (out.text += line), resources: ['pods'], ...options });
  return { out, writer };
}
const withoutAt = (lines: readonly TraceLine[]) => lines.map(({ at: _at, ...rest }) => rest);

describe('record', () => {
  it('writes each request, what it emitted and how it ended, at the recorder clock’s times', () => {
    testScheduler().run(({ cold, expectObservable, flush }) => {
      const fake = fakeListWatch({
        lists: [cold('--(p|)', { p: listPage('10', [pod('a', '9')], 'next') })],
        watches: [
          cold('-a-b-s-#', { a: watchEvent('ADDED', pod('b', '11')), b: watchBookmark('12'), s: watchStatus(410) }, httpFailure(500)),
        ],
      });
      const { out, writer } = recorder();
      const recorded = record(fake, writer);
      expectObservable(recorded.list({ resourceVersion: '0', limit: 500 })).toBe('--(p|)', { p: listPage('10', [pod('a', '9')], 'next') });
      expectObservable(recorded.watch({ resourceVersion: '10', allowWatchBookmarks: true }), '----^').toBe(
        '-----a-b-s-#',
        {
          a: watchEvent('ADDED', pod('b', '11')),
          b: watchBookmark('12'),
          s: watchStatus(410),
        },
        httpFailure(500),
      );
      flush();
      writer.close();
      const trace = readTrace(out.text);
      expect(trace.lines.map((l) => [l.type, l.at])).toEqual([
        ['list', 0],
        ['page', 2],
        ['end', 2],
        ['watch', 4],
        ['event', 5],
        ['event', 7],
        ['event', 9],
        ['failure', 11],
        ['stop', 11],
      ]);
      expect(withoutAt(trace.lines)[0]).toEqual({ type: 'list', id: 0, options: { limit: 500, resourceVersion: '0' } });
      expect(withoutAt(trace.lines)[1]).toEqual({ type: 'page', id: 0, resourceVersion: '10', continue: 'next', items: [pod('a', '9')] });
      expect(withoutAt(trace.lines)[7]).toEqual({
        type: 'failure',
        id: 1,
        error: { reason: 'ServerError', message: 'HTTP 500', status: 500, phase: 'watch' },
      });
    });
  });

  it('writes an aborted request’s end, and a watch’s error frames as notices', () => {
    testScheduler().run(({ cold, expectObservable, flush }) => {
      const malformed = new InformerError('MalformedLine', 'bad line', { phase: 'watch' });
      const fake = fakeListWatch({ watches: [cold('-e---', { e: malformed })] });
      const { out, writer } = recorder();
      expectObservable(record(fake, writer).watch({}), '^--!').toBe('-e-', { e: malformed });
      flush();
      const lines = readTrace(out.text).lines;
      expect(lines.map((l) => [l.type, l.at])).toEqual([
        ['watch', 0],
        ['notice', 1],
        ['end', 3],
      ]);
      expect(lines[2]).toMatchObject({ how: 'unsubscribe' });
      expect(lines[1]).toMatchObject({ error: { reason: 'MalformedLine', message: 'bad line' } });
    });
  });

  it('redacts Secret values by default, keyed (equal values hash equal), and keeps them with redact: false', () => {
    const { out, writer } = recorder({ resources: ['secrets'] });
    const fake = { list: () => of(listPage('3', [secret('a', 'hunter2'), secret('b', 'hunter2')])), watch: () => EMPTY };
    record(fake, writer, { resource: 'secrets' }).list({}).subscribe();
    const [, page] = readTrace(out.text).lines;
    expect(out.text).not.toContain('hunter2');
    const items = (page as { items: { data: { password: string } }[] }).items;
    expect(items[0]!.data.password).toMatch(/^<redacted:[0-9a-f]{12}>$/);
    expect(items[1]!.data.password).toBe(items[0]!.data.password);

    const clear = recorder({ resources: ['secrets'], redacted: false });
    record(fake, clear.writer, { resource: 'secrets', redact: false }).list({}).subscribe();
    expect(clear.out.text).toContain('hunter2');
    expect(readTrace(clear.out.text).header.redacted).toBe(false);
  });

  it('redacts a Secret in a watch of another resource by its kind', () => {
    const { out, writer } = recorder();
    const fake = { list: () => EMPTY, watch: () => of(watchEvent('ADDED', secret('s', 'hunter2'))) };
    record(fake, writer, { resource: 'pods' }).watch({}).subscribe();
    expect(out.text).not.toContain('hunter2');
  });

  it('redacts list items shaped like Secrets (no kind, as a real server lists them) when not told the resource', () => {
    testScheduler().run(({ cold, flush }) => {
      const listed = {
        metadata: { name: 'db', namespace: 'default', resourceVersion: '3' },
        type: 'Opaque',
        data: { password: 'aHVudGVyMg==' },
      };
      const config = { metadata: { name: 'settings', namespace: 'default', resourceVersion: '4' }, data: { level: 'info' } };
      const fake = fakeListWatch({ lists: [cold('(p|)', { p: listPage('4', [listed, config]) })] });
      const { out, writer } = recorder();
      record(fake, writer).list({}).subscribe();
      flush();
      writer.close();
      expect(out.text).not.toContain('aHVudGVyMg==');
      expect(out.text).toContain('"level":"info"');
      // secret: false says the objects are not Secrets, whatever their shape.
      const clear = recorder();
      record(fakeListWatch({ lists: [cold('(p|)', { p: listPage('4', [listed]) })] }), clear.writer, { secret: false })
        .list({})
        .subscribe();
      flush();
      expect(clear.out.text).toContain('aHVudGVyMg==');
    });
  });

  it('passes through members of the ListWatch it does not know', () => {
    const inner = Object.assign(fakeListWatch(), { reachable: () => 'yes', flag: 3 });
    const { writer } = recorder();
    const recorded = record(inner, writer) as ListWatch & { reachable(): string; flag: number };
    expect(recorded.reachable()).toBe('yes');
    expect(recorded.flag).toBe(3);
  });
});

describe('traceWriter', () => {
  it.each([400, 523, 600, 611, 777, 901])(
    'never passes maxBytes (%i): a line that would is not written, the stop line ends the file',
    (maxBytes) => {
      const { out, writer } = recorder({ maxBytes });
      const fake = { list: () => of(listPage('1', [pod('x'.repeat(100), '1')])), watch: () => EMPTY };
      const recorded = record(fake, writer);
      for (let i = 0; i < 10; i++) recorded.list({}).subscribe();
      expect(writer.stopped).toBe('maxBytes');
      expect(Buffer.byteLength(out.text)).toBeLessThanOrEqual(maxBytes);
      const trace = readTrace(out.text); // every line whole, and it reads
      expect(trace.lines.at(-1)).toMatchObject({ type: 'stop', why: 'maxBytes' });
    },
  );

  it('refuses a maxBytes that cannot hold the header and the stop line, writing nothing; the least that can is kept', () => {
    const headerBytes = Buffer.byteLength(recorder().out.text);
    const written: string[] = [];
    const make = (maxBytes: number) => traceWriter({ write: (line) => void written.push(line), resources: ['pods'], maxBytes });
    expect(() => make(100)).toThrow(
      new RangeError(
        `a trace of at most 100 bytes cannot hold its header (${headerBytes} bytes) and its stop line (up to 64): ` +
          `give at least ${headerBytes + 64} bytes`,
      ),
    );
    expect(() => make(headerBytes + 63)).toThrow(RangeError);
    expect(written).toEqual([]);
    const least = make(headerBytes + 64);
    least.close();
    expect(Buffer.byteLength(written.join(''))).toBeLessThanOrEqual(headerBytes + 64);
    expect(readTrace(written.join('')).lines).toEqual([{ type: 'stop', at: expect.any(Number), why: 'closed' }]);
  });

  it('stops after durationMs on its clock, even with no traffic, and frees its timer on close', () => {
    testScheduler().run(({ expectObservable, flush }) => {
      const { out, writer } = recorder({ durationMs: 100 });
      expectObservable(writer.stopped$).toBe('100ms (s|)', { s: 'duration' });
      flush();
      expect(readTrace(out.text).lines).toEqual([{ type: 'stop', at: 100, why: 'duration' }]);
    });
    const scheduler = testScheduler();
    const { writer } = recorder({ durationMs: 100, scheduler });
    writer.close();
    expect(scheduler.actions).toHaveLength(0);
  });

  it('a throwing sink stops it (closed, with the error), and the requests go on', () => {
    let calls = 0;
    const writer = traceWriter({
      write: () => {
        if (++calls > 1) throw new Error('disk full');
      },
      resources: ['pods'],
    });
    const pages: unknown[] = [];
    record({ list: () => of(listPage('1', [])), watch: () => EMPTY }, writer)
      .list({})
      .subscribe((p) => pages.push(p));
    expect(pages).toHaveLength(1);
    expect(writer.stopped).toBe('closed');
    expect((writer.error as Error).message).toBe('disk full');
  });
});

describe('record over a ListWatch with watchLines (events written as the lines they came in)', () => {
  /** A ListWatch whose watch lines are `lines` (text as a server would send it), parsed for its frames. */
  const lined = (lines: readonly string[], frames = lines.map((l) => JSON.parse(l) as RawWatchEvent)): ListWatch => ({
    list: () => EMPTY,
    watch: () => of(...frames),
    watchLines: () => of(...frames.map((frame, i): LinedFrame => ({ frame, line: lines[i]!, bytes: Buffer.byteLength(lines[i]!) }))),
  });
  const goLine =
    '{"type":"ADDED","object":{"metadata":{"name":"a","namespace":"default","resourceVersion":"2"},"data":{"v":"\\u003cb\\u003e"}}}';

  it('writes the line as it came (no second serialization), and the trace reads as one written from the event', () => {
    const { out, writer } = recorder();
    const frames: unknown[] = [];
    record(lined([goLine]), writer)
      .watch({})
      .subscribe((f) => frames.push(f));
    expect(frames).toEqual([JSON.parse(goLine)]); // what passes on is the frame, not the line
    expect(out.text).toContain(`,"event":${goLine}}\n`);
    const serialized = recorder();
    record({ list: () => EMPTY, watch: () => of(JSON.parse(goLine) as RawWatchEvent) }, serialized.writer)
      .watch({})
      .subscribe();
    expect(serialized.out.text).not.toContain(goLine);
    expect(withoutAt(readTrace(out.text).lines)).toEqual(withoutAt(readTrace(serialized.out.text).lines));
  });

  it("never writes a Secret's line: by kind in a watch of another resource, or every object of a resource of Secrets", () => {
    const line = JSON.stringify({ type: 'ADDED', object: secret('s', 'hunter2') });
    const byKind = recorder();
    record(lined([line]), byKind.writer, { resource: 'pods' })
      .watch({})
      .subscribe();
    expect(byKind.out.text).not.toContain('hunter2');
    // Named secrets: even an object without a kind (as list items come).
    const kindless = JSON.stringify({ type: 'ADDED', object: { ...secret('s', 'hunter2'), kind: undefined } });
    const byResource = recorder({ resources: ['secrets'] });
    record(lined([kindless]), byResource.writer, { resource: 'secrets' })
      .watch({})
      .subscribe();
    expect(byResource.out.text).not.toContain('hunter2');
    expect(readTrace(byResource.out.text).lines[1]).toMatchObject({
      event: { object: { data: { password: expect.stringMatching(/^<redacted:/) } } },
    });
    // redact: false takes the line as it came.
    const clear = recorder();
    record(lined([line]), clear.writer, { resource: 'secrets', redact: false })
      .watch({})
      .subscribe();
    expect(clear.out.text).toContain(`,"event":${line}}\n`);
  });

  it('serializes frames that come without a line, error frames, and for a writer without eventLine', () => {
    const malformed = new InformerError('MalformedLine', 'bad line', { phase: 'watch' });
    const event = JSON.parse(goLine) as RawWatchEvent;
    const noLines: ListWatch = {
      list: () => EMPTY,
      watch: () => EMPTY,
      watchLines: () => of<LinedFrame[]>({ frame: event }, { frame: malformed }),
    };
    const { out, writer } = recorder();
    record(noLines, writer).watch({}).subscribe();
    expect(withoutAt(readTrace(out.text).lines).slice(1, 3)).toEqual([
      { type: 'event', id: 0, event },
      { type: 'notice', id: 0, error: { reason: 'MalformedLine', message: 'bad line', phase: 'watch' } },
    ]);
    expect(out.text).not.toContain(goLine);
    const plain = recorder();
    const { eventLine: _eventLine, ...withoutEventLine } = plain.writer;
    record(lined([goLine]), withoutEventLine as TraceWriter)
      .watch({})
      .subscribe();
    expect(plain.out.text).not.toContain(goLine);
  });

  it('does not pass the inner watchLines on: a recorder of a recorder records through both', () => {
    const inner = recorder();
    const outer = recorder();
    const twice = record(record(lined([goLine]), inner.writer), outer.writer);
    expect(twice.watchLines).toBeUndefined();
    twice.watch({}).subscribe();
    expect(readTrace(inner.out.text).lines.map((l) => l.type)).toEqual(['watch', 'event', 'end']);
    expect(readTrace(outer.out.text).lines.map((l) => l.type)).toEqual(['watch', 'event', 'end']);
  });
});

describe('traceWriter.eventLine', () => {
  it.each([300, 403, 404, 405, 600])('never passes maxBytes (%i), counting the bytes it is told or measures', (maxBytes) => {
    const line = '{"type":"ADDED","object":{"metadata":{"name":"żółw"}}}';
    for (const told of [Buffer.byteLength(line), undefined]) {
      const { out, writer } = recorder({ maxBytes });
      const id = writer.nextId();
      writer.line({ type: 'watch', id, options: {} });
      for (let i = 0; i < 5 && writer.eventLine(id, line, told); i++);
      expect(Buffer.byteLength(out.text)).toBeLessThanOrEqual(maxBytes);
      expect(writer.bytes).toBe(Buffer.byteLength(out.text));
      expect(readTrace(out.text).lines.at(-1)).toMatchObject({ type: 'stop', why: 'maxBytes' });
    }
  });

  it('hands the line in parts to writeParts when given (written as their concatenation), whole to write otherwise', () => {
    const parts: (readonly string[])[] = [];
    const whole: string[] = [];
    const writer = traceWriter({ write: (text) => whole.push(text), writeParts: (p) => parts.push(p), resources: ['pods'] });
    writer.eventLine(writer.nextId(), '{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}}');
    writer.line({ type: 'end', id: 0, how: 'complete' });
    expect(parts).toHaveLength(1);
    expect(JSON.parse(parts[0]!.join(''))).toMatchObject({ type: 'event', id: 0, event: { type: 'BOOKMARK' } });
    expect(whole.map((t) => JSON.parse(t).type)).toEqual(['header', 'end']);
    expect(writer.bytes).toBe(Buffer.byteLength(whole.join('') + parts[0]!.join('')));
  });
});
