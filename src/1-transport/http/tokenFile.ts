import { open } from 'node:fs/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import { InformerError } from '../../0-model/errors.ts';
import { formatBytes } from './options.ts';

// A bearer token read from a file (a kubeconfig user's `tokenFile`, the in-cluster service account
// token), as client-go's cached file token source does: read again once a minute, and a failed
// read keeps the last token. Unlike client-go, a 401 also makes the next request read it again.

/** How long a token read from a file is used before the file is read again (client-go: one minute). */
export const TOKEN_FILE_PERIOD_MS = 60_000;
/** Largest token file read. */
export const MAX_TOKEN_FILE_BYTES = 1024 * 1024;

export interface TokenSlot {
  token: string | undefined;
  readAt: number;
}

const slots = new WeakMap<KubeConfig, Map<string, TokenSlot>>();

/** A token handed out, to name on a 401. */
export interface IssuedToken {
  readonly token: string;
  readonly slot: TokenSlot;
}

/** The token in `path`, read again when the last read is older than {@link TOKEN_FILE_PERIOD_MS}. */
export async function tokenFromFile(kc: KubeConfig, path: string, now: number = Date.now()): Promise<IssuedToken> {
  let byPath = slots.get(kc);
  if (!byPath) slots.set(kc, (byPath = new Map()));
  let slot = byPath.get(path);
  if (!slot) byPath.set(path, (slot = { token: undefined, readAt: 0 }));
  if (slot.token !== undefined && now - slot.readAt < TOKEN_FILE_PERIOD_MS) return { token: slot.token, slot };
  const read = await readToken(path);
  if (typeof read === 'string') {
    slot.token = read;
    slot.readAt = now;
    return { token: read, slot };
  }
  // client-go: a token file that cannot be read now leaves the last token in use.
  if (slot.token !== undefined) return { token: slot.token, slot };
  throw read;
}

/** The server answered 401 to `issued`: the next request reads the file again. */
export function forgetToken(issued: IssuedToken): void {
  if (issued.slot.token === issued.token) issued.slot.readAt = -Infinity;
}

/** The file's text, trimmed, or a `Config` error naming the file (a path is no secret; the token is never quoted). */
async function readToken(path: string): Promise<string | InformerError> {
  const wrong = (what: string) => new InformerError('Config', `cannot read the token file ${path}: ${what}`, { phase: 'config' });
  let handle;
  try {
    handle = await open(path, 'r');
    const buffer = Buffer.alloc(MAX_TOKEN_FILE_BYTES + 1);
    let bytes = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, bytes, buffer.length - bytes, null);
      if (bytesRead === 0) break;
      bytes += bytesRead;
      if (bytes > MAX_TOKEN_FILE_BYTES) return wrong(`larger than ${formatBytes(MAX_TOKEN_FILE_BYTES)}`);
    }
    const token = buffer.subarray(0, bytes).toString('utf8').trim();
    return token === '' ? wrong('it is empty') : token;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException | null)?.code;
    return wrong(code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (code ?? 'unknown error'));
  } finally {
    await handle?.close().catch(() => undefined);
  }
}
