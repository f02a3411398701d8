/**
 * Running the bin as users do: a child process whose output is collected line
 * by line, and local HTTP receivers for its sinks. Every wait is for a line or
 * a request, never a fixed sleep.
 */
import { expect } from 'vitest';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

export const NODE = new URL('../../node_modules/.bin/node', import.meta.url).pathname;
export const MAIN = new URL('../../src/cli/main.ts', import.meta.url).pathname;
const RUN_MANY = new URL('./runMany.ts', import.meta.url).pathname;

/** A running CLI: its output so far, line by line, and ways to wait for it. */
export interface Cli {
  readonly proc: ChildProcessWithoutNullStreams;
  readonly out: string[];
  readonly err: string[];
  /** Resolves with the first line (present or future) of `stream` matching `pattern`. */
  line(stream: 'out' | 'err', pattern: RegExp, timeoutMs?: number): Promise<string>;
  readonly exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** stdout and stderr as received, whole (control characters and all). */
  raw(): string;
}

const running = new Set<ChildProcessWithoutNullStreams>();

/** Kills every child still running (for afterAll). */
export function killAll(): void {
  for (const proc of running) proc.kill('SIGKILL');
}

/**
 * The environment of the test run without what npm adds to the scripts it runs (`npm_lifecycle_event`, …):
 * the bin runs as installed, whether the tests were started by `npm test`, `npx vitest` or vitest itself.
 */
function installedEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const outside = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('npm_')));
  return { ...outside, ...env };
}

/**
 * `env`: added to the environment (run as installed: npm's variables taken out). `maxOpenFiles`: run under
 * `ulimit -n` (through bash), as a user with a low file-descriptor limit would. `maxFileKiB`: under `ulimit -f`, a
 * file written past that many KiB failing with EFBIG, as a full disk fails with ENOSPC (Node ignores SIGXFSZ).
 */
export function cli(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  options: { readonly maxOpenFiles?: number; readonly maxFileKiB?: number } = {},
): Cli {
  const childEnv = installedEnv(env);
  const limits = [
    ...(options.maxOpenFiles === undefined ? [] : [`ulimit -n ${options.maxOpenFiles}`]),
    ...(options.maxFileKiB === undefined ? [] : [`ulimit -f ${options.maxFileKiB}`]),
  ];
  const proc =
    limits.length === 0
      ? spawn(NODE, [MAIN, ...args], { env: childEnv, stdio: 'pipe' })
      : spawn('bash', ['-c', `${limits.join(' && ')} && exec "$0" "$@"`, NODE, MAIN, ...args], {
          env: childEnv,
          stdio: 'pipe',
        });
  running.add(proc);
  const out: string[] = [];
  const err: string[] = [];
  let raw = '';
  const waiters: { stream: 'out' | 'err'; pattern: RegExp; resolve: (line: string) => void }[] = [];
  const feed = (stream: 'out' | 'err', lines: string[]) => {
    let rest = '';
    return (chunk: Buffer) => {
      raw += chunk.toString('utf8');
      const parts = (rest + chunk.toString('utf8')).split('\n');
      rest = parts.pop() ?? '';
      for (const line of parts) {
        lines.push(line);
        for (const w of [...waiters]) {
          if (w.stream === stream && w.pattern.test(line)) {
            waiters.splice(waiters.indexOf(w), 1);
            w.resolve(line);
          }
        }
      }
    };
  };
  proc.stdout.on('data', feed('out', out));
  proc.stderr.on('data', feed('err', err));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.on('close', (code, signal) => {
      running.delete(proc);
      resolve({ code, signal });
    }),
  );
  return {
    proc,
    out,
    err,
    exit,
    raw: () => raw,
    line: (stream, pattern, timeoutMs = 15_000) => {
      const seen = (stream === 'out' ? out : err).find((l) => pattern.test(l));
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise<string>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no ${stream} line matching ${pattern}; stdout:\n${out.join('\n')}\nstderr:\n${err.join('\n')}`)),
          timeoutMs,
        );
        waiters.push({ stream, pattern, resolve: (l) => (clearTimeout(timer), resolve(l)) });
        void exit.then(() =>
          setImmediate(() =>
            reject(new Error(`exited before a ${stream} line matching ${pattern}; stdout:\n${out.join('\n')}\nstderr:\n${err.join('\n')}`)),
          ),
        );
      });
    },
  };
}

/** What one command line of {@link cliRuns} printed, line by line as {@link Cli} has it, and its exit code. */
export interface Ran {
  readonly code: number;
  readonly out: string[];
  readonly err: string[];
  /** stdout and stderr as written, whole. */
  raw(): string;
}

/**
 * Several command lines run one after the other in one child process (spec/cli/runMany.ts: `run(argv)` with a
 * fresh module instance each), for tests of what the CLI says before it does anything. A test about the
 * process itself (signals, exit, pipes) uses {@link cli}.
 */
export async function cliRuns(argvs: readonly (readonly string[])[], env: NodeJS.ProcessEnv = {}): Promise<Ran[]> {
  const proc = spawn(NODE, [RUN_MANY, JSON.stringify(argvs)], { env: installedEnv(env), stdio: 'pipe' });
  running.add(proc);
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  proc.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve) =>
    proc.on('close', (exitCode) => {
      running.delete(proc);
      resolve(exitCode);
    }),
  );
  if (code !== 0) throw new Error(`runMany exited with ${code}\nstdout:\n${stdout}\nstderr:\n${stderr}`);
  // Complete lines only, as cli() collects them.
  const lines = (text: string) => text.split('\n').slice(0, -1);
  return (JSON.parse(stdout) as { code: number; out: string; err: string }[]).map(({ code: exit, out, err }) => ({
    code: exit,
    out: lines(out),
    err: lines(err),
    raw: () => out + err,
  }));
}

/** A local HTTP receiver on 127.0.0.1 whose answer each test decides. */
export interface Receiver {
  readonly url: string;
  readonly requests: { headers: http.IncomingHttpHeaders; url: string; body: string }[];
  /** Resolves once `n` requests have arrived. */
  received(n: number): Promise<void>;
  close(): Promise<void>;
}

export async function receiver(
  answer: (req: http.IncomingMessage, res: http.ServerResponse) => void = (_q, s) => void s.writeHead(204).end(),
): Promise<Receiver> {
  const requests: Receiver['requests'] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({ headers: req.headers, url: req.url ?? '', body: Buffer.concat(chunks).toString('utf8') });
      for (const w of waiters.filter((w) => requests.length >= w.n)) w.resolve();
      answer(req, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    received: (n) => (requests.length >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve }))),
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

export async function until(check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** No stack trace, no Node internals. */
export function expectNoStack(text: string): void {
  expect(text).not.toMatch(/\n\s+at |node:internal|TypeError|RangeError/);
}
