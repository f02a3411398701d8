import type * as https from 'node:https';
import { KubeConfig, type Cluster, type User } from '@kubernetes/client-node';
import { InformerError, describeThrown } from '../../0-model/errors.ts';
import { isRecord } from '../../util/isRecord.ts';
import { execCredential, forgetCredential, type IssuedCredential } from './execAuth.ts';
import { execConfig, execOf } from './execCredential.ts';
import { forgetToken, tokenFromFile, type IssuedToken } from './tokenFile.ts';

// Credentials for one request. client-node applies the KubeConfig (TLS material, a static token,
// Basic auth, impersonation, its auth providers, a proxy agent); two kinds of credential are ours:
// exec plugins (./execAuth.ts: bounded output and time, cached) and token files
// (./tokenFile.ts: read again as client-go does). For a user with either, client-node applies a
// view of the KubeConfig whose user hides them.

/** A credential a request was sent with, to name when the server answers 401 (see {@link credentialRejected}). */
export type Issued = { readonly exec: IssuedCredential } | { readonly file: IssuedToken };

/**
 * Applies the current context's credentials and TLS settings to `options`. It stops waiting for an exec plugin
 * when `signal` aborts (the plugin runs on, bounded by its own deadline, for the next request); `waitingFor` is told
 * which plugin or token file it waits for (named in a `Timeout`). Rejects with an InformerError:
 * `Config` for a kubeconfig that cannot be applied (naming the file it could not read), `CredentialPlugin`
 * for a plugin that failed.
 */
export async function applyCredentials(
  kc: KubeConfig,
  options: https.RequestOptions,
  signal: AbortSignal,
  waitingFor: (source: string) => void = () => undefined,
): Promise<Issued | undefined> {
  const user = kc.getCurrentUser();
  const cluster = kc.getCurrentCluster();
  const exec = user ? execOf(user) : undefined;
  const tokenFile = user ? tokenFileOf(user) : undefined;
  if (!user || !cluster || (exec === undefined && tokenFile === undefined)) {
    await clientNode(kc, options, cluster, user);
    return undefined;
  }
  await clientNode(viewOf(kc, user, cluster), options, cluster, user);
  const headers = (options.headers ??= {}) as Record<string, string>;
  if (tokenFile !== undefined) {
    let issued: IssuedToken;
    try {
      waitingFor(`the token file ${tokenFile}`);
      issued = await tokenFromFile(kc, tokenFile);
    } catch (error) {
      // client-go: a static token beside the file is used while the file cannot be read.
      if (user.token) return undefined;
      throw error;
    }
    headers['Authorization'] = `Bearer ${issued.token}`;
    return { file: issued };
  }
  // client-go: credentials in the kubeconfig itself (a token, Basic auth, a client certificate) win over the plugin.
  if (user.token || user.username || user.password || user.certFile || user.certData) return undefined;
  const config = execConfig(exec, user.name);
  if (config instanceof InformerError) throw config;
  waitingFor(`exec plugin ${config.command}`);
  const issued = await execCredential(kc, user.name, config, cluster, signal);
  const { token, cert, key } = issued.credential;
  if (token) headers['Authorization'] = `Bearer ${token}`;
  if (cert && key) Object.assign(options, { cert, key });
  return { exec: issued };
}

/** The server answered 401 to a request sent with `issued`: the next request asks for a new credential. */
export function credentialRejected(issued: Issued | undefined): void {
  if (issued === undefined) return;
  if ('exec' in issued) forgetCredential(issued.exec);
  else forgetToken(issued.file);
}

/** A user's token file: kubectl's `tokenFile` (as the CLI loads it) is client-node's in-cluster form, an auth provider's `config.tokenFile`. */
function tokenFileOf(user: User): string | undefined {
  const provider: unknown = user.authProvider;
  const file = isRecord(provider) && isRecord(provider['config']) ? provider['config']['tokenFile'] : undefined;
  return typeof file === 'string' && file !== '' ? file : undefined;
}

/** client-node applies the KubeConfig; a file it cannot read is named, by the kubeconfig field that names it. */
async function clientNode(kc: KubeConfig, options: https.RequestOptions, cluster: Cluster | null, user: User | null): Promise<void> {
  try {
    await kc.applyToHTTPSOptions(options);
  } catch (error) {
    const { path, code } = (error ?? {}) as NodeJS.ErrnoException;
    const field =
      path === undefined
        ? undefined
        : path === cluster?.caFile
          ? 'certificate-authority'
          : path === user?.certFile
            ? 'client-certificate'
            : path === user?.keyFile
              ? 'client-key'
              : undefined;
    if (field === undefined) throw error;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (code ?? describeThrown(error));
    throw new InformerError('Config', `cannot read the ${field} file ${path}: ${why}`, { phase: 'config', cause: error });
  }
}

interface View {
  readonly user: User;
  readonly cluster: Cluster;
  readonly kc: KubeConfig;
}
const views = new WeakMap<KubeConfig, View>();

/**
 * The KubeConfig as client-node should apply it for `user`: the same cluster and the same user object
 * (read live: a token changed later is seen), only without its exec plugin or token file, which are ours.
 * Kept per KubeConfig while its current user and cluster stay the same (client-node's proxy agent is cached in it).
 */
function viewOf(kc: KubeConfig, user: User, cluster: Cluster): KubeConfig {
  const cached = views.get(kc);
  if (cached?.user === user && cached.cluster === cluster) return cached.kc;
  const hidden = new Proxy(user, {
    get(target, property, receiver) {
      if (property === 'exec') return undefined;
      if (property === 'authProvider') {
        const provider: unknown = Reflect.get(target, property, receiver);
        const config = isRecord(provider) ? provider['config'] : undefined;
        const ours =
          isRecord(provider) && (provider['name'] === 'exec' || (isRecord(config) && ('exec' in config || 'tokenFile' in config)));
        return ours ? undefined : provider;
      }
      return Reflect.get(target, property, receiver) as unknown;
    },
  });
  const view = new KubeConfig();
  view.loadFromClusterAndUser(cluster, hidden);
  views.set(kc, { user, cluster, kc: view });
  return view;
}
