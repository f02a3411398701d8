/**
 * A recorded trace is byte for byte what it was: a fixed recording (a real kube-apiserver v1.20 list page and watch
 * lines, an `ERROR` 410, a Secret, a line that did not parse, a failure, the stop line, at fixed virtual times) written
 * through `traceWriter` and `traceFileSink` to a file equals `spec/fixtures/trace/recorded-v1.jsonl`, whatever way the
 * events reach `record` (parsed eagerly or lazily, each with its line) and whatever way the lines reach the sink (in
 * parts or whole). A change to the trace's bytes (member order, spacing, the line's end, how a line is cut into parts,
 * how the sink encodes them) fails here: the format is versioned, and a trace written by one release must read the
 * same in the next. The Secret's redacted values are keyed per recording (equal values stay equal within it), so
 * their 12 hex digits are the one thing compared by shape.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Subject, VirtualTimeScheduler } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { InformerError } from '../../../src/0-model/errors.ts';
import { parseWatchLine, parseWatchLineLazily } from '../../../src/1-transport/http/decode.ts';
import type { LinedFrame, ListPage, ListWatch, WatchFrame } from '../../../src/1-transport/listWatch.ts';
import { record } from '../../../src/1-transport/trace/record.ts';
import { traceFileSink } from '../../../src/1-transport/trace/traceFileSink.ts';
import { traceWriter } from '../../../src/1-transport/trace/writer.ts';

const fixtures = new URL('../../fixtures/kube-apiserver-v1.20/', import.meta.url);
const golden = new URL('../../fixtures/trace/recorded-v1.jsonl', import.meta.url);

const listBody = (
  JSON.parse(readFileSync(new URL('02c-list-configmaps.json', fixtures), 'utf8')) as {
    response: { body: { metadata: { resourceVersion: string }; items: unknown[] } };
  }
).response.body;
const watchLines = [
  ...readFileSync(new URL('03b-watch-configmaps-bookmarks-timeout75.ndjson', fixtures), 'utf8').split('\n'),
  ...readFileSync(new URL('04a-watch-rv1-too-old-410.ndjson', fixtures), 'utf8').split('\n'),
  // A Secret (written redacted, serialized again) and a ConfigMap whose text a serializer would spell otherwise
  // (Go's escapes, a number's form): written as it came.
  JSON.stringify({
    type: 'ADDED',
    object: {
      kind: 'Secret',
      apiVersion: 'v1',
      metadata: { name: 's', namespace: 'fixtures', resourceVersion: '700' },
      data: { k: 'aHVudGVyMg==' },
    },
  }),
  '{"type":"ADDED","object":{"kind":"ConfigMap","metadata":{"name":"\\u003cb\\u003e","resourceVersion":"701","generation":1.0},"data":{"k":"\\u00e9 é"}}}',
].filter((line) => line !== '');

const dirs: string[] = [];
afterEach(() => {
  vi.useRealTimers();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The recording, its events parsed as `decode` parses them; its text as the sink wrote it (`parts`: through `writeParts`). */
function recording(decode: 'eager' | 'lazy', parts: boolean): string {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date('2026-11-27T10:00:00.000Z'));
  const dir = mkdtempSync(join(tmpdir(), 'rx-informer-trace-bytes-'));
  dirs.push(dir);
  const path = join(dir, 'trace.jsonl');
  const file = traceFileSink(path);
  const clock = new VirtualTimeScheduler();
  const writer = traceWriter({
    write: (text) => file.write(text),
    ...(parts ? { writeParts: (p: readonly string[]) => file.writeParts(p) } : {}),
    resources: ['configmaps'],
    server: 'v1.20.2',
    options: { namespace: 'fixtures' },
    scheduler: clock,
  });
  const pages = new Subject<ListPage>();
  const lined = new Subject<LinedFrame>();
  const source: ListWatch = { list: () => pages, watch: () => new Subject<WatchFrame>(), watchLines: () => lined };
  const recorded = record(source, writer, { resource: 'configmaps' });
  const seen: unknown[] = [];
  recorded.list({ limit: 500 }).subscribe({ next: (p) => seen.push(p), error: () => undefined });
  clock.frame = 12;
  pages.next({ items: listBody.items, resourceVersion: listBody.metadata.resourceVersion });
  pages.complete();
  recorded.watch({ resourceVersion: '693', allowWatchBookmarks: true, timeoutSeconds: 75 }).subscribe({
    next: (f) => seen.push(f),
    error: () => undefined,
  });
  watchLines.forEach((line, i) => {
    clock.frame = 20 + 7 * i;
    const bytes = Buffer.from(line);
    const frame = decode === 'eager' ? parseWatchLine(line) : parseWatchLineLazily(bytes);
    lined.next({ frame, line, bytes: bytes.length });
  });
  clock.frame = 90;
  lined.next({ frame: new InformerError('MalformedLine', 'watch line is not JSON (3 chars, invalid at position 0)', { phase: 'watch' }) });
  clock.frame = 95;
  lined.error(new InformerError('NetworkError', 'watch: the connection closed mid-stream', { phase: 'watch' }));
  clock.frame = 100;
  writer.close();
  file.close();
  expect(seen).toHaveLength(watchLines.length + 2);
  return readFileSync(path, 'utf8');
}

const keyed = (text: string) => text.replace(/<redacted:[0-9a-f]{12}>/g, '<redacted:…>');

describe('a recorded trace, byte for byte', () => {
  it.each([
    ['eager', true],
    ['eager', false],
    ['lazy', true],
    ['lazy', false],
  ] as const)('events parsed %s, lines in parts %s: the golden trace', (decode, parts) => {
    const text = recording(decode, parts);
    expect(text).toMatch(/<redacted:[0-9a-f]{12}>/);
    expect(text).not.toContain('aHVudGVyMg==');
    expect(keyed(text)).toBe(keyed(readFileSync(golden, 'utf8')));
  });
});
