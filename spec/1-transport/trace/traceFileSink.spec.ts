/**
 * traceFileSink: a trace writer's sink to a file. Lines go out whole, one burst (a turn of the event loop, or a full
 * buffer) per write, at the end of the turn; close writes what is pending; a failed write is thrown by the next call,
 * never lost.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, readFileSync, readSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { traceFileSink } from '../../../src/1-transport/trace/traceFileSink.ts';
import { traceWriter } from '../../../src/1-transport/trace/writer.ts';
import { readTrace } from '../../../src/1-transport/trace/format.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function tempPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'rx-informer-trace-file-'));
  dirs.push(dir);
  return join(dir, 'trace.jsonl');
}
/** Lets the microtasks queued so far run. */
const endOfRun = () => new Promise<void>((resolve) => queueMicrotask(resolve));
/** Lets this turn of the event loop end (its `setImmediate` callbacks, queued before this one, run). */
const endOfTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('traceFileSink', () => {
  it('mode: set on a file it creates and on one that was there; without it, an existing file keeps its own', () => {
    const created = tempPath();
    traceFileSink(created, { mode: 0o600 }).close();
    expect(statSync(created).mode & 0o777).toBe(0o600);
    const existing = `${created}.old`;
    writeFileSync(existing, 'x', { mode: 0o644 });
    traceFileSink(existing, { mode: 0o600 }).close();
    expect(statSync(existing).mode & 0o777).toBe(0o600);
    const kept = `${created}.kept`;
    writeFileSync(kept, 'x', { mode: 0o640 });
    traceFileSink(kept).close();
    expect(statSync(kept).mode & 0o777).toBe(0o640);
  });

  it('mode: never set on what is not a regular file (a FIFO here, /dev/null for a user): written to, its mode left alone', () => {
    const fifo = `${tempPath()}.fifo`;
    execFileSync('mkfifo', ['-m', '644', fifo]);
    // A reader first (not blocking), so that opening the FIFO to write does not wait for one.
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      const file = traceFileSink(fifo, { mode: 0o600 });
      file.write('{"a":1}\n');
      file.close();
      expect(statSync(fifo).isFIFO()).toBe(true);
      expect(statSync(fifo).mode & 0o777).toBe(0o644);
      const got = Buffer.alloc(64);
      expect(got.toString('utf8', 0, readSync(reader, got))).toBe('{"a":1}\n');
    } finally {
      closeSync(reader);
    }
  });

  it('writes the lines of one turn of the event loop together when it ends, whole and in order, parts as their concatenation', async () => {
    const path = tempPath();
    const file = traceFileSink(path);
    file.write('{"a":1}\n');
    await endOfRun(); // another synchronous run of the same turn (the next chunk of a stream read in one go)
    file.writeParts(['{"b":', '"żółw 🐢"', '}\n']);
    await endOfRun();
    expect(readFileSync(path, 'utf8')).toBe(''); // not yet: the turn goes on
    await endOfTurn();
    expect(readFileSync(path, 'utf8')).toBe('{"a":1}\n{"b":"żółw 🐢"}\n');
    file.write('{"c":3}\n');
    file.close();
    expect(readFileSync(path, 'utf8')).toBe('{"a":1}\n{"b":"żółw 🐢"}\n{"c":3}\n');
    expect(() => file.write('{"d":4}\n')).toThrow(/closed/);
    file.close(); // idempotent
  });

  it('keeps the order of lines longer than its buffer, and of bursts longer than it', async () => {
    const path = tempPath();
    const file = traceFileSink(path);
    const lines = [`${'x'.repeat(10)}\n`, `${'é'.repeat(300_000)}\n`, `${'y'.repeat(100_000)}\n`];
    for (let i = 0; i < 3; i++) for (const line of lines) i % 2 ? file.writeParts([line.slice(0, 5), line.slice(5)]) : file.write(line);
    file.flush();
    expect(readFileSync(path, 'utf8')).toBe(lines.join('').repeat(3));
    await endOfTurn();
    file.close();
    expect(readFileSync(path, 'utf8')).toBe(lines.join('').repeat(3));
  });

  it('holds at most its buffer: a turn that takes more is written as the buffer fills, the rest at its end', async () => {
    const path = tempPath();
    const file = traceFileSink(path);
    const line = `${'x'.repeat(1023)}\n`;
    for (let i = 0; i < 400; i++) file.write(line); // 400 KiB in one turn, past the 256 KiB buffer
    const written = statSync(path).size;
    expect(written).toBeGreaterThan(0);
    expect(400 * 1024 - written).toBeLessThanOrEqual(256 * 1024);
    expect(written % 1024).toBe(0); // whole lines
    await endOfTurn();
    expect(statSync(path).size).toBe(400 * 1024);
    file.close();
  });

  it('never cuts a line whose characters take more bytes than its length says (a buffer nearly full)', () => {
    const path = tempPath();
    const file = traceFileSink(path);
    const ascii = `${'a'.repeat(1023)}\n`;
    const wide = `${'é'.repeat(999)}🐢\n`;
    const expected: string[] = [];
    for (let i = 0; i < 255; i++) expected.push(ascii);
    expected.push(wide, ascii, wide);
    for (const line of expected) file.write(line);
    file.close();
    expect(readFileSync(path, 'utf8')).toBe(expected.join(''));
  });

  it('a write that fails (a full disk) is thrown by the next call: a trace writer over it stops, closed, with the error', async () => {
    const file = traceFileSink('/dev/full');
    const writer = traceWriter({ write: (t) => file.write(t), writeParts: (p) => file.writeParts(p), resources: ['pods'] });
    expect(writer.stopped).toBeUndefined(); // the header is taken; it is written at the end of the turn
    await endOfTurn();
    expect(writer.line({ type: 'watch', id: writer.nextId(), options: {} })).toBe(false);
    expect(writer.stopped).toBe('closed');
    expect((writer.error as NodeJS.ErrnoException).code).toBe('ENOSPC');
    expect(() => file.close()).toThrow(/ENOSPC/);
  });

  it('a write that fails at the end of a turn, with nothing more to write (a quiet trace), is told at once (onError)', async () => {
    const told: unknown[] = [];
    const file = traceFileSink('/dev/full', { onError: (error) => told.push(error) });
    file.write('{"type":"header"}\n');
    expect(told).toEqual([]); // taken: written at the end of the turn
    await endOfTurn();
    // Before, nothing heard of it until a next line came, which a quiet resource may never send.
    expect(told).toHaveLength(1);
    expect((told[0] as NodeJS.ErrnoException).code).toBe('ENOSPC');
    expect(() => file.write('x\n')).toThrow(/ENOSPC/);
    expect(() => file.close()).toThrow(/ENOSPC/);
    await file.drained();
  });

  it('a FIFO whose reader stops reading: never blocks; past PIPE_QUEUE_BYTES, a write fails saying so (a child: a blocking write would hang the test)', () => {
    const path = tempPath().replace(/trace\.jsonl$/, 'stalled.fifo');
    execFileSync('mkfifo', [path]);
    const sink = new URL('../../../src/1-transport/trace/traceFileSink.ts', import.meta.url).pathname;
    // The child holds the FIFO open to read and never reads (as a stopped `less` would), then writes 32 MiB in lines of 1 KiB.
    const script = `
      const { openSync, constants } = await import('node:fs');
      const { traceFileSink, PIPE_QUEUE_BYTES } = await import(${JSON.stringify(sink)});
      openSync(${JSON.stringify(path)}, constants.O_RDONLY | constants.O_NONBLOCK);
      const file = traceFileSink(${JSON.stringify(path)});
      const line = 'x'.repeat(1023) + '\\n';
      let taken = 0, message;
      try { for (; taken < 32 * 1024; taken++) file.write(line); } catch (error) { message = error.message; }
      try { file.close(); } catch {} // returns (throwing the failure): what is queued is dropped with the process
      process.stdout.write(JSON.stringify({ taken, message, bound: PIPE_QUEUE_BYTES }));
      process.exit(0);`;
    const node = new URL('../../../node_modules/.bin/node', import.meta.url).pathname;
    // The timeout only ends a child that hangs (the failure this test is for); it never decides a pass.
    const said = execFileSync(node, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000, killSignal: 'SIGKILL' });
    const { taken, message, bound } = JSON.parse(said) as { taken: number; message: string; bound: number };
    expect(message).toMatch(
      new RegExp(`^the reader of ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} stopped reading: \\d+ bytes would be waiting`),
    );
    // It stopped once the pipe (64 KiB or more) and the queue were full, and no later.
    expect(taken * 1024).toBeGreaterThan(bound);
    expect(taken * 1024).toBeLessThan(bound + 2 * 1024 * 1024);
  }, 90_000);

  it('a FIFO whose reader is slow: close() returns at once, what is queued goes to the reader after it, whole (drained)', async () => {
    const path = tempPath().replace(/trace\.jsonl$/, 'slow.fifo');
    execFileSync('mkfifo', [path]);
    const early = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK); // a reader there, not reading yet
    const file = traceFileSink(path);
    const lines = Array.from({ length: 1024 }, (_, i) => `${String(i).padStart(1023, '.')}\n`); // 1 MiB: past the pipe
    for (const line of lines) file.write(line);
    file.close();
    let drained = false;
    void file.drained().then(() => (drained = true));
    await endOfTurn();
    expect(drained).toBe(false); // the pipe holds 64 KiB; the rest waits for the reader
    const chunks: Buffer[] = [];
    const chunk = Buffer.alloc(64 * 1024);
    while (!drained || chunks.length === 0 || chunks.at(-1)!.length > 0) {
      let got = 0;
      try {
        got = readSync(early, chunk, 0, chunk.length, null);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
        await new Promise((resolve) => setImmediate(resolve));
        continue;
      }
      chunks.push(Buffer.from(chunk.subarray(0, got)));
      if (got === 0) break; // the writer closed: the end
    }
    closeSync(early);
    expect(Buffer.concat(chunks).toString('utf8')).toBe(lines.join(''));
    expect(file.bytes).toBe(1024 * 1024);
  }, 60_000);

  it('a disk that fills part way through a write: the file cut back to its last whole line, `bytes` its length', () => {
    // A real partial write, then EFBIG: a child under `ulimit -f 1` (1 KiB; Node ignores SIGXFSZ) writes 30 lines of
    // 100 bytes, one burst. No device is written to.
    const path = tempPath();
    const sink = new URL('../../../src/1-transport/trace/traceFileSink.ts', import.meta.url).pathname;
    const script = `
      const { traceFileSink } = await import(${JSON.stringify(sink)});
      const file = traceFileSink(${JSON.stringify(path)});
      for (let i = 0; i < 30; i++) file.write(String(i).padStart(99, '.') + '\\n');
      let code;
      try { file.close(); } catch (error) { code = error.code; }
      process.stdout.write(JSON.stringify({ code, bytes: file.bytes }));`;
    const node = new URL('../../../node_modules/.bin/node', import.meta.url).pathname;
    const said = execFileSync('bash', ['-c', 'ulimit -f 1 && exec "$0" "$@"', node, '--input-type=module', '-e', script], {
      encoding: 'utf8',
    });
    const text = readFileSync(path, 'utf8');
    // 10 whole lines fit in 1 KiB; the 11th was taken in part, then cut off.
    expect(JSON.parse(said)).toEqual({ code: 'EFBIG', bytes: 1000 });
    expect(text).toHaveLength(1000);
    expect(text.split('\n').slice(0, -1)).toEqual(Array.from({ length: 10 }, (_, i) => String(i).padStart(99, '.')));
  });

  it('is the sink rx-informer record writes through: a trace it wrote reads', () => {
    const path = tempPath();
    const file = traceFileSink(path);
    const writer = traceWriter({ write: (t) => file.write(t), writeParts: (p) => file.writeParts(p), resources: ['pods'] });
    const id = writer.nextId();
    writer.line({ type: 'watch', id, options: {} });
    writer.eventLine(id, '{"type":"ADDED","object":{"metadata":{"name":"a"}}}');
    writer.close();
    file.close();
    expect(readTrace(readFileSync(path, 'utf8')).lines.map((l) => l.type)).toEqual(['watch', 'event', 'stop']);
  });
});
