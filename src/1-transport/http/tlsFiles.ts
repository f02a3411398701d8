import type { KubeConfig } from '@kubernetes/client-node';
import { InformerError } from '../../0-model/errors.ts';
import { defaultNow } from '../../util/monotonicNow.ts';
import { readRegularFile, TOKEN_FILE_PERIOD_MS, TOKEN_FILE_READ_TIMEOUT_MS, warn, within, type FileSeen } from './tokenFile.ts';

// The kubeconfig's certificate-authority, client-certificate and client-key files, read here rather than by
// client-node, which reads them with fs.readFileSync at every request: a FIFO or a hung mount there froze the whole
// process (the event loop itself waited). As the token files (./tokenFile.ts): only a regular file, opened
// non-blocking, bounded, one read per file in flight shared by the requests that need it, and those with a last read
// wait for a new one at most TOKEN_FILE_READ_TIMEOUT_MS. Each request looks at the file (fstat: a rotated file is
// used by the next request, as when client-node read it each time) and reads it again only when fstat sees it
// changed, or its last read is a minute old (a rewrite within one tick of the file system's clock, same size, shows
// no change to fstat).

/** Largest certificate, key or CA file read (a CA bundle of every public root is about 200 KiB). */
export const MAX_TLS_FILE_BYTES = 4 * 1024 * 1024;

/** The kubeconfig field that names a file, as errors name it. */
export type TlsFileField = 'certificate-authority' | 'client-certificate' | 'client-key';

interface Look {
  readonly result: Promise<Buffer | InformerError>;
  readonly deadline: number;
  reported: boolean;
}

interface FileSlot {
  bytes: Buffer | undefined;
  seen: FileSeen | undefined;
  readAt: number;
  looking: Look | undefined;
}

const slots = new WeakMap<KubeConfig, Map<string, FileSlot>>();

/**
 * The bytes of the TLS file `path`, or a `Config` error naming it by its kubeconfig `field`
 * (`cannot read the certificate-authority file /etc/k8s/ca.crt: no such file`). A file that cannot be read now
 * leaves its last bytes in use (as client-go, which reads it once, would go on with them).
 */
export async function tlsFile(kc: KubeConfig, path: string, field: TlsFileField, now: number = defaultNow()): Promise<Buffer> {
  let byPath = slots.get(kc);
  if (!byPath) slots.set(kc, (byPath = new Map()));
  let slot = byPath.get(path);
  if (!slot) byPath.set(path, (slot = { bytes: undefined, seen: undefined, readAt: 0, looking: undefined }));
  const look = (slot.looking ??= startLook(slot, path, field, now));
  const last = slot.bytes;
  const result = last === undefined ? await look.result : await within(look.result, look.deadline - now);
  if (Buffer.isBuffer(result)) return result;
  if (last !== undefined) {
    if (result === undefined && !look.reported) {
      look.reported = true;
      const waited = `no answer within ${TOKEN_FILE_READ_TIMEOUT_MS / 1000} s (a hung mount?)`;
      warn(`the ${field} file ${path}: ${waited}; what was read from it last stays in use until it answers`);
    }
    return last;
  }
  throw result ?? new InformerError('Config', `cannot read the ${field} file ${path}`, { phase: 'config' });
}

function startLook(slot: FileSlot, path: string, field: TlsFileField, now: number): Look {
  const fresh = slot.bytes !== undefined && now - slot.readAt < TOKEN_FILE_PERIOD_MS ? slot.seen : undefined;
  const result = readRegularFile(path, MAX_TLS_FILE_BYTES, fresh)
    .catch((error: unknown) => String(error))
    .then((read): Buffer | InformerError => {
      slot.looking = undefined;
      if (typeof read === 'string')
        return new InformerError('Config', `cannot read the ${field} file ${path}: ${read}`, { phase: 'config' });
      if (read.bytes === undefined && slot.bytes !== undefined) return slot.bytes;
      const bytes = read.bytes ?? Buffer.alloc(0);
      Object.assign(slot, { bytes, seen: read.seen, readAt: now });
      return bytes;
    });
  return { result, deadline: now + TOKEN_FILE_READ_TIMEOUT_MS, reported: false };
}
