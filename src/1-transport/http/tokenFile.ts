import type { KubeConfig } from '@kubernetes/client-node';
import { InformerError, WARNING_TYPE } from '../../0-model/errors.ts';
import { openToRead } from '../../util/openToRead.ts';
import { bearerTokenFault } from './bearerToken.ts';
import { formatBytes } from './options.ts';
import { defaultNow } from '../../util/monotonicNow.ts';

// A bearer token read from a file (a kubeconfig user's `tokenFile`, the in-cluster service account
// token), as client-go's cached file token source does: read again once a minute, and a failed
// read keeps the last token. Unlike client-go, a 401 also makes the next request read it again.
// client-go reads under a mutex (one goroutine waits, the rest with it) with no time limit; here one
// read per file is in flight, shared by every request that needs it, and those with a last token wait
// for it at most TOKEN_FILE_READ_TIMEOUT_MS: a file system call holds one of libuv's four threads,
// which every fs call, gzip inflate and dns.lookup of the process share.

/** How long a token read from a file is used before the file is read again (client-go: one minute). */
export const TOKEN_FILE_PERIOD_MS = 60_000;
/** Largest token file read. */
export const MAX_TOKEN_FILE_BYTES = 1024 * 1024;
/**
 * How long requests that have a last token wait for a new read of the file (a hung NFS or CSI mount never answers):
 * past it they go on with that token. With none yet they wait for the read, bounded by their own `requestTimeoutMs`
 * (a busy thread pool can delay a healthy read by seconds: failing it would turn load into errors). Either way the
 * read stays the one in flight until it answers.
 */
export const TOKEN_FILE_READ_TIMEOUT_MS = 5_000;

/** The read of a file in flight: what it gives, and until when requests wait for it. */
interface Reading {
  readonly result: Promise<string | InformerError>;
  readonly deadline: number;
  /** Whether the wait past the deadline was reported (once per read). */
  reported: boolean;
}

export interface TokenSlot {
  token: string | undefined;
  readAt: number;
  reading?: Reading | undefined;
}

const slots = new WeakMap<KubeConfig, Map<string, TokenSlot>>();

/** A token handed out, to name on a 401. */
export interface IssuedToken {
  readonly token: string;
  readonly slot: TokenSlot;
}

/** Reads a token file: the token, or why not (`Config`). Replaced in specs by a read that hangs. */
export type TokenFileReader = (path: string) => Promise<string | InformerError>;

/**
 * The token in `path`, read again when the last read is older than {@link TOKEN_FILE_PERIOD_MS}, by the monotonic
 * clock as every duration (`now`; a wall-clock step back of an hour kept a rotated token unread for that hour). Requests that come
 * while a read is in flight wait for it rather than start their own.
 */
export async function tokenFromFile(
  kc: KubeConfig,
  path: string,
  now: number = defaultNow(),
  read: TokenFileReader = readToken,
): Promise<IssuedToken> {
  let byPath = slots.get(kc);
  if (!byPath) slots.set(kc, (byPath = new Map()));
  let slot = byPath.get(path);
  if (!slot) byPath.set(path, (slot = { token: undefined, readAt: 0 }));
  if (slot.token !== undefined && now - slot.readAt < TOKEN_FILE_PERIOD_MS) return { token: slot.token, slot };
  const reading = (slot.reading ??= startRead(slot, path, now, read));
  const result = slot.token === undefined ? await reading.result : await within(reading.result, reading.deadline - now);
  if (typeof result === 'string') return { token: result, slot };
  if (result === undefined && slot.token !== undefined) {
    if (!reading.reported) {
      const waited = `no answer within ${TOKEN_FILE_READ_TIMEOUT_MS / 1000} s (a hung mount?)`;
      warn(`the token file ${path}: ${waited}; the last token read from it stays in use until it answers`);
    }
    reading.reported = true;
    return { token: slot.token, slot };
  }
  // client-go: a token file that cannot be read now leaves the last token in use.
  if (slot.token !== undefined) return { token: slot.token, slot };
  throw result ?? new InformerError('Config', `cannot read the token file ${path}`, { phase: 'config' });
}

/** One read of the file for every request that comes while it runs; what it reads is kept, however late. */
function startRead(slot: TokenSlot, path: string, now: number, read: TokenFileReader): Reading {
  const result = read(path)
    .catch((error: unknown) => new InformerError('Config', `cannot read the token file ${path}: ${String(error)}`, { phase: 'config' }))
    .then((answer) => {
      if (typeof answer === 'string') {
        slot.token = answer;
        slot.readAt = now;
      }
      slot.reading = undefined;
      return answer;
    });
  return { result, deadline: now + TOKEN_FILE_READ_TIMEOUT_MS, reported: false };
}

/** What `promise` gives within `ms`, or undefined. */
export function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  if (ms <= 0) return Promise.resolve(undefined);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(resolve, ms, undefined)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** The wait was not for nothing: the request goes on (with the last token), so this is a warning, typed by its `code`. */
export function warn(message: string): void {
  try {
    process.emitWarning(message, { type: WARNING_TYPE, code: 'Timeout' });
  } catch {
    // emitWarning replaced by one that throws: the request still goes on.
  }
}

/** The server answered 401 to `issued`: the next request reads the file again. */
export function forgetToken(issued: IssuedToken): void {
  if (issued.slot.token === issued.token) issued.slot.readAt = -Infinity;
}

/**
 * The file's text, trimmed, or a `Config` error naming the file (a path is no secret; the token is never quoted), also
 * for a token that may not be sent in a header (./bearerToken.ts). Only
 * a regular file is read (a FIFO or a device is refused unread: ./openToRead.ts), into a buffer of its size, and one
 * larger than {@link MAX_TOKEN_FILE_BYTES} is refused by its size.
 */
async function readToken(path: string): Promise<string | InformerError> {
  const wrong = (what: string) => new InformerError('Config', `cannot read the token file ${path}: ${what}`, { phase: 'config' });
  const read = await readRegularFile(path, MAX_TOKEN_FILE_BYTES);
  if (typeof read === 'string') return wrong(read);
  const token = (read.bytes ?? Buffer.alloc(0)).toString('utf8').trim();
  if (token === '') return wrong('it is empty');
  const fault = bearerTokenFault(token);
  return fault === undefined ? token : wrong(`the token ${fault}`);
}

/** What fstat says of a file's contents: its identity, size and times (a change of any is a change of the file). */
export type FileSeen = string;

/**
 * A regular file's bytes, at most `maxBytes`, or what is wrong (`no such file`, `not a regular file (a fifo)`, `larger
 * than 1 MiB`): opened non-blocking and checked with fstat (../../util/openToRead.ts), so a FIFO or a device is refused
 * unread, and read into a buffer of its size (one over `maxBytes` is refused by that size). `unchanged`: asked with
 * what was seen last, a file fstat still sees so is not read (`bytes` undefined). One home for token and TLS files.
 */
export async function readRegularFile(
  path: string,
  maxBytes: number,
  unchanged?: FileSeen,
): Promise<{ readonly bytes: Buffer; readonly seen: FileSeen } | { readonly bytes: undefined; readonly seen: FileSeen } | string> {
  const tooLarge = `larger than ${formatBytes(maxBytes)}`;
  let handle;
  try {
    const opened = await openToRead(path);
    handle = opened.handle;
    if (opened.kind !== 'file') return `not a regular file (${opened.kind === 'other' ? 'a device or socket' : `a ${opened.kind}`})`;
    const { dev, ino, size, mtimeMs, ctimeMs } = opened.stat;
    const seen = `${dev}:${ino}:${size}:${mtimeMs}:${ctimeMs}`;
    if (seen === unchanged) return { bytes: undefined, seen };
    if (size > maxBytes) return tooLarge;
    // One byte more than fstat said, to see a file that grew since; it grows (to the cap) if it did.
    let buffer = Buffer.alloc(size + 1);
    let bytes = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, bytes, buffer.length - bytes, null);
      if (bytesRead === 0) break;
      bytes += bytesRead;
      if (bytes > maxBytes) return tooLarge;
      if (bytes === buffer.length) {
        const larger = Buffer.alloc(Math.min(buffer.length * 2, maxBytes + 1));
        buffer.copy(larger);
        buffer = larger;
      }
    }
    return { bytes: buffer.subarray(0, bytes), seen };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException | null)?.code;
    return code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (code ?? 'unknown error');
  } finally {
    await handle?.close().catch(() => undefined);
  }
}
