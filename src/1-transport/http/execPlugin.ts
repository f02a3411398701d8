import { spawn, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { Observable } from 'rxjs';
import { PendingBytes } from '../chunks.ts';
import type { PluginResult } from './execCredential.ts';

// Running an exec credential plugin: the I/O shell of ./execCredential.ts. The plugin gets a process
// group of its own, so that the group, with whatever the plugin started (a shell's children), can be
// killed at once: at its deadline (./execAuth.ts), when
// an output passes its limit, and when the plugin exits (anything of its group still running then is
// an orphan that would hold its output open).

/** One run: what to start, and how much of each output to read. */
export interface PluginRun {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  readonly maxStdoutBytes: number;
  readonly maxStderrBytes: number;
  /** Told the process once spawned (./execAuth.ts lets it not keep the process alive while no request waits for it). */
  readonly started?: (child: ChildProcess) => void;
}

/**
 * How long after the plugin exits its outputs may stay open (ms): then they are closed and what was read is its
 * output. A plugin that leaves a child of its own session (`setsid … &`, out of reach of the group kill) holding
 * stdout would otherwise keep the request waiting until its timeout. client-go waits for the outputs to close
 * (`cmd.Run`), and hangs there; we do not.
 */
export const EXEC_EXIT_GRACE_MS = 1_000;

/** Process groups are POSIX: on Windows only the plugin itself is killed. */
const GROUPS = process.platform !== 'win32';

/**
 * Plugins still running. A run outlives its requests (./execAuth.ts) and its group is detached, so neither a
 * Ctrl-C (sent to the foreground group) nor Node's exit would reach it: at `process.on('exit')` (a normal end,
 * `process.exit()`, the CLI's signal paths) every live group is killed, synchronously, as exit handlers must be. A
 * process killed by a signal it does not handle runs no handler: such a plugin lives on to its own end.
 */
const live = new Set<ChildProcess>();
let killAtExit = false;

function track(child: ChildProcess): void {
  live.add(child);
  if (killAtExit) return;
  killAtExit = true;
  process.on('exit', () => {
    for (const running of live) killGroup(running);
  });
}

/**
 * Runs the plugin once: emits how it ended (then completes), never errors. stdin is closed (no
 * terminal is offered); stdout and stderr are read up to their limits, and at a limit reading stops
 * and the group is killed. Unsubscribing before the end kills the group. Once the plugin exited, its outputs
 * are read until they close, at most {@link EXEC_EXIT_GRACE_MS} more.
 */
export function runPlugin(run: PluginRun): Observable<PluginResult> {
  return new Observable<PluginResult>((subscriber) => {
    let child: ChildProcess;
    try {
      child = spawn(run.command, [...run.args], { env: run.env, stdio: ['ignore', 'pipe', 'pipe'], detached: GROUPS, windowsHide: true });
    } catch (error) {
      subscriber.next({ outcome: 'not-started', code: (error as NodeJS.ErrnoException | null)?.code });
      subscriber.complete();
      return;
    }
    track(child);
    run.started?.(child);
    let ended = false;
    let grace: ReturnType<typeof setTimeout> | undefined;
    const stdout = new BoundedText(run.maxStdoutBytes);
    const stderr = new BoundedText(run.maxStderrBytes);
    const end = (result: PluginResult) => {
      if (ended) return;
      ended = true;
      clearTimeout(grace);
      stopReading(child);
      subscriber.next(result);
      subscriber.complete();
    };
    const read = (stream: Readable | null, into: BoundedText, name: 'stdout' | 'stderr') =>
      stream?.on('data', (chunk: Buffer) => {
        if (ended || into.add(chunk)) return;
        killGroup(child);
        end({ outcome: 'too-large', stream: name, limit: into.limit, stdout: stdout.text(), stderr: stderr.text() });
      });
    read(child.stdout, stdout, 'stdout');
    read(child.stderr, stderr, 'stderr');
    child.on('error', (error: NodeJS.ErrnoException) => {
      killGroup(child);
      live.delete(child);
      end({ outcome: 'not-started', code: error.code });
    });
    // The plugin is done: what is left of its group is killed, so its output closes; what escaped the group (a
    // child in a session of its own) and holds it open has a grace, then its pipes are closed under it.
    child.on('exit', (code: number | null, signal: NodeJS.Signals | null) => {
      killGroup(child);
      live.delete(child);
      if (ended) return; // already ended (unsubscribed, output over its limit): no grace to arm, nothing to clear it
      grace = setTimeout(() => end({ outcome: 'exited', code, signal, stdout: stdout.text(), stderr: stderr.text() }), EXEC_EXIT_GRACE_MS);
    });
    child.on('close', (code: number | null, signal: NodeJS.Signals | null) =>
      end({ outcome: 'exited', code, signal, stdout: stdout.text(), stderr: stderr.text() }),
    );
    return () => {
      if (ended) return;
      ended = true;
      clearTimeout(grace);
      killGroup(child);
      stopReading(child);
    };
  });
}

/** SIGKILL to the plugin's whole process group (nothing if it is gone already). */
function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    if (GROUPS) process.kill(-child.pid, 'SIGKILL');
    else child.kill('SIGKILL');
  } catch {
    // ESRCH: no process of the group is left
  }
}

function stopReading(child: ChildProcess): void {
  child.stdout?.destroy();
  child.stderr?.destroy();
}

/** Bytes up to a limit; `add` says false once a chunk would pass it (what of it fits is kept). */
export class BoundedText {
  private readonly bytes: PendingBytes;
  readonly limit: number;
  constructor(limit: number) {
    this.limit = limit;
    this.bytes = new PendingBytes(limit);
  }

  /** Keeps what fits (copied: a plugin writing a byte at a time costs its bytes); false once the limit is passed. */
  add(chunk: Buffer): boolean {
    const room = this.limit - this.bytes.length;
    this.bytes.append(chunk, 0, Math.min(chunk.length, Math.max(room, 0)));
    return chunk.length <= room;
  }

  text(): string {
    return this.bytes.view().toString('utf8');
  }
}
