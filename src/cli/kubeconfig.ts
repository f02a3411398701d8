import { accessSync, closeSync, constants, existsSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { Socket } from 'node:net';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import { KubeConfig, loadYaml, type Cluster, type User } from '@kubernetes/client-node';
import { displayServer } from './explain.ts';
import { invocation, startCommand } from './invocation.ts';
import { kubeConfigSecrets, parseErrorMessage, textSecrets, type SecretScrubber } from './secrets.ts';
import { UsageError } from './watch.ts';
import { OPEN_READ_NONBLOCKING } from '../util/openToRead.ts';

/** Where a pod finds its service account's token (client-node's and client-go's in-cluster config). */
export const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

export interface KubeConfigSources {
  /** The environment (`KUBECONFIG`, `HOME`); default `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
  /** The in-cluster token file; default {@link SERVICE_ACCOUNT_TOKEN}. */
  readonly serviceAccountToken?: string;
  /** Texts of kubeconfig files already read, by file (the FIFOs {@link readKubeConfigInterruptibly} read): not read again. */
  readonly texts?: ReadonlyMap<string, string>;
}

/**
 * The kubeconfig to use, or a UsageError that says what is wrong with it.
 * Every secret it holds is handed to `scrubber` before anything can print it,
 * and a file that does not parse is reported by position, never by quoting it.
 */
export function loadKubeConfig(
  path: string | undefined,
  context: string | undefined,
  scrubber?: SecretScrubber,
  sources: KubeConfigSources = {},
): KubeConfig {
  return readKubeConfig(path, context, scrubber, sources).kubeConfig;
}

/** A kubeconfig as {@link readKubeConfig} loads it, with what client-node 2.x leaves out of it. */
export interface LoadedKubeConfig {
  readonly kubeConfig: KubeConfig;
  /** The selected context's cluster sets `disable-compression: true` (client-node 2.x drops the field on load). */
  readonly disableCompression: boolean;
}

/**
 * `connecting to https://10.0.0.1:6443 (context kind-dev) …`: said on stderr before the first request, so that a
 * server that never answers is not silence until the transport's timer gives up. The server as
 * {@link displayServer} shows it (no user info, no query).
 */
export function connectingLine(kc: KubeConfig): string {
  const context = kc.getCurrentContext();
  return `connecting to ${displayServer(kc.getCurrentCluster()?.server ?? '(no server)')}${context ? ` (context ${context})` : ''} …`;
}

/** The kubeconfig files to read: `path`, else those of $KUBECONFIG, else ~/.kube/config if it is there (else none). */
function kubeConfigFiles(path: string | undefined, env: NodeJS.ProcessEnv): { readonly files: string[]; readonly fromEnv: string[] } {
  const fromEnv = (env['KUBECONFIG'] ?? '').split(delimiter).filter(Boolean);
  const defaultFile = join(env['HOME'] || homedir(), '.kube', 'config');
  return { files: path ? [path] : fromEnv.length > 0 ? fromEnv : existsSync(defaultFile) ? [defaultFile] : [], fromEnv };
}

/**
 * {@link readKubeConfig}, the FIFOs among its files (`--kubeconfig <(kubectl config view --raw)`, a named pipe) read
 * first without blocking the thread ({@link readKubeConfigFifo}): the bin's, so that Ctrl-C or SIGTERM ends a wait for
 * a writer that never writes. Regular files are read as {@link readKubeConfig} reads them.
 */
export async function readKubeConfigInterruptibly(
  path: string | undefined,
  context: string | undefined,
  scrubber?: SecretScrubber,
  sources: KubeConfigSources = {},
): Promise<LoadedKubeConfig> {
  const texts = new Map(sources.texts);
  for (const file of kubeConfigFiles(path, sources.env ?? process.env).files) {
    if (texts.has(file) || !isFifo(file)) continue;
    try {
      texts.set(file, await readKubeConfigFifo(file));
    } catch (error) {
      throw new UsageError(`cannot load kubeconfig ${file}: ${loadErrorMessage(error, '')}`);
    }
  }
  return readKubeConfig(path, context, scrubber, { ...sources, texts });
}

function isFifo(file: string): boolean {
  try {
    return statSync(file).isFIFO();
  } catch {
    return false; // not there, or not for us to see: reading it says why
  }
}

/**
 * The text of a kubeconfig that is a FIFO, read on the event loop: opened non-blocking (an open for reading would
 * wait in the kernel for a writer), then read as a pipe until its writer closes it, never past `maxBytes` (an
 * error, code EFBIG, as {@link readKubeConfigFile} says it). Nothing holds the thread, so a signal's handler runs
 * while it waits for a writer, or for a writer's bytes.
 */
export function readKubeConfigFifo(file: string, maxBytes: number = KUBECONFIG_MAX_BYTES): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const pipe = new Socket({ fd: openSync(file, OPEN_READ_NONBLOCKING), readable: true, writable: false });
    const chunks: Buffer[] = [];
    let total = 0;
    pipe.on('data', (chunk: Buffer) => {
      total += chunk.length;
      if (total > maxBytes) {
        pipe.destroy();
        reject(tooLarge(maxBytes));
      } else chunks.push(chunk);
    });
    pipe.once('end', () => {
      pipe.destroy();
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    pipe.once('error', reject);
  });
}

/** {@link loadKubeConfig}, and whether the selected cluster disables compression (as client-go's `DisableCompression`). */
export function readKubeConfig(
  path: string | undefined,
  context: string | undefined,
  scrubber?: SecretScrubber,
  sources: KubeConfigSources = {},
): LoadedKubeConfig {
  const env = sources.env ?? process.env;
  const { files, fromEnv } = kubeConfigFiles(path, env);
  if (!path && files.length === 0 && !existsSync(sources.serviceAccountToken ?? SERVICE_ACCOUNT_TOKEN) && process.platform !== 'win32') {
    throw new UsageError(
      'no kubeconfig found: looked at $KUBECONFIG (not set), ~/.kube/config (no such file) and the in-cluster service account (not in a pod); ' +
        `pass --kubeconfig FILE, or run \`${startCommand('', invocation(env))}\` without options for the built-in emulator`,
    );
  }
  // Each file is read once, bounded, and client-node parses the text: a file read twice (as client-node's
  // loadFromFile would) is empty the second time when it is a pipe (`--kubeconfig <(kubectl config view --raw)`).
  const texts: string[] = [];
  for (const file of files) {
    try {
      texts.push(sources.texts?.get(file) ?? readKubeConfigFile(file));
    } catch (error) {
      throw new UsageError(`cannot load kubeconfig ${file}: ${loadErrorMessage(error, '')}`);
    }
  }
  for (const text of texts) for (const secret of textSecrets(text)) scrubber?.add(secret);

  const kc = new KubeConfig();
  try {
    if (files.length > 0) loadTexts(kc, files, texts);
    else kc.loadFromDefault();
  } catch (error) {
    const where = path ? ` ${path}` : fromEnv.length > 0 ? ` (from $KUBECONFIG)` : files.length > 0 ? ` ${files[0]}` : '';
    throw new UsageError(`cannot load kubeconfig${where}: ${loadErrorMessage(error, texts.join('\n'))}`);
  }
  for (const secret of kubeConfigSecrets(kc)) scrubber?.add(secret);
  if (context) {
    if (!kc.getContextObject(context))
      throw new UsageError(
        `the kubeconfig has no context "${context}" (it has: ${
          kc
            .getContexts()
            .map((c) => c.name)
            .join(', ') || 'none'
        })`,
      );
    kc.setCurrentContext(context);
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster) {
    // As the --context error does: the names to choose from.
    const names =
      kc
        .getContexts()
        .map((c) => c.name)
        .join(', ') || 'none';
    throw new UsageError(`the kubeconfig names no current cluster (set a current-context or pass --context; its contexts: ${names})`);
  }
  const problem = clusterProblem(cluster, kc.getCurrentUser());
  if (problem !== undefined) throw new UsageError(`bad kubeconfig: ${problem}`);
  useTokenFiles(kc, tokenFiles(files, texts));
  return { kubeConfig: kc, disableCompression: disablesCompression(texts, cluster.name) };
}

/** The most a kubeconfig file may hold (docs/cli.md): a larger regular file is refused unread, a pipe or device is cut there. */
export const KUBECONFIG_MAX_BYTES = 16 * 1024 * 1024;

/**
 * The text of one kubeconfig file, read once through one descriptor and never past `maxBytes`: a regular file
 * larger than that is refused by its size (fstat), anything else (a FIFO such as `<(kubectl config view --raw)`, a
 * character device such as /dev/zero) is read in chunks until its end or until it passes `maxBytes`, which is an
 * error (code EFBIG) that says so. Errors of the file system keep their code (ENOENT, EACCES, EISDIR).
 */
export function readKubeConfigFile(file: string, maxBytes: number = KUBECONFIG_MAX_BYTES): string {
  const fd = openSync(file, 'r');
  try {
    const stat = fstatSync(fd);
    if (stat.isFile() && stat.size > maxBytes) throw tooLarge(maxBytes);
    const chunks: Buffer[] = [];
    const buffer = Buffer.alloc(64 * 1024);
    let total = 0;
    for (;;) {
      const n = readChunk(fd, buffer, Math.min(buffer.length, maxBytes + 1 - total));
      if (n === 0) break;
      chunks.push(Buffer.from(buffer.subarray(0, n)));
      total += n;
      if (total > maxBytes) throw tooLarge(maxBytes);
    }
    return Buffer.concat(chunks).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/** A kubeconfig file past the cap: one line (code EFBIG). */
function tooLarge(maxBytes: number): Error {
  return Object.assign(new Error(`larger than ${byteSize(maxBytes)}, the most a kubeconfig may hold (docs/cli.md)`), { code: 'EFBIG' });
}

/** One read; a descriptor left non-blocking by another process (a shared /dev/stdin) is waited for, 10 ms at a time. */
function readChunk(fd: number, buffer: Buffer, length: number): number {
  for (;;) {
    try {
      return readSync(fd, buffer, 0, length, null);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
    }
  }
}

function byteSize(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`;
}

/**
 * The files' texts into `kc` as client-node's loadFromFile and loadFromDefault would load the files: each text parsed,
 * its relative certificate and key paths resolved against its file's directory, the second and later ones merged in
 * (a later file's current-context wins, a name defined twice is refused: client-node's `mergeConfig`).
 */
function loadTexts(kc: KubeConfig, files: readonly string[], texts: readonly string[]): void {
  texts.forEach((text, i) => {
    const one = i === 0 ? kc : new KubeConfig();
    one.loadFromString(text);
    one.makePathsAbsolute(dirname(files[i] ?? '.'));
    if (one !== kc) kc.mergeConfig(one);
  });
}

/**
 * What makes the selected cluster unusable before any request, in the transport's words (it would fail its first
 * request so, as `bad kubeconfig`, after the CLI had said where it connects): a server that is no http(s) URL, plain
 * http:// that client-node refuses (unless insecure-skip-tls-verify or a proxy), a TLS file (certificate-authority,
 * client-certificate, client-key) it cannot read. The server is named as {@link displayServer} shows it. Nothing is
 * run (no exec plugin): a credential plugin that fails is not a bad kubeconfig.
 */
export function clusterProblem(cluster: Cluster, user: User | null): string | undefined {
  let url: URL;
  try {
    url = new URL(cluster.server);
  } catch {
    return `the cluster's server is not a valid URL`;
  }
  const server = displayServer(cluster.server);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return `the server ${server} is not an https:// (or http://) URL`;
  if (url.protocol === 'http:' && !cluster.skipTLSVerify && !cluster.proxyUrl) {
    return `the server ${server} is plain http://, which the Kubernetes client refuses unless the cluster sets insecure-skip-tls-verify: true`;
  }
  const files: [string, string | undefined][] = [
    ['certificate-authority', cluster.caFile],
    ['client-certificate', user?.certFile],
    ['client-key', user?.keyFile],
  ];
  for (const [field, path] of files) {
    if (!path) continue;
    try {
      accessSync(path, constants.R_OK);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (code ?? 'unreadable');
      return `cannot read the ${field} file ${path}: ${why}`;
    }
  }
  return undefined;
}

/**
 * Whether the cluster named `name` sets `disable-compression: true`, in the first of the files' texts that has it
 * (client-node finds the first of a name, and refuses one defined in two files). The texts are parsed again, with
 * client-node's own YAML loader, only once client-node has loaded them: a text that fails now is skipped, and
 * nothing of the parse (its error or its values) is ever printed; only one boolean leaves this function.
 */
export function disablesCompression(texts: readonly string[], name: string): boolean {
  for (const text of texts) {
    let doc: unknown;
    try {
      doc = loadYaml<unknown>(text);
    } catch {
      continue;
    }
    const clusters = (doc as { clusters?: unknown } | null)?.clusters;
    if (!Array.isArray(clusters)) continue;
    const entry: unknown = clusters.find((c: unknown) => (c as { name?: unknown } | null)?.name === name);
    if (entry === undefined) continue;
    return (entry as { cluster?: { 'disable-compression'?: unknown } | null }).cluster?.['disable-compression'] === true;
  }
  return false;
}

/**
 * kubectl's `tokenFile` of each user (client-node 2.x drops the field on load), resolved against the
 * directory of the file that names it, as kubectl does. The first file that defines a user decides
 * (client-node refuses a user defined in two). As {@link disablesCompression}, nothing of a parse leaves
 * this function but the paths.
 */
export function tokenFiles(files: readonly string[], texts: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  const seen = new Set<string>();
  texts.forEach((text, i) => {
    let doc: unknown;
    try {
      doc = loadYaml<unknown>(text);
    } catch {
      return;
    }
    const users = (doc as { users?: unknown } | null)?.users;
    if (!Array.isArray(users)) return;
    for (const entry of users as unknown[]) {
      const name = (entry as { name?: unknown } | null)?.name;
      if (typeof name !== 'string' || seen.has(name)) continue;
      seen.add(name);
      const file = (entry as { user?: { tokenFile?: unknown } | null }).user?.tokenFile;
      if (typeof file !== 'string' || file === '') continue;
      out.set(name, isAbsolute(file) ? file : join(dirname(files[i] ?? '.'), file));
    }
  });
  return out;
}

/**
 * Gives each user with a `tokenFile` (and no auth provider) client-node's in-cluster form of it, an auth provider
 * whose `config.tokenFile` names the file: the transport reads it for each request as client-go does
 * (see docs/transport.md, "Credentials that rotate").
 */
function useTokenFiles(kc: KubeConfig, files: ReadonlyMap<string, string>): void {
  if (files.size === 0) return;
  const users = kc.getUsers().map((user) => {
    const tokenFile = files.get(user.name);
    return tokenFile === undefined || user.authProvider ? user : { ...user, authProvider: { name: 'tokenFile', config: { tokenFile } } };
  });
  kc.loadFromOptions({ clusters: kc.getClusters(), users, contexts: kc.getContexts(), currentContext: kc.getCurrentContext() });
}

/** A file-system error says which file and why; anything else came from parsing, and is cut down to what is wrong and where. */
/** Node's file-system errors in words, as `cannot read the certificate-authority file …: no such file` says them. */
const FILE_ERRORS: Readonly<Record<string, string>> = { ENOENT: 'no such file', EACCES: 'permission denied', EISDIR: 'is a directory' };

function loadErrorMessage(error: unknown, fileText: string): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  // The file is named once, by the caller: Node's `ENOENT: no such file or directory, open '…'` says it again.
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return FILE_ERRORS[code] ?? message.split('\n')[0] ?? code;
  return `not a valid kubeconfig (YAML or JSON): ${parseErrorMessage(message, fileText)}`;
}
