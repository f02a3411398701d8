/**
 * The emulator refuses to replay over HTTP (`startApiServer({ replay })`) every trace the library's reader refuses
 * (`readTrace`, which `replayListWatch` reads with), at the same line, with the same words after `replay: `: the
 * reader's table of hostile traces, run through both. The emulator imports nothing of the library, so its rules are
 * its own copy (packages/emulator/src/traceCheck.ts); this spec is what keeps the copy the library's.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startApiServer } from 'rx-informer-emulator';
import { REASON_CLASSES } from '../../src/0-model/errors.ts';
import {
  MAX_TRACE_AT_MS,
  MAX_TRACE_DEPTH,
  MAX_TRACE_LINE_BYTES,
  MAX_TRACE_REQUEST_LINE_BYTES,
  MAX_TRACE_RESOURCES,
  readTrace,
  TRACE_FORMAT,
  TRACE_FORMAT_VERSION,
  TraceFormatError,
} from '../../src/1-transport/trace/format.ts';
import * as emulator from '../../packages/emulator/src/traceCheck.ts';
import { end, header, HOSTILE_TRACES, lines, list, page } from '../1-transport/trace/hostileTraces.ts';

/** What `startApiServer({ replay })` rejects with, or undefined when it serves the trace. */
async function refusal(replay: string | { file: string }): Promise<Error | undefined> {
  try {
    const api = await startApiServer({ replay });
    await api.close();
    return undefined;
  } catch (error) {
    return error as Error;
  }
}

function libraryRefusal(text: string): TraceFormatError {
  try {
    readTrace(text);
  } catch (e) {
    if (e instanceof TraceFormatError) return e;
    throw e;
  }
  throw new Error('the library reads it');
}

describe("the emulator's replay refuses what the library's reader refuses", () => {
  it.each(HOSTILE_TRACES)('%s: refused at the same line, with the same words', async (_name, text, line, message) => {
    const ours = libraryRefusal(text);
    const error = await refusal(text);
    expect(error?.message).toMatch(new RegExp(`^replay: trace line ${line}: `));
    expect(error?.message).toMatch(message);
    expect(error?.message).toBe(`replay: ${ours.message}`);
  });

  // Schema issues, line by line: the words are zod's in the library, the emulator's own checks' here.
  const L = { type: 'list', at: 0, id: 0, options: {} };
  const W = { type: 'watch', at: 0, id: 0, options: {} };
  const failed = (error: Record<string, unknown>) => ({ type: 'failure', at: 1, id: 0, error: { reason: 'Gone', message: 'm', ...error } });
  it.each([
    [{ ...header, redacted: undefined }],
    [{ ...header, resources: 'x' }],
    [{ ...header, resources: ['pods', 1] }],
    [{ ...header, options: [] }],
    [{ ...header, server: 3 }],
    [header, null],
    [header, [1]],
    [header, { type: 5 }],
    [header, { ...L, id: -1 }],
    [header, { ...L, id: 1.5 }],
    [header, { ...L, at: -1 }],
    [header, { ...L, options: undefined }],
    [header, { ...L, resource: '' }],
    [header, { ...L, extra: 1 }],
    [header, { ...L, options: { limit: 'x', resourceVersionMatch: 'Bad' } }],
    [header, L, { type: 'page', at: 1, id: 0, items: [] }],
    [header, L, { type: 'page', at: 1, id: 0, resourceVersion: '1', items: {} }],
    [header, L, failed({ reason: 'Nope' })],
    [header, L, failed({ unreachable: false })],
    [header, L, failed({ retryAfterSeconds: -1, phase: 'later' })],
    [header, L, { type: 'end', at: 1, id: 0, how: 'x' }],
    [header, { type: 'stop', at: 1, why: 'closed', id: 0 }],
    [header, { ...W, options: { timeoutSeconds: 'x', resourceVersionMatch: 'Exact' } }],
    [header, W, { type: 'event', at: 1, id: 0, event: { type: 1 } }],
    [header, W, { type: 'event', at: 1, id: 0, event: { type: 'ADDED', x: 1 } }],
  ])('schema issue %#: the same words', async (...records) => {
    const text = lines(...records);
    expect((await refusal(text))?.message).toBe(`replay: ${libraryRefusal(text).message}`);
  });

  it('a trace both read is served: a well-formed trace with a stop line, a page with a notice, a failure', async () => {
    const text = lines(
      header,
      list,
      { ...page, notice: { reason: 'NotAcceptable', message: 'metadata only', status: 406 } },
      end(6),
      { type: 'watch', at: 7, id: 1, options: { resourceVersion: '10', allowWatchBookmarks: true, timeoutSeconds: 300 } },
      { type: 'event', at: 8, id: 1, event: { type: 'ERROR', object: { kind: 'Status', code: 410 } } },
      { type: 'failure', at: 9, id: 1, error: { reason: 'Expired', message: 'too old', status: 410, phase: 'watch' } },
      { type: 'stop', at: 10, why: 'closed' },
    );
    expect(readTrace(text).lines).toHaveLength(7);
    expect(await refusal(text)).toBeUndefined();
  });

  it('a file is refused as its text is', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rx-informer-replay-strict-'));
    try {
      const file = join(dir, 'hostile.jsonl');
      writeFileSync(file, lines(header, { ...list, options: { limit: 1, pad: 'x' } }));
      expect((await refusal({ file }))?.message).toBe('replay: trace line 2: options: Unrecognized key: "pad"');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("its limits, format and reasons are the library's", () => {
    expect([
      emulator.TRACE_FORMAT,
      emulator.TRACE_FORMAT_VERSION,
      emulator.MAX_TRACE_LINE_BYTES,
      emulator.MAX_TRACE_REQUEST_LINE_BYTES,
      emulator.MAX_TRACE_DEPTH,
      emulator.MAX_TRACE_AT_MS,
      emulator.MAX_TRACE_RESOURCES,
    ]).toEqual([
      TRACE_FORMAT,
      TRACE_FORMAT_VERSION,
      MAX_TRACE_LINE_BYTES,
      MAX_TRACE_REQUEST_LINE_BYTES,
      MAX_TRACE_DEPTH,
      MAX_TRACE_AT_MS,
      MAX_TRACE_RESOURCES,
    ]);
    expect([...emulator.TRACE_REASONS].sort()).toEqual(Object.keys(REASON_CLASSES).sort());
  });
});
