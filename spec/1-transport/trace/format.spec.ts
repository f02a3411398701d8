import { describe, expect, it } from 'vitest';
import {
  informerErrorOf,
  readTrace,
  recordedError,
  RecordedError,
  MAX_TRACE_LINE_CONTAINERS,
  MAX_TRACE_REQUESTS,
  readTraceHeader,
  TRACE_FORMAT_VERSION,
  TraceChecker,
  TraceFormatError,
} from '../../../src/1-transport/trace/format.ts';
import { end, header, HOSTILE_TRACES, lines, list, page } from './hostileTraces.ts';
import { InformerError } from '../../../src/0-model/errors.ts';
import { openTrace } from '../../../src/1-transport/trace/reader.ts';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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
  it.each(HOSTILE_TRACES)('%s: an error naming the line', (_name, text, line, message) => {
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

  it('a page of as many arrays and objects as the limit reads (audit24: they are counted before the parse)', () => {
    // The line and its items array are two: the rest are the items.
    const items = MAX_TRACE_LINE_CONTAINERS - 2;
    const text = `${lines(header, list)}{"type":"page","at":1,"id":0,"resourceVersion":"1","items":[${'{},'.repeat(items - 1)}{}]}\n`;
    expect(readTrace(text).lines).toHaveLength(2);
  });

  it('a trace of more requests than the limit is refused at the first one past it, naming its line (audit24)', () => {
    const checker = new TraceChecker(readTraceHeader(JSON.stringify(header)));
    let line = 2;
    const request = (id: number) => checker.check(`{"type":"watch","at":0,"id":${id},"options":{}}`, line++);
    for (let id = 0; id < MAX_TRACE_REQUESTS; id++) {
      request(id);
      checker.check(`{"type":"end","at":0,"id":${id},"how":"complete"}`, line++);
    }
    expect(() => request(MAX_TRACE_REQUESTS)).toThrow(`trace line ${line}: more than ${MAX_TRACE_REQUESTS} requests`);
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
