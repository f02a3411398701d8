/**
 * Help as users ask for it and as it reaches them (audit10): `rx-informer help` is `--help`; a write of the help (or
 * of anything a run prints) that fails is exit 1 with one line, not 0 (outputWatch, the bin's stdout watched from the
 * start), tested with an injected failing stream; `trim --help` shows `--from` as optional, which it is.
 */
import { describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { parseCommandLine } from '../../src/cli/args.ts';
import { commandHelp } from '../../src/cli/commandHelp.ts';
import { outputWatch } from '../../src/cli/invocation.ts';
import { parseTrimLine } from '../../src/cli/trimCommand.ts';

/** A stdout whose writes fail with `code` (ENOSPC: a full disk, /dev/full), or succeed when `code` is undefined. */
function stdout(code?: string): { stream: Writable; written: string[] } {
  const written: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      if (code === undefined) {
        written.push(chunk.toString());
        callback();
      } else callback(Object.assign(new Error(`${code}: it failed, write`), { code }));
    },
  });
  return { stream, written };
}

describe('rx-informer help', () => {
  it('is --help', () => {
    expect(parseCommandLine(['help'])).toEqual({ kind: 'help' });
    expect(parseCommandLine(['--help'])).toEqual({ kind: 'help' });
  });
});

describe('a failed write of what a run prints is exit 1 (outputWatch)', () => {
  it('the help written to a stream that fails (ENOSPC) is exit 1 and one line on stderr', async () => {
    const { stream } = stdout('ENOSPC');
    const said: string[] = [];
    const settled = outputWatch(stream, (line) => said.push(line));
    stream.write('rx-informer — watch Kubernetes objects change\n');
    expect(await settled(0)).toBe(1);
    expect(said).toEqual(['error: cannot write to stdout: ENOSPC: it failed, write']);
  });

  it('written in full: the code as it is; a reader gone (EPIPE) is no failure; a run that failed keeps its code', async () => {
    const ok = stdout();
    const said: string[] = [];
    const settled = outputWatch(ok.stream, (line) => said.push(line));
    ok.stream.write('help\n');
    expect(await settled(0)).toBe(0);
    expect(ok.written.join('')).toBe('help\n');
    const gone = stdout('EPIPE');
    const afterGone = outputWatch(gone.stream, (line) => said.push(line));
    gone.stream.write('help\n');
    expect(await afterGone(0)).toBe(0);
    const failed = stdout('ENOSPC');
    const afterFailed = outputWatch(failed.stream, (line) => said.push(line));
    failed.stream.write('line\n');
    expect(await afterFailed(2)).toBe(2);
    expect(said).toEqual([]);
  });
});

describe('trim --help', () => {
  it('shows --from as optional, as trim takes it', () => {
    const help = commandHelp(['trim', '--help']) ?? '';
    expect(help).toContain('rx-informer trim FILE [--from T] [--to T]');
    expect(parseTrimLine(['trim', 't.jsonl', '-o', 'w.jsonl'])).toMatchObject({ file: 't.jsonl', out: 'w.jsonl' });
  });
});
