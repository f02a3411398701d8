import type * as https from 'node:https';
import { KubeConfig, type Cluster, type User } from '@kubernetes/client-node';
import { createHash } from 'node:crypto';
import { InformerError } from '../../0-model/errors.ts';
import { bearerTokenFault } from './bearerToken.ts';
import { isRecord } from '../../util/isRecord.ts';
import { execCredential, forgetCredential, type IssuedCredential } from './execAuth.ts';
import { execConfig, execOf } from './execCredential.ts';
import { forgetToken, tokenFromFile, type IssuedToken } from './tokenFile.ts';
import { tlsFile, type TlsFileField } from './tlsFiles.ts';

// Credentials for one request. client-node applies a view of the KubeConfig (a static token, Basic auth,
// impersonation, its auth providers, a proxy agent, the TLS settings); what it would do badly is ours: exec plugins
// (./execAuth.ts: bounded output and time, cached), token files (./tokenFile.ts: read again as client-go does) and the
// certificate-authority, client-certificate and client-key files (./tlsFiles.ts: client-node reads them with
// readFileSync at every request, and a FIFO or a hung mount froze the process). The view hides those and hands
// client-node their bytes as `…Data` instead, with an exec plugin's client certificate (so that a proxy agent gets it).

/** A credential a request was sent with, to name when the server answers 401 (see {@link credentialRejected}). */
export type Issued = { readonly exec: IssuedCredential } | { readonly file: IssuedToken };

/** The TLS material of one request, as bytes: read from the kubeconfig's files, or an exec plugin's certificate. */
interface Material {
  ca?: Buffer | undefined;
  cert?: Buffer | undefined;
  key?: Buffer | undefined;
}

/**
 * Applies the current context's credentials and TLS settings to `options`. It stops waiting for an exec plugin
 * when `signal` aborts (the plugin runs on, bounded by its own deadline, for the next request); `waitingFor` is told
 * which plugin or token file it waits for (named in a `Timeout`; a plugin's command also as data). Rejects with an InformerError:
 * `Config` for a kubeconfig that cannot be applied (naming the file it could not read), `CredentialPlugin`
 * for a plugin that failed. A context without a user still gets its cluster's TLS settings (kubectl goes on with
 * an empty user; client-node applied nothing then, not even the CA).
 */
export async function applyCredentials(
  kc: KubeConfig,
  options: https.RequestOptions,
  signal: AbortSignal,
  waitingFor: (source: string, execPlugin?: string) => void = () => undefined,
): Promise<Issued | undefined> {
  const user = kc.getCurrentUser();
  const cluster = kc.getCurrentCluster();
  if (!cluster) {
    await kc.applyToHTTPSOptions(options);
    return undefined;
  }
  const material = await readMaterial(kc, cluster, user);
  const exec = user ? execOf(user) : undefined;
  const tokenFile = user ? tokenFileOf(user) : undefined;
  let issued: Issued | undefined;
  // client-go: credentials in the kubeconfig itself (a token, Basic auth, a client certificate) win over the plugin.
  const ownWins = !!user && !!(user.token || user.username || user.password || user.certFile || user.certData);
  if (user && tokenFile === undefined && exec !== undefined && !ownWins) {
    const config = execConfig(exec, user.name);
    if (config instanceof InformerError) throw config;
    waitingFor(`exec plugin ${config.command}`, config.command);
    const ca = material.ca ?? (cluster.caData ? Buffer.from(cluster.caData, 'base64') : undefined);
    const got = await execCredential(kc, user.name, config, cluster, ca, signal);
    const { cert, key } = got.credential;
    if (cert && key) Object.assign(material, { cert: Buffer.from(cert), key: Buffer.from(key) });
    issued = { exec: got };
  }
  // client-node sends a kubeconfig's own token as it is: checked here (unless a token file replaces it).
  if (user?.token && tokenFile === undefined) checkStaticToken(user);
  await applyView(kc, options, cluster, user, material);
  const headers = (options.headers ??= {}) as Record<string, string>;
  if (issued && 'exec' in issued && issued.exec.credential.token) headers['Authorization'] = `Bearer ${issued.exec.credential.token}`;
  if (user && tokenFile !== undefined) {
    try {
      waitingFor(`the token file ${tokenFile}`);
      const read = await tokenFromFile(kc, tokenFile);
      headers['Authorization'] = `Bearer ${read.token}`;
      return { file: read };
    } catch (error) {
      // client-go: a static token beside the file is used while the file cannot be read.
      if (user.token) {
        checkStaticToken(user);
        return undefined;
      }
      throw error;
    }
  }
  return issued;
}

/** A kubeconfig's own token that may not be sent in a header (./bearerToken.ts) is a `Config` error, not a broken request. */
function checkStaticToken(user: User): void {
  const fault = user.token ? bearerTokenFault(user.token) : undefined;
  if (fault !== undefined) throw new InformerError('Config', `the token of user "${user.name}" ${fault}`, { phase: 'config' });
}

/** The cluster's CA file and the user's certificate and key files, read (./tlsFiles.ts); the first that fails is reported. */
async function readMaterial(kc: KubeConfig, cluster: Cluster, user: User | null): Promise<Material> {
  const read = (path: string | undefined, field: TlsFileField) =>
    path
      ? tlsFile(kc, path, field).then(
          (bytes) => ({ bytes }),
          (error: unknown) => ({ error }),
        )
      : undefined;
  const reads = [
    read(cluster.caFile, 'certificate-authority'),
    read(user?.certFile, 'client-certificate'),
    read(user?.keyFile, 'client-key'),
  ];
  const [ca, cert, key] = await Promise.all(reads);
  for (const r of [ca, cert, key]) if (r && 'error' in r) throw r.error;
  const bytes = (r: { bytes: Buffer } | { error: unknown } | undefined) => (r && 'bytes' in r ? r.bytes : undefined);
  return { ca: bytes(ca), cert: bytes(cert), key: bytes(key) };
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

interface View {
  readonly user: User | null;
  readonly cluster: Cluster;
  /** For a cluster with a proxy-url: the digest of the material its proxy agent (cached in the view) was made with. */
  readonly digest: string | undefined;
  readonly kc: KubeConfig;
  /** What the view hands client-node for the request being applied (set just before, read synchronously). */
  material: Material;
}
const views = new WeakMap<KubeConfig, View>();

/** client-node applies `kc` as {@link viewOf} shows it, with this request's material. */
async function applyView(
  kc: KubeConfig,
  options: https.RequestOptions,
  cluster: Cluster,
  user: User | null,
  material: Material,
): Promise<void> {
  const view = viewOf(kc, user, cluster, material);
  // client-node reads the material synchronously, before its first await: no other request can change it meanwhile.
  view.material = material;
  await view.kc.applyToHTTPSOptions(options);
}

/**
 * The KubeConfig as client-node should apply it: the same cluster and user objects (read live: a token changed later
 * is seen; no user: an empty one, so that the cluster's TLS settings still apply), without the exec plugin, token
 * file and TLS files, which are ours, and with the material's bytes as `caData`, `certData`, `keyData`. Kept per
 * KubeConfig while its current user and cluster stay the same (client-node caches its proxy agent in it), and for a
 * proxied cluster while the material does too: a proxy agent is made with the material it is given, so a rotated
 * file, or an exec plugin's certificate, gets a new one.
 */
function viewOf(kc: KubeConfig, user: User | null, cluster: Cluster, material: Material): View {
  const digest = cluster.proxyUrl ? digestOf(material) : undefined;
  const cached = views.get(kc);
  if (cached?.user === user && cached.cluster === cluster && cached.digest === digest) return cached;
  const data = (bytes: Buffer | undefined) => bytes?.toString('base64');
  const shown = new Proxy(user ?? { name: '' }, {
    get(target, property, receiver) {
      if (property === 'exec' || property === 'certFile' || property === 'keyFile') return undefined;
      if (property === 'certData') return data(view.material.cert) ?? (Reflect.get(target, property, receiver) as unknown);
      if (property === 'keyData') return data(view.material.key) ?? (Reflect.get(target, property, receiver) as unknown);
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
  const shownCluster = new Proxy(cluster, {
    get(target, property, receiver) {
      if (property === 'caFile') return undefined;
      if (property === 'caData') return data(view.material.ca) ?? (Reflect.get(target, property, receiver) as unknown);
      return Reflect.get(target, property, receiver) as unknown;
    },
  });
  const viewKc = new KubeConfig();
  viewKc.loadFromClusterAndUser(shownCluster, shown);
  const view: View = { user, cluster, digest, kc: viewKc, material };
  views.set(kc, view);
  return view;
}

function digestOf(material: Material): string {
  const hash = createHash('sha256');
  for (const bytes of [material.ca, material.cert, material.key]) hash.update(`\0${bytes?.length ?? -1}\0`).update(bytes ?? '');
  return hash.digest('hex');
}
