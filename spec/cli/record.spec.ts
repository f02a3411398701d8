/**
 * `rx-informer record`, the bin against the emulator: the trace it writes reads and replays, Secrets are
 * redacted unless --no-redact, --max-bytes and signals leave a whole file. Waits are for lines, never sleeps.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { execFileSync, spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TestScheduler } from 'rxjs/testing';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { ConfigMap, Pod, informer, type KubeObject, type Store } from '../../src/index.ts';
import { readTrace } from '../../src/pipeline.ts';
import { replayListWatch } from '../../src/testing/index.ts';
import { cli, expectNoStack, killAll, until } from './support.ts';

let api: ApiServer;
let dir: string;
let kubeconfig: string;

beforeAll(async () => {
  api = await startApiServer({ bookmarkIntervalMs: 200 });
  dir = mkdtempSync(join(tmpdir(), 'rx-informer-record-'));
  kubeconfig = join(dir, 'config');
  writeFileSync(kubeconfig, api.kubeConfig.exportConfig());
});

afterAll(async () => {
  killAll();
  await api.close();
});

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
const read = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8') : '');

describe('rx-informer record', () => {
  it('records pods and secrets until SIGTERM (143): a whole trace, Secrets redacted, that replays', async () => {
    const file = join(dir, 'trace.jsonl');
    api.create('pods', { metadata: { name: 'web', namespace: 'shop' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } });
    const run = cli(['record', 'pods', 'secrets', '-o', file, '--kubeconfig', kubeconfig]);
    await run.line('err', /^synced; recording to /);
    api.create('secrets', { metadata: { name: 'db', namespace: 'shop' }, data: { password: b64('hunter2') } });
    api.patch('pods', 'shop', 'web', { metadata: { labels: { tier: 'front' } } });
    await until(() => read(file).includes('"MODIFIED"') && read(file).includes('"name":"db"'));
    run.proc.kill('SIGTERM');
    expect((await run.exit).code).toBe(143);
    await run.line('err', /^stopped \(closed\): \d+ bytes written to /);

    const text = read(file);
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain(b64('hunter2'));
    const trace = readTrace(text);
    expect(trace.header).toMatchObject({ resources: ['pods', 'secrets'], redacted: true });
    expect(trace.lines.at(-1)).toMatchObject({ type: 'stop', why: 'closed' });

    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    let store: Store<KubeObject> | undefined;
    scheduler.run(() => {
      const replay = replayListWatch(trace, { scheduler, resource: 'pods' });
      const subscription = informer(replay, Pod, { scheduler }).store$.subscribe((s) => (store = s));
      subscription.add(replay.finished$.subscribe(() => subscription.unsubscribe()));
    });
    expect(store?.get('shop/web')?.metadata.labels).toEqual({ tier: 'front' });
  }, 60_000);

  it('--max-bytes stops cleanly (0) before the limit; --no-redact writes Secret values, with a warning', async () => {
    const file = join(dir, 'small.jsonl');
    for (let i = 0; i < 20; i++)
      api.create('configmaps', { metadata: { name: `cm-${i}`, namespace: 'shop' }, data: { v: 'x'.repeat(200) } });
    const run = cli(['record', 'configmaps,secrets', '-o', file, '--max-bytes', '2Ki', '--no-redact', '--kubeconfig', kubeconfig]);
    expect((await run.exit).code).toBe(0);
    expect(run.err.join('\n')).toMatch(/warning: --no-redact/);
    expect(run.err.join('\n')).toMatch(/stopped \(maxBytes\)/);
    expect(statSync(file).size).toBeLessThanOrEqual(2048);
    expect(readTrace(read(file)).lines.at(-1)).toMatchObject({ type: 'stop', why: 'maxBytes' });

    const clear = join(dir, 'clear.jsonl');
    writeFileSync(clear, '', { mode: 0o644 }); // there already, readable by others: made private
    const secrets = cli(['record', 'secrets', '-n', 'shop', '-o', clear, '--no-redact', '--duration', '1s', '--kubeconfig', kubeconfig]);
    expect((await secrets.exit).code).toBe(0);
    expect(read(clear)).toContain(b64('hunter2'));
    // Secret values in clear: only the owner may read the file.
    expect(statSync(clear).mode & 0o777).toBe(0o600);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readTrace(read(clear)).lines.at(-1)).toMatchObject({ type: 'stop', why: 'duration' });
  }, 60_000);

  it('a redacted trace: a new file only its owner reads (0600), a file there before keeps its mode', async () => {
    const fresh = join(dir, 'fresh.jsonl');
    const shared = join(dir, 'shared.jsonl');
    writeFileSync(shared, '', { mode: 0o644 }); // there already, readable by others: its owner chose so
    for (const file of [fresh, shared]) {
      const run = cli(['record', 'configmaps', '-o', file, '--duration', '1s', '--kubeconfig', kubeconfig]);
      expect((await run.exit).code).toBe(0);
      expect(readTrace(read(file)).header.redacted).toBe(true);
    }
    // A redacted trace still holds ConfigMaps, env values and annotations whole.
    expect(statSync(fresh).mode & 0o777).toBe(0o600);
    expect(statSync(shared).mode & 0o777).toBe(0o644);
  }, 60_000);

  it('-o a FIFO without a reader: waits saying so, and Ctrl-C ends the wait (130), nothing written (audit24)', async () => {
    const fifo = join(dir, 'no-reader.fifo');
    execFileSync('mkfifo', [fifo]);
    const run = cli(['record', 'configmaps', '-o', fifo, '--kubeconfig', kubeconfig]);
    // It blocked in open(2) for good, deaf to SIGINT and SIGTERM (only SIGKILL ended it).
    await run.line('err', /^waiting for a reader of .*no-reader\.fifo \(a FIFO; Ctrl-C to stop\)$/);
    run.proc.kill('SIGINT');
    expect((await run.exit).code).toBe(130);
    // Not "before the server answered": it had; the FIFO had no reader.
    expect(run.err.at(-1)).toBe(`stopped while waiting for a reader of ${fifo}`);
  }, 60_000);

  it('-o a FIFO whose reader stops reading: `record` is not frozen in the write; Ctrl-C (130) ends it at once', async () => {
    const fifo = join(dir, 'stalled-reader.fifo');
    execFileSync('mkfifo', [fifo]);
    // 300 KB in the list page, past what a pipe holds (64 KiB): the write that blocked for good, deaf to signals.
    for (let i = 0; i < 150; i++)
      api.create('configmaps', { metadata: { name: `big-${i}`, namespace: 'stall' }, data: { v: 'x'.repeat(2000) } });
    // A reader that holds the FIFO open and never reads (a pager scrolled back, a stopped process).
    const reader = spawn('sh', ['-c', 'exec 3<"$0"; exec sleep 600', fifo], { stdio: 'ignore' });
    try {
      const run = cli(['record', 'configmaps', '-n', 'stall', '-o', fifo, '--kubeconfig', kubeconfig]);
      await run.line('err', /^synced; recording to /);
      run.proc.kill('SIGINT');
      expect((await run.exit).code).toBe(130);
      expect(run.err.at(-1)).toMatch(/^stopped \(closed\): \d+ bytes written to .*stalled-reader\.fifo$/);
    } finally {
      reader.kill('SIGKILL');
    }
  }, 60_000);

  it('-o a FIFO whose reader comes later: the trace goes to the reader whole, Ctrl-C (130) ends it with its stop line', async () => {
    const fifo = join(dir, 'late-reader.fifo');
    execFileSync('mkfifo', [fifo]);
    const run = cli(['record', 'configmaps', '-n', 'fifo', '-o', fifo, '--kubeconfig', kubeconfig]);
    await run.line('err', /^waiting for a reader of /);
    const reader = spawn('cat', [fifo], { stdio: ['ignore', 'pipe', 'inherit'] });
    let text = '';
    reader.stdout.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    const read = new Promise((resolve) => reader.on('close', resolve));
    await run.line('err', /^synced; recording to /);
    run.proc.kill('SIGINT');
    expect((await run.exit).code).toBe(130);
    await read;
    expect(readTrace(text).lines.at(-1)).toMatchObject({ type: 'stop', why: 'closed' });
  }, 60_000);

  it('a disk full before the resources synced: the stop lines end stderr, no `synced; recording` after them (audit24)', async () => {
    const file = join(dir, 'full-at-once.jsonl');
    // 300 KB in the first list page, past the sink's buffer (256 KiB): written at once, the disk (16 KiB) does not take it,
    // and the recording stops before it synced.
    for (let i = 0; i < 150; i++)
      api.create('configmaps', { metadata: { name: `big-${i}`, namespace: 'disk-first' }, data: { v: 'x'.repeat(2000) } });
    const run = cli(['record', 'configmaps', '-n', 'disk-first', '-o', file, '--kubeconfig', kubeconfig], {}, { maxFileKiB: 16 });
    expect((await run.exit).code).toBe(1);
    // `exit` is the child's `close`: all it printed is in.
    expect(run.err.join('\n')).toMatch(/EFBIG/);
    expect(run.err.filter((l) => l.startsWith('synced; recording'))).toEqual([]);
  }, 60_000);

  it('a disk that fills (EFBIG under ulimit -f, as ENOSPC): exit 1, one line naming the file, a trace of whole lines that replays', async () => {
    const file = join(dir, 'full.jsonl');
    // 16 KiB: the header, the empty list and the watch fit; the changes below do not.
    const run = cli(['record', 'configmaps', '-n', 'disk', '-o', file, '--kubeconfig', kubeconfig], {}, { maxFileKiB: 16 });
    await run.line('err', /^synced; recording to /);
    // 40 KB of changes: the write that takes them fails part way; the writer hears of it with its next line (this
    // one, or the next bookmark: the emulator sends one every 200 ms) and stops.
    for (let i = 0; i < 20; i++)
      api.create('configmaps', { metadata: { name: `big-${i}`, namespace: 'disk' }, data: { v: 'x'.repeat(2000) } });
    expect((await run.exit).code).toBe(1);
    const said = run.err.join('\n');
    expect(said).toMatch(new RegExp(`error: cannot write ${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: EFBIG: file too large, write`));
    expectNoStack(said);
    const text = read(file);
    expect(text.endsWith('\n')).toBe(true);
    expect(said).toContain(`stopped (closed): ${Buffer.byteLength(text)} bytes written to ${file}`);
    // Whole lines, no stop line (it did not fit): the trace reads and replays.
    const trace = readTrace(text);
    expect(trace.lines.some((l) => l.type === 'stop')).toBe(false);
    expect(trace.lines.some((l) => l.type === 'event')).toBe(true);
    const scheduler = new TestScheduler((a, b) => expect(a).toEqual(b));
    let store: Store<KubeObject> | undefined;
    scheduler.run(() => {
      const replay = replayListWatch(trace, { scheduler, resource: 'configmaps' });
      const subscription = informer(replay, ConfigMap, { scheduler }).store$.subscribe((s) => (store = s));
      subscription.add(replay.finished$.subscribe(() => subscription.unsubscribe()));
    });
    expect(store?.get('disk/big-0')).toBeDefined();
  }, 60_000);

  it('a disk that fills with nothing more to write (a quiet resource, no bookmarks): the recording stops at once, exit 1', async () => {
    // No bookmark for an hour: nothing but the failed write's own lines comes.
    const quiet = await startApiServer({ bookmarkIntervalMs: 3_600_000 });
    try {
      // 40 KB in the list page, within the sink's buffer (256 KiB): written at the end of its turn, where the disk
      // (16 KiB) takes part of it and fails. No change follows: the watch stays quiet (its idle time-out: a minute). It sat
      // on the failed file until then, past this test's time; a line written in that turn would have heard of it.
      for (let i = 0; i < 20; i++)
        quiet.create('configmaps', { metadata: { name: `big-${i}`, namespace: 'quiet' }, data: { v: 'x'.repeat(2000) } });
      const config = join(dir, 'quiet-config');
      writeFileSync(config, quiet.kubeConfig.exportConfig());
      const file = join(dir, 'quiet-full.jsonl');
      const run = cli(['record', 'configmaps', '-n', 'quiet', '-o', file, '--kubeconfig', config], {}, { maxFileKiB: 16 });
      expect((await run.exit).code).toBe(1);
      const said = run.err.join('\n');
      expect(said).toMatch(/error: cannot write .*quiet-full\.jsonl: EFBIG: file too large, write/);
      const text = read(file);
      expect(said).toContain(`stopped (closed): ${Buffer.byteLength(text)} bytes written to ${file}`);
      // Whole lines (cut back to the last one the disk took), no stop line: the trace reads.
      expect(readTrace(text).lines.some((l) => l.type === 'stop')).toBe(false);
    } finally {
      await quiet.close();
    }
  }, 45_000);

  it('a list retrying cannot fix, as watch: a 400 (bad selector) is 1 at once; a 403 leaves that resource out', async () => {
    const bad = join(dir, 'bad.jsonl');
    // No --duration: before, it retried for good.
    const run = cli(['record', 'configmaps', '-n', 'shop', '-l', 'a in (', '-o', bad, '--kubeconfig', kubeconfig]);
    expect((await run.exit).code).toBe(1);
    expect(run.err.at(-1)).toMatch(/^error: cannot record configmaps: the server rejected the request \(400 Bad Request\)/);
    expect(run.err.join('\n')).not.toMatch(/synced/);
    expect(readTrace(read(bad)).lines.at(-1)).toMatchObject({ type: 'stop', why: 'closed' });

    api.faults.add({ match: { resource: 'secrets', namespace: 'locked' }, fault: { type: 'status', code: 403 }, times: 1000 });
    const some = join(dir, 'some.jsonl');
    const rest = cli(['record', 'configmaps,secrets', '-n', 'locked', '-o', some, '--duration', '1s', '--kubeconfig', kubeconfig]);
    expect((await rest.exit).code).toBe(0);
    expect(rest.err.join('\n')).toMatch(/! not recording secrets: .*\n(.*\n)?synced; recording to /);
    const only = cli(['record', 'secrets', '-n', 'locked', '-o', join(dir, 'none.jsonl'), '--kubeconfig', kubeconfig]);
    expect((await only.exit).code).toBe(1);
    expect(only.err.at(-1)).toMatch(/^error: cannot record secrets: /);
  }, 60_000);

  it('usage errors exit 2 before anything is written', async () => {
    const run = cli(['record', 'pods', '--kubeconfig', kubeconfig]);
    expect((await run.exit).code).toBe(2);
    expect(run.err[0]).toBe('error: record: name the trace file with -o FILE');
    const bad = cli(['record', 'pods', '-o', join(dir, 'x.jsonl'), '--duration', 'soon']);
    expect((await bad.exit).code).toBe(2);
    expect(bad.err[0]).toMatch(/--duration: "soon" is not a duration/);
    expect(existsSync(join(dir, 'x.jsonl'))).toBe(false);
  }, 30_000);

  it('a --max-bytes that cannot hold the header and the stop line is refused (1, one line), no file left', async () => {
    const file = join(dir, 'tiny.jsonl');
    const run = cli(['record', 'pods', '-o', file, '--max-bytes', '100', '--kubeconfig', kubeconfig]);
    expect((await run.exit).code).toBe(1);
    expect(run.err).toEqual([
      expect.stringMatching(/^connecting to http:\/\/127\.0\.0\.1:\d+ \(context emulator\) …$/),
      expect.stringMatching(
        /^error: --max-bytes: a trace of at most 100 bytes cannot hold its header \(\d+ bytes\) and its stop line \(up to 64\): give at least \d+ bytes$/,
      ),
    ]);
    expect(existsSync(file)).toBe(false);
    // A file already there is left as it was (it was opened, so emptied, before the limit was checked).
    writeFileSync(file, 'keep me\n');
    const again = cli(['record', 'pods', '-o', file, '--max-bytes', '100', '--kubeconfig', kubeconfig]);
    expect((await again.exit).code).toBe(1);
    expect(readFileSync(file, 'utf8')).toBe('keep me\n');
  }, 30_000);
});
