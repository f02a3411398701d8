/**
 * Opening a file to read without handing a thread to what it names: a blocking open() of a FIFO with no writer
 * waits in the kernel until one comes, holding the thread that runs it (the CLI's own, or one of libuv's four, which
 * every fs call, gzip and `dns.lookup` of the process share). So the open is non-blocking, and fstat tells what was
 * opened. One home for the CLI's kubeconfig (a FIFO is read on the event loop) and the transport's token files (only a
 * regular file is read).
 */
import { constants, type Stats } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

/** open(2) flags: read, and return at once whatever the file is (a regular file reads as ever; Windows has no such flag). */
export const OPEN_READ_NONBLOCKING = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

/** What a path names, as far as reading it goes. */
export type FileKind = 'file' | 'fifo' | 'directory' | 'other';

export function fileKind(stat: Stats): FileKind {
  return stat.isFile() ? 'file' : stat.isFIFO() ? 'fifo' : stat.isDirectory() ? 'directory' : 'other';
}

/** `path` opened with {@link OPEN_READ_NONBLOCKING}, and what it is (closed again if fstat fails). */
export async function openToRead(path: string): Promise<{ readonly handle: FileHandle; readonly stat: Stats; readonly kind: FileKind }> {
  const handle = await open(path, OPEN_READ_NONBLOCKING);
  try {
    const stat = await handle.stat();
    return { handle, stat, kind: fileKind(stat) };
  } catch (error) {
    await handle.close().catch(() => undefined);
    throw error;
  }
}
