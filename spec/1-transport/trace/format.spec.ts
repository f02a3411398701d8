import { describe, expect, it } from 'vitest';
import {
  informerErrorOf,
  readTrace,
  recordedError,
  RecordedError,
  TRACE_FORMAT_VERSION,
  TraceFormatError,
  type TraceHeader,
} from '../../../src/1-transport/trace/format.ts';
import { InformerError } from '../../../src/0-model/errors.ts';
import { openTrace } from '../../../src/1-transport/trace/reader.ts';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const header: TraceHeader = {
  type: 'header',
  format: 'rx-informer-trace',
  version: TRACE_FORMAT_VERSION,
  startedAt: '2026-01-01T00:00:00.000Z',
  resources: ['pods'],
  redacted: true,
};
const lines = (...records: readonly unknown[]) => records.map((r) => `${JSON.stringify(r)}\n`).join('');
const list = { type: 'list', at: 0, id: 0, options: { resourceVersion: '0', limit: 1 } };
const page = { type: 'page', at: 5, id: 0, resourceVersion: '10', continue: 'c1', items: [{ metadata: { name: 'a' } }] };
const end = (at: number, id = 0) => ({ type: 'end', at, id, how: 'complete' });

function failure(text: string): TraceFormatError {
  try {
    readTrace(text);
  } catch (e) {
    if (e instanceof TraceFormatError) return e;
    throw e;
  }
  throw new Error('read without an error');
}

describe('readTrace', () => {
  it('reads a header and its lines, checked', () => {
    const trace = readTrace(lines(header, list, page, end(6), { type: 'stop', at: 7, why: 'closed' }));
    expect(trace.header.resources).toEqual(['pods']);
    expect(trace.lines.map((l) => l.type)).toEqual(['list', 'page', 'end', 'stop']);
  });

  // Each hostile trace: the line number, and what is wrong.
  it.each([
    ['empty', '', 1, /empty/],
    ['truncated: the last line cut', lines(header, list).slice(0, -8), 2, /truncated/],
    ['another format version', lines({ ...header, version: 2 }, list), 1, /format version 2; this reader reads version 1/],
    ['not a trace', lines({ hello: 1 }), 1, /not an rx-informer-trace header/],
    ['not JSON', `${lines(header)}{"type":\n`, 2, /not JSON/],
    ['a line of no known type', lines(header, { type: 'gossip', at: 0, id: 0 }), 2, /type/],
    ['a field of the wrong type', lines(header, { ...list, at: 'soon' }), 2, /at/],
    ['times going backwards', lines(header, { ...list, at: 9 }, { ...page, at: 3 }), 3, /time goes backwards \(3 ms after 9 ms\)/],
    ['a page of no open request', lines(header, page), 2, /not open/],
    ['a request id used twice', lines(header, list, page, end(6), { ...list, at: 7 }), 5, /used twice/],
    [
      'pages that do not chain',
      lines(header, list, page, end(6), { type: 'list', at: 8, id: 1, options: { continue: 'other' } }),
      5,
      /pages do not chain: a list continues from "other", the last page gave "c1"/,
    ],
    ['a line after the stop line', lines(header, { type: 'stop', at: 1, why: 'maxBytes' }, list), 3, /after the `stop` line/],
    ['a start that is no date', lines({ ...header, startedAt: 'yesterday' }, list), 1, /startedAt: Invalid ISO datetime/],
    ['a start without its offset', lines({ ...header, startedAt: '2026-01-01T10:00:00' }, list), 1, /startedAt: Invalid ISO datetime/],
    ['a start on no day', lines({ ...header, startedAt: '2026-02-31T10:00:00Z' }, list), 1, /startedAt: Invalid ISO datetime/],
    ['a time no date holds', lines(header, { ...list, at: 1e300 }), 2, /at: Too big/],
    // What a reader keeps of a request line is bounded: its options are the writer's fixed set, the line short.
    ['an option no request has', lines(header, { ...list, options: { limit: 1, pad: 'x' } }), 2, /options: Unrecognized key: "pad"/],
    [
      'a request line over 64 KiB',
      lines(header, { ...list, options: { continue: 'x'.repeat(70_000) } }),
      2,
      /a list request line longer than 65536 bytes/,
    ],
    // Writing such a line again (trim, the emulator) or copying it would overflow the stack.
    [
      'a line nested 200,000 levels deep',
      `${lines(header, list)}{"type":"page","at":1,"id":0,"resourceVersion":"1","items":[${'['.repeat(200_000)}${']'.repeat(200_000)}]}\n`,
      3,
      /nested deeper than 1000 levels/,
    ],
    // A request for a resource the header does not list would be replayed by nothing, silently.
    [
      'a request for a resource the header does not list',
      lines({ ...header, resources: [] }, { ...list, resource: 'secrets' }),
      2,
      /a list request for secrets the header does not list \(it lists none\)/,
    ],
    [
      'a request naming no resource, the header none',
      lines({ ...header, resources: [] }, list),
      2,
      /a list request for a resource the header/,
    ],
    [
      'a request for another resource',
      lines(header, { ...list, resource: 'secrets' }),
      2,
      /for secrets the header does not list \(it lists pods\)/,
    ],
  ])('%s: an error naming the line', (_name, text, line, message) => {
    const error = failure(text);
    expect(error.line).toBe(line);
    expect(error.message).toMatch(message);
    expect(error.message).toMatch(new RegExp(`^trace line ${line}: `));
  });

  it('a start with an offset reads; a file read from disk checks its start as a trace in memory does', () => {
    expect(readTrace(lines({ ...header, startedAt: '2026-01-01T10:00:00+02:00' }, list)).header.startedAt).toBe(
      '2026-01-01T10:00:00+02:00',
    );
    const dir = mkdtempSync(join(tmpdir(), 'rx-informer-format-'));
    try {
      writeFileSync(join(dir, 'bad.jsonl'), lines({ ...header, startedAt: 'yesterday' }, list));
      expect(() => openTrace(join(dir, 'bad.jsonl'))).toThrow(/^trace line 1: startedAt: Invalid ISO datetime$/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a line over the limit', () => {
    const big = { ...page, items: [{ metadata: { name: 'x'.repeat(2000) } }] };
    expect(() => readTrace(lines(header, list, big), { maxLineBytes: 1000 })).toThrow(/trace line 3: longer than 1000 bytes/);
  });

  it('a line nested as deep as the limit reads; strings full of brackets do not count', () => {
    // The page and its items are 2 levels: 998 more is 1000.
    const nested = (n: number) =>
      `${lines(header, list)}{"type":"page","at":1,"id":0,"resourceVersion":"1","items":[${'['.repeat(n)}"[[[[{{{{\\""${']'.repeat(n)}]}\n`;
    expect(readTrace(nested(998)).lines).toHaveLength(2);
    expect(() => readTrace(nested(999))).toThrow(/^trace line 3: nested deeper than 1000 levels$/);
  });

  it('zod issues come with the error', () => {
    expect(failure(lines(header, { ...list, at: -1 })).issues.length).toBeGreaterThan(0);
  });

  it('an InformerError as data and back: reason, message, status, phase, Retry-After, Status, unreachable', () => {
    const status = { kind: 'Status', code: 429, reason: 'TooManyRequests', message: 'slow down' };
    const error = new InformerError('TooManyRequests', 'slow down', {
      status: 429,
      phase: 'list',
      retryAfterSeconds: 2,
      statusObject: status,
    });
    const refused = new InformerError('NetworkError', 'ECONNREFUSED', { phase: 'watch', unreachable: true });
    for (const e of [error, refused]) {
      const data = RecordedError.parse(JSON.parse(JSON.stringify(recordedError(e))));
      const back = informerErrorOf(data);
      expect([back.reason, back.message, back.status, back.phase, back.retryAfterSeconds, back.statusObject, back.unreachable]).toEqual([
        e.reason,
        e.message,
        e.status,
        e.phase,
        e.retryAfterSeconds,
        e.statusObject,
        e.unreachable,
      ]);
    }
    expect(recordedError(new Error('boom'))).toEqual({ reason: 'Unknown', message: 'boom' });
  });
});
