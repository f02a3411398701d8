/**
 * `rx-informer replay FILE`: a trace's changes printed as `watch` prints them, at their recorded times, with
 * windows; the bin's wiring (exit codes, a trace that cannot be read) through one child process each.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import {
  chmodSync,
  closeSync,
  constants,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openTrace, readTrace, traceSource, traceText, trimTrace, type TraceSource } from '../../src/pipeline.ts';
import { tempFileFor, trimToFile } from '../../src/cli/trimFile.ts';
import { runTrimJob } from '../../src/cli/trimWorker.ts';
import { shapeOf, writeBigTrace } from '../../bench/workload/bigTrace.ts';
import { parseReplayLine, type ReplayCommandOptions } from '../../src/cli/replayArgs.ts';
import { replayCommand } from '../../src/cli/replayCommand.ts';
import { cli, cliRuns, MAIN, NODE } from './support.ts';

const execFilePromise = promisify(execFile);
import { until } from '../resilience/harness/probes.ts';

const cm = (rv: string, data: Record<string, string>, uid = 'u1') => ({
  kind: 'ConfigMap',
  apiVersion: 'v1',
  metadata: { name: 'settings', namespace: 'shop', uid, resourceVersion: rv },
  data,
});
const TEXT = [
  {
    type: 'header',
    format: 'rx-informer-trace',
    version: 1,
    startedAt: '2026-01-01T10:00:00.000Z',
    resources: ['configmaps'],
    redacted: true,
  },
  { type: 'list', at: 0, id: 0, options: { limit: 500, resourceVersion: '0' } },
  { type: 'page', at: 10, id: 0, resourceVersion: '5', items: [cm('5', { level: 'info' })] },
  { type: 'end', at: 10, id: 0, how: 'complete' },
  { type: 'watch', at: 11, id: 1, options: { allowWatchBookmarks: true, resourceVersion: '5', timeoutSeconds: 300 } },
  { type: 'event', at: 2_000, id: 1, event: { type: 'MODIFIED', object: cm('6', { level: 'debug', owner: 'ops' }) } },
  // Bookmarks, as a real server sends them about every minute: the informer's idle rule sees a live watch.
  { type: 'event', at: 40_000, id: 1, event: { type: 'BOOKMARK', object: { kind: 'ConfigMap', metadata: { resourceVersion: '6' } } } },
  { type: 'event', at: 65_000, id: 1, event: { type: 'DELETED', object: cm('7', { level: 'debug', owner: 'ops' }) } },
  { type: 'end', at: 70_000, id: 1, how: 'unsubscribe' },
]
  .map((l) => `${JSON.stringify(l)}\n`)
  .join('');

/** TEXT with an object that fails its schema (labels that are not a map) listed beside the one that prints. */
const BROKEN = { ...cm('4', {}, 'u2'), metadata: { name: 'broken', namespace: 'shop', uid: 'u2', resourceVersion: '4', labels: 'x' } };
const INVALID = TEXT.replace('"items":[', `"items":[${JSON.stringify(BROKEN)},`);

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
const tempDir = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
};

async function printed(argv: string[]): Promise<string[]> {
  const options = parseReplayLine(['replay', 'trace.jsonl', '--utc', ...argv]);
  if (typeof options === 'string') throw new Error(options);
  const out: string[] = [];
  await replayCommand(readTrace(TEXT), options as ReplayCommandOptions, (line) => out.push(line));
  return out;
}

describe('rx-informer replay', () => {
  it('prints the changes as watch does, at the recorded times (the initial list is not a change)', async () => {
    expect(await printed([])).toEqual([
      '10:00:02 UPDATED configmaps shop/settings  data.level: "info" → "debug", data.owner: +"ops"',
      '10:01:05 DELETED configmaps shop/settings',
    ]);
  });

  it('a relist after a backoff prints at its recorded time, every run (no jitter in a replay)', async () => {
    // examples/replay/incident.jsonl: a 500, a 410, then the relist whose page came at 1,097 ms.
    const incident = readTrace(readFileSync(new URL('../../examples/replay/incident.jsonl', import.meta.url), 'utf8'));
    const options = parseReplayLine(['replay', 'incident.jsonl', '--utc', '-o', 'json']) as ReplayCommandOptions;
    const start = Date.parse(incident.header.startedAt);
    for (let run = 0; run < 5; run++) {
      const out: string[] = [];
      await replayCommand(incident, options, (line) => out.push(line));
      const times = out.map((line) => Date.parse((JSON.parse(line) as { time: string }).time) - start);
      expect(times.length).toBeGreaterThan(0);
      expect(times.every((t) => t === 1097)).toBe(true);
    }
  });

  it('--fields, -o json, and --from/--to windows', async () => {
    expect((await printed(['--fields', 'data.owner']))[0]).toBe('10:00:02 UPDATED configmaps shop/settings  data.owner: +"ops"');
    expect(await printed(['--from', '1m'])).toEqual(['10:01:05 DELETED configmaps shop/settings']);
    expect(await printed(['--to', '1m'])).toHaveLength(1);
    const json = JSON.parse((await printed(['-o', 'json', '--to', '10s']))[0]!) as { time: string; type: string; resource: string };
    expect(json).toMatchObject({ time: '2026-01-01T10:00:02.000Z', type: 'UPDATED', resource: 'configmaps' });
  });

  it('Secret values are redacted as watch redacts them, unless --show-secret-values (a trace recorded with --no-redact holds them)', async () => {
    const secret = (rv: string, password: string) => ({
      kind: 'Secret',
      apiVersion: 'v1',
      metadata: { name: 'db', namespace: 'a', uid: 's1', resourceVersion: rv },
      type: 'Opaque',
      data: { password },
    });
    const clear = [
      {
        type: 'header',
        format: 'rx-informer-trace',
        version: 1,
        startedAt: '2026-01-01T00:00:00Z',
        resources: ['secrets'],
        redacted: false,
      },
      { type: 'list', at: 0, id: 0, resource: 'secrets', options: { limit: 500, resourceVersion: '0' } },
      { type: 'page', at: 1, id: 0, resourceVersion: '5', items: [secret('4', 'aHVudGVyMg==')] },
      { type: 'end', at: 1, id: 0, how: 'complete' },
      {
        type: 'watch',
        at: 2,
        id: 1,
        resource: 'secrets',
        options: { allowWatchBookmarks: true, resourceVersion: '5', timeoutSeconds: 300 },
      },
      { type: 'event', at: 3, id: 1, event: { type: 'MODIFIED', object: secret('6', 'Y29ycmVjdC1ob3JzZQ==') } },
      {
        type: 'event',
        at: 4,
        id: 1,
        event: {
          type: 'ADDED',
          object: { ...secret('7', 'c3dvcmRmaXNo'), metadata: { name: 'new', namespace: 'a', uid: 's2', resourceVersion: '7' } },
        },
      },
      { type: 'end', at: 10, id: 1, how: 'unsubscribe' },
    ]
      .map((l) => `${JSON.stringify(l)}\n`)
      .join('');
    const run = async (...argv: string[]) => {
      const out: string[] = [];
      const options = parseReplayLine(['replay', 'trace.jsonl', '--utc', ...argv]) as ReplayCommandOptions;
      expect(await replayCommand(readTrace(clear), options, (line) => out.push(line))).toEqual([]);
      return out;
    };
    const values = /aHVudGVyMg|Y29ycmVjdC1ob3JzZQ|c3dvcmRmaXNo/;
    expect(await run()).toEqual(['00:00:00 UPDATED secrets a/db  data.password: <changed>', '00:00:00 ADDED   secrets a/new']);
    const json = await run('-o', 'json');
    expect(json.join('\n')).not.toMatch(values);
    expect(json[1]).toMatch(/"password":"<redacted:[0-9a-f]{12}>"/);
    expect((await run('--show-secret-values'))[0]).toBe(
      '00:00:00 UPDATED secrets a/db  data.password: "aHVudGVyMg==" → "Y29ycmVjdC1ob3JzZQ=="',
    );
    expect((await run('--show-secret-values', '-o', 'json'))[1]).toMatch(/"password":"c3dvcmRmaXNo"/);
  });

  it('what the replayed informer reports (an object that fails its schema) is said as watch says it; the other objects still print', async () => {
    const options = parseReplayLine(['replay', 'trace.jsonl', '--utc']) as ReplayCommandOptions;
    const out: string[] = [];
    const err: string[] = [];
    const mismatches = await replayCommand(readTrace(INVALID), options, (line) => out.push(line), { err: (line) => err.push(line) });
    expect(mismatches).toEqual([]);
    expect(out).toEqual(await printed([]));
    expect(err).toEqual([
      '! configmaps: ValidationFailed: shop/broken failed validation: metadata.labels: Invalid input: expected record, received string',
    ]);
    // In a window as the changes are: the list's fault came before 1s.
    const windowed: string[] = [];
    const from = parseReplayLine(['replay', 'trace.jsonl', '--from', '1s']) as ReplayCommandOptions;
    await replayCommand(readTrace(INVALID), from, () => undefined, { err: (line) => windowed.push(line) });
    expect(windowed).toEqual([]);
  });

  it('a divergence is reported: without the recorded bookmarks the idle rule aborts the watch before its last event', async () => {
    const options = parseReplayLine(['replay', 'trace.jsonl']) as ReplayCommandOptions;
    const silent = TEXT.split('\n')
      .filter((line) => !line.includes('BOOKMARK'))
      .join('\n');
    const mismatches = await replayCommand(readTrace(silent), options, () => undefined);
    expect(mismatches).toHaveLength(1);
    expect(mismatches[0]).toMatch(
      /^configmaps: replay: the informer aborted its request #2, watch .* \(line 5\), \d+ ms after it, before line 7 \(its event 64989 ms after it\): the recorded client did not abort it there$/,
    );
  });

  it('a request the trace cannot answer is a mismatch, named once at the end, not also a fault on stderr', async () => {
    const options = parseReplayLine(['replay', 'trace.jsonl']) as ReplayCommandOptions;
    const err: string[] = [];
    const mismatches = await replayCommand(readTrace(TEXT.replace('"limit":500', '"limit":100')), options, () => undefined, {
      err: (line) => err.push(line),
    });
    expect(mismatches).toEqual([expect.stringMatching(/^configmaps: replay: the informer's request #1, list .* is not in the trace/)]);
    expect(err).toEqual([]);
  });

  it('a divergence stops the replay there, however long the recording goes on after it (virtual time, instants counted)', async () => {
    const options = parseReplayLine(['replay', 'trace.jsonl']) as ReplayCommandOptions;
    const YEAR = 365.25 * 24 * 3_600_000;
    // A watch without bookmarks whose next event is a day, or 99 years, later: the informer's idle rule aborts it
    // after a minute, a divergence. The informers then asked again and timed out, minute after minute, to the horizon.
    for (const gap of [24 * 3_600_000, 99 * YEAR]) {
      const lines = TEXT.split('\n').filter((line) => !line.includes('BOOKMARK') && !line.includes('"DELETED"'));
      const text = lines
        .join('\n')
        .replace('"at":2000,', `"at":${gap},`)
        .replace('"at":70000,', `"at":${gap + 1},`);
      let instants = 0;
      const mismatches = await replayCommand(readTrace(text), options, () => undefined, {
        pace: {
          backedUp: () => (instants++, false),
          drained: () => Promise.resolve(),
          gone: () => false,
        },
      });
      expect(mismatches).toEqual([expect.stringMatching(/^configmaps: replay: the informer aborted its request #2, .* 60000 ms after it/)]);
      // The list, the watch, its idle abort, and the stop: a few instants, not one a minute for the rest of the gap.
      expect(instants).toBeLessThan(20);
    }
  });

  it('prints as it goes: each change is out before the lines after it are read', async () => {
    const options = parseReplayLine(['replay', 'trace.jsonl', '--utc']) as ReplayCommandOptions;
    const source = traceSource(readTrace(TEXT));
    const read: number[] = [];
    const counting: TraceSource = { ...source, read: (i) => (read.push(i), source.read(i)) };
    const readWhenPrinted: number[] = [];
    await replayCommand(counting, options, () => readWhenPrinted.push(Math.max(...read)));
    // Lines by position after the header: the UPDATED (4) printed before the bookmark (5) was read, the DELETED (6)
    // before the end (7); each line after the list's read once, when played.
    expect(readWhenPrinted).toEqual([4, 6]);
    expect(read.filter((i) => i > 3).sort()).toEqual([4, 5, 6, 7]);
  });

  it('paced: one instant at a time, waiting for the output to drain whenever it is backed up; the same lines', async () => {
    const options = parseReplayLine(['replay', 'trace.jsonl', '--utc']) as ReplayCommandOptions;
    const lines: string[] = [];
    let drains = 0;
    const mismatches = await replayCommand(readTrace(TEXT), options, (line) => lines.push(line), {
      pace: {
        backedUp: () => lines.length > drains,
        drained: async () => {
          await Promise.resolve();
          drains++;
        },
        gone: () => false,
      },
    });
    expect(mismatches).toEqual([]);
    expect(lines).toEqual(await printed([]));
    // Each line printed was waited for before the next instant was played.
    expect(drains).toBe(2);
  });

  it('trim writes the window to its file; a cut that fails part way leaves no file', () => {
    const dir = tempDir('rx-informer-trim-');
    const source = traceSource(readTrace(TEXT));
    const out = join(dir, 'window.jsonl');
    expect(trimToFile(source, { fromMs: 0 }, out)).toEqual({ lines: 10, lastAt: 69_989, startedAt: '2026-01-01T10:00:00.011Z' });
    expect(readFileSync(out, 'utf8')).toBe(traceText(trimTrace(readTrace(TEXT), { fromMs: 0 })));
    // The DELETED event's line cannot be read (the file changed): the lines before it were written, then removed.
    const failing: TraceSource = {
      ...source,
      read: (i) => {
        if (i === 6) throw new Error('trace line 8: the file changed after it was opened');
        return source.read(i);
      },
    };
    const broken = join(dir, 'broken.jsonl');
    expect(() => trimToFile(failing, { fromMs: 0 }, broken)).toThrow(/trace line 8: the file changed/);
    expect(existsSync(broken)).toBe(false);
    // A file already there is left as it was, and nothing else is left beside it.
    writeFileSync(broken, 'before\n');
    expect(() => trimToFile(failing, { fromMs: 0 }, broken)).toThrow(/trace line 8: the file changed/);
    expect(readFileSync(broken, 'utf8')).toBe('before\n');
    expect(readdirSync(dir).sort()).toEqual(['broken.jsonl', 'window.jsonl']);
  });

  it('trim writes a new file only its owner reads (mode 0600); of a trace recorded with --no-redact, a file replaced too', () => {
    const dir = tempDir('rx-informer-trim-');
    const clear = TEXT.replace('"redacted":true', '"redacted":false');
    const out = join(dir, 'window.jsonl');
    trimToFile(traceSource(readTrace(clear)), { fromMs: 0 }, out);
    expect(statSync(out).mode & 0o777).toBe(0o600);
    const shared = join(dir, 'shared.jsonl');
    writeFileSync(shared, 'before\n', { mode: 0o644 });
    trimToFile(traceSource(readTrace(clear)), { fromMs: 0 }, shared);
    expect(statSync(shared).mode & 0o777).toBe(0o600);
    // A redacted trace: a new file its owner's only too (it holds the cluster's other objects whole), a file replaced
    // keeps its bits.
    trimToFile(traceSource(readTrace(TEXT)), { fromMs: 0 }, join(dir, 'redacted.jsonl'));
    expect(statSync(join(dir, 'redacted.jsonl')).mode & 0o777).toBe(0o600);
    writeFileSync(shared, 'before\n');
    chmodSync(shared, 0o640);
    trimToFile(traceSource(readTrace(TEXT)), { fromMs: 0 }, shared);
    expect(statSync(shared).mode & 0o777).toBe(0o640);
  });

  it("trim's worker job: the window written, a window that ends before it starts (usage), a trace that cannot be read (error)", () => {
    const dir = tempDir('rx-informer-trim-');
    const trace = join(dir, 'trace.jsonl');
    writeFileSync(trace, TEXT);
    const out = join(dir, 'window.jsonl');
    const job = (file: string, window: { fromMs?: number; toMs?: number }) => runTrimJob({ file, window, out, temp: tempFileFor(out) });
    expect(job(trace, { fromMs: 0 })).toEqual({
      kind: 'done',
      trimmed: { lines: 10, lastAt: 69_989, startedAt: '2026-01-01T10:00:00.011Z' },
    });
    expect(readFileSync(out, 'utf8').split('\n')).toHaveLength(11);
    expect(job(trace, { fromMs: 2000, toMs: 1000 })).toEqual({ kind: 'usage', message: expect.stringMatching(/^trim: the window ends/) });
    writeFileSync(trace, TEXT.slice(0, -5));
    expect(job(trace, { fromMs: 0 })).toEqual({ kind: 'error', file: trace, message: expect.stringMatching(/trace line 9: truncated/) });
    // A line nested so deep that writing it again would overflow the stack: refused when opened, naming it.
    const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
    writeFileSync(trace, TEXT.replace('"items":[', `"items":[${deep},`));
    expect(job(trace, { fromMs: 0 })).toEqual({ kind: 'error', file: trace, message: 'trace line 3: nested deeper than 1000 levels' });
    expect(readdirSync(dir).sort()).toEqual(['trace.jsonl', 'window.jsonl']);
    // A failure to write -o's file names it, not the trace.
    writeFileSync(trace, TEXT);
    const nested = join(dir, 'nested');
    mkdirSync(nested);
    expect(runTrimJob({ file: trace, window: { fromMs: 0 }, out: nested, temp: tempFileFor(nested) })).toEqual({
      kind: 'error',
      file: nested,
      message: expect.stringMatching(/^EISDIR: /),
    });
    const nowhere = join(dir, 'no', 'window.jsonl');
    expect(runTrimJob({ file: trace, window: { fromMs: 0 }, out: nowhere, temp: tempFileFor(nowhere) })).toEqual({
      kind: 'error',
      file: nowhere,
      message: expect.stringMatching(/^ENOENT: /),
    });
  });

  it('trim onto a FIFO (or a device, /dev/stdout): written to as it is, a line at a time, never replaced by a file', () => {
    const dir = tempDir('rx-informer-trim-');
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', ['-m', '644', fifo]);
    // A reader first (not blocking), so that opening the FIFO to write does not wait for one; the window fits its buffer.
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const clear = TEXT.replace('"redacted":true', '"redacted":false');
      expect(trimToFile(traceSource(readTrace(clear)), { fromMs: 0 }, fifo).lines).toBe(10);
      const got = Buffer.alloc(64 * 1024);
      expect(got.toString('utf8', 0, readSync(reader, got))).toBe(traceText(trimTrace(readTrace(clear), { fromMs: 0 })));
    } finally {
      closeSync(reader);
    }
    // Still the FIFO, its mode as it was (not made 0600 for a --no-redact trace: not ours), and no temporary file.
    expect(lstatSync(fifo).isFIFO()).toBe(true);
    expect(statSync(fifo).mode & 0o777).toBe(0o644);
    expect(readdirSync(dir)).toEqual(['fifo']);
  });

  it('trim onto its own input (the same path, a symbolic link to it, a hard link): the window, the trace read whole first', () => {
    const dir = tempDir('rx-informer-trim-');
    const original = join(dir, 'original.jsonl');
    writeFileSync(original, TEXT);
    trimToFile(openTrace(original), { fromMs: 0 }, join(dir, 'expected.jsonl'));
    const expected = readFileSync(join(dir, 'expected.jsonl'), 'utf8');
    const self = join(dir, 'self.jsonl');
    writeFileSync(self, TEXT, { mode: 0o600 });
    expect(trimToFile(openTrace(self), { fromMs: 0 }, self).lines).toBe(10);
    expect(readFileSync(self, 'utf8')).toBe(expected);
    // A private trace stays private (a --no-redact trace holds Secret values).
    expect(statSync(self).mode & 0o777).toBe(0o600);

    const real = join(dir, 'real.jsonl');
    const link = join(dir, 'link.jsonl');
    writeFileSync(real, TEXT);
    symlinkSync(real, link);
    trimToFile(openTrace(real), { fromMs: 0 }, link);
    // The link stays a link; the file it names holds the window.
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readFileSync(real, 'utf8')).toBe(expected);

    const hard = join(dir, 'hard.jsonl');
    const other = join(dir, 'other.jsonl');
    writeFileSync(hard, TEXT);
    linkSync(hard, other);
    trimToFile(openTrace(other), { fromMs: 0 }, hard);
    expect(readFileSync(hard, 'utf8')).toBe(expected);
    expect(readFileSync(other, 'utf8')).toBe(TEXT);
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('usage errors are one line', () => {
    expect(parseReplayLine(['replay'])).toMatch(/name one trace file/);
    expect(parseReplayLine(['replay', 'x.jsonl', '--from', 'soon'])).toMatch(/--from: "soon" is not a time into the recording/);
    expect(parseReplayLine(['replay', 'x.jsonl', '-o', 'yaml'])).toMatch(/--output must be pretty or json/);
    // A window may start at the start, however the zero is written.
    for (const zero of ['0', '0s', '0ms', '00m'])
      expect(parseReplayLine(['replay', 'x.jsonl', '--from', zero, '--to', '90s']), zero).toMatchObject({ fromMs: 0, toMs: 90_000 });
    expect(parseReplayLine(['replay', 'x.jsonl', '--from', '0x'])).toMatch(/is not a time into the recording/);
    // A window that ends before it starts would print nothing: said, as trim says it.
    expect(parseReplayLine(['replay', 'x.jsonl', '--from', '2s', '--to', '1s'])).toBe(
      'replay: the window ends (--to 1000 ms) before it starts (--from 2000 ms)',
    );
    expect(parseReplayLine(['replay', 'x.jsonl', '--to', '0s'])).toMatchObject({ toMs: 0 });
  });

  it('the bin: 0 and the lines; a trace that cannot be read is 1 with its line number; trim writes a window that replays', async () => {
    const dir = tempDir('rx-informer-replay-');
    writeFileSync(join(dir, 'good.jsonl'), TEXT);
    writeFileSync(join(dir, 'cut.jsonl'), TEXT.slice(0, -5));
    const good = cli(['replay', join(dir, 'good.jsonl'), '--utc']);
    const cut = cli(['replay', join(dir, 'cut.jsonl')]);
    expect((await good.exit).code).toBe(0);
    expect(good.out.filter(Boolean)).toHaveLength(2);
    expect((await cut.exit).code).toBe(1);
    expect(cut.err.join('\n')).toMatch(/cut\.jsonl: trace line 9: truncated/);

    // A window past the end prints nothing, and says so.
    const late = cli(['replay', join(dir, 'good.jsonl'), '--from', '5m']);
    expect((await late.exit).code).toBe(0);
    expect(late.out.filter(Boolean)).toEqual([]);
    expect(late.err.join('\n')).toMatch(/--from is past the end of the recording \(70\.0 s\): nothing to show/);

    const trim = cli(['trim', join(dir, 'good.jsonl'), '--from', '0', '-o', join(dir, 'window.jsonl')]);
    expect((await trim.exit).code).toBe(0);
    const window = cli(['replay', join(dir, 'window.jsonl'), '--utc']);
    expect((await window.exit).code).toBe(0);
    expect(window.out.filter(Boolean)).toEqual(good.out.filter(Boolean));
  }, 60_000);

  it('the bin: trim -o /dev/stdout into a pipe writes the window there', async () => {
    const dir = tempDir('rx-informer-trim-');
    writeFileSync(join(dir, 'good.jsonl'), TEXT);
    // -o /dev/stdout into a shell's pipe (a child's stdio is a socket, which /dev/stdout cannot open): the window on
    // stdout, as a file gets it; nothing else written.
    const piped = await execFilePromise('bash', [
      '-c',
      'set -o pipefail; "$0" "$@" | cat',
      NODE,
      MAIN,
      'trim',
      join(dir, 'good.jsonl'),
      '--from',
      '0',
      '-o',
      '/dev/stdout',
    ]);
    expect(readdirSync(dir)).toEqual(['good.jsonl']);
    trimToFile(openTrace(join(dir, 'good.jsonl')), { fromMs: 0 }, join(dir, 'window.jsonl'));
    expect(piped.stdout).toBe(readFileSync(join(dir, 'window.jsonl'), 'utf8'));
  }, 60_000);

  it('the bin: trim refuses a window that ends before it starts or before its cut (exit 2, one line), writing nothing', async () => {
    const dir = tempDir('rx-informer-trim-');
    const trace = join(dir, 'good.jsonl');
    writeFileSync(trace, TEXT);
    const out = join(dir, 'window.jsonl');
    // The trace's one watch starts at 11 ms: the cut of any --from up to 11 ms.
    const [backwards, beforeCut] = await cliRuns([
      ['trim', trace, '--from', '2s', '--to', '1s', '-o', out],
      ['trim', trace, '--from', '5ms', '--to', '8ms', '-o', out],
    ]);
    expect(backwards!.code).toBe(2);
    expect(backwards!.err).toEqual([
      'error: trim: the window ends (--to 1000 ms) before it starts (--from 2000 ms)',
      'run `rx-informer --help` for usage',
    ]);
    expect(beforeCut!.code).toBe(2);
    expect(beforeCut!.err).toEqual([
      'error: trim: the window ends (--to 8 ms) before its cut, the first watch at or after --from (5 ms), which starts at 11 ms: nothing to keep',
      'run `rx-informer --help` for usage',
    ]);
    expect(readdirSync(dir)).toEqual(['good.jsonl']);
  }, 30_000);

  it('the bin: a trace that is not a regular file (a pipe, <(zcat t.gz), a directory) is refused, exit 2, one line', async () => {
    const dir = tempDir('rx-informer-replay-');
    const fifo = join(dir, 'fifo');
    // No writer ever opens it: a replay that opened it would wait for good.
    execFileSync('mkfifo', [fifo]);
    const runs = await cliRuns([
      ['replay', fifo],
      ['trim', fifo, '--from', '0', '-o', join(dir, 'window.jsonl')],
      ['replay', dir],
    ]);
    expect(runs.map((r) => [r.code, r.err[0]])).toEqual([
      [2, `error: ${fifo} is not a regular file: replay reads it twice; save it to a file first`],
      [2, `error: ${fifo} is not a regular file: trim reads it twice; save it to a file first`],
      [2, `error: ${dir} is not a regular file: replay reads it twice; save it to a file first`],
    ]);
    expect(readdirSync(dir)).toEqual(['fifo']);
  }, 60_000);

  it('the bin: what the replayed informer reports is on stderr, in the words of watch; the replay goes on, exit 0 (as watch goes on)', async () => {
    const dir = tempDir('rx-informer-replay-');
    const path = join(dir, 'invalid.jsonl');
    writeFileSync(path, INVALID);
    const [run] = await cliRuns([['replay', path, '--utc']]);
    expect(run!.code).toBe(0);
    expect(run!.out).toEqual(await printed([]));
    expect(run!.err).toEqual([
      '! configmaps: ValidationFailed: shop/broken failed validation: metadata.labels: Invalid input: expected record, received string',
    ]);
  }, 30_000);

  it('the bin through a pipe: every change printed, however many (stdout flushed before it exits)', async () => {
    const dir = tempDir('rx-informer-replay-');
    const path = join(dir, 'long.jsonl');
    const shape = shapeOf(16 * 1024 * 1024, 100, 50);
    writeBigTrace(path, shape);
    const run = cli(['replay', path, '--utc', '-o', 'json']);
    expect((await run.exit).code).toBe(0);
    const printed = run.out.filter(Boolean);
    // Far more than a pipe's buffer (64 KiB): each line a field diff of a pod.
    expect(printed.join('\n').length).toBeGreaterThan(256 * 1024);
    expect(printed).toHaveLength(shape.events);
  }, 30_000);

  it('the bin: stdout on a full disk (EFBIG under ulimit -f, as ENOSPC) is 1 and says so, as watch does', async () => {
    const dir = tempDir('rx-informer-replay-');
    const path = join(dir, 'trace.jsonl');
    // About 200 changes, a line of field diffs each: far more than the 8 KiB the output may take.
    writeBigTrace(path, shapeOf(1024 * 1024, 20, 20));
    const out = join(dir, 'out.txt');
    const run = execFilePromise('bash', ['-c', 'ulimit -f 8 && exec "$0" "$@" > "$OUT"', NODE, MAIN, 'replay', path], {
      env: { ...process.env, OUT: out },
    });
    const failed = (await run.then(
      () => undefined,
      (error: unknown) => error,
    )) as { code?: number; stderr?: string } | undefined;
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toBe('error: cannot write to stdout: EFBIG: file too large, write\n');
    expect(statSync(out).size).toBe(8 * 1024);
  }, 60_000);

  it('the bin: trim to a full disk (EFBIG under ulimit -f, as ENOSPC) is 1, naming -o, leaving nothing', async () => {
    const dir = tempDir('rx-informer-trim-');
    const path = join(dir, 'trace.jsonl');
    writeBigTrace(path, shapeOf(1024 * 1024, 20, 20));
    const out = join(dir, 'window.jsonl');
    const run = cli(['trim', path, '--from', '0', '-o', out], {}, { maxFileKiB: 8 });
    expect((await run.exit).code).toBe(1);
    expect(run.err).toEqual([`error: ${out}: EFBIG: file too large, write`]);
    expect(readdirSync(dir)).toEqual(['trace.jsonl']);
  }, 60_000);

  it('the bin: trim stopped by SIGINT or SIGTERM mid-write exits 130 or 143, leaving neither its temporary file nor -o', async () => {
    const dir = tempDir('rx-informer-trim-');
    const path = join(dir, 'long.jsonl');
    writeBigTrace(path, shapeOf(16 * 1024 * 1024, 100, 50));
    for (const [signal, code] of [
      ['SIGINT', 130],
      ['SIGTERM', 143],
    ] as const) {
      const run = cli(['trim', path, '--from', '0', '-o', join(dir, 'window.jsonl')]);
      // The cut (in its worker, trimWorker.ts) has begun writing its temporary file (.window.jsonl.<hex>.tmp) when the signal comes.
      const writing = () => readdirSync(dir).some((name) => name.endsWith('.tmp'));
      expect(await until(writing, 20_000)).toBe(true);
      run.proc.kill(signal);
      expect(await run.exit).toEqual({ code, signal: null });
      expect(run.err.join('\n')).toMatch(/stopped: .*window\.jsonl not written/);
      expect(readdirSync(dir)).toEqual(['long.jsonl']);
    }
  }, 60_000);
});
