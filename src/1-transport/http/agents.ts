import { createHash } from 'node:crypto';
import * as http from 'node:http';
import * as https from 'node:https';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { Cluster, KubeConfig } from '@kubernetes/client-node';
import type { Http2Options } from '../http2/health.ts';
import { negotiatedProtocol, streamCapacity } from '../http2/pool.ts';
import type { Http2Route, HttpProtocol } from '../http2/request.ts';
import type { RequestSettings } from './options.ts';

// Agents. client-node caches one agent per cluster and user with the TLS
// material it first read, so a certificate or CA file rotated on disk would
// never be used. The material is looked at again for every request
// (./tlsFiles.ts); one keep-alive agent per digest of it keeps connections
// reused while it does not change.

/** The TLS fields client-node's applyToHTTPSOptions copies into its agents. */
const TLS_OPTION_KEYS = [
  'ca',
  'cert',
  'key',
  'pfx',
  'passphrase',
  'rejectUnauthorized',
  'servername',
  'ciphers',
  'honorCipherOrder',
  'ecdhCurve',
  'crl',
  'dhparam',
  'secureOptions',
  'secureProtocol',
  'sessionIdContext',
] as const satisfies readonly (keyof https.AgentOptions)[];

interface AgentSlot {
  readonly digest: string;
  readonly agent: http.Agent;
}

/** Per KubeConfig, per cluster and user: the agent for the TLS material seen last. */
const agentSlots = new WeakMap<KubeConfig, Map<string, AgentSlot>>();

function tlsDigest(protocol: string, options: https.RequestOptions): { digest: string; agentOptions: https.AgentOptions } {
  const hash = createHash('sha256').update(protocol);
  const agentOptions: Record<string, unknown> = {};
  for (const key of TLS_OPTION_KEYS) {
    const value: unknown = options[key];
    if (value === undefined) continue;
    agentOptions[key] = value;
    const bytes = Buffer.isBuffer(value) ? value : Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));
    hash.update(`\0${key}\0${bytes.length}\0`).update(bytes);
  }
  return { digest: hash.digest('hex'), agentOptions: agentOptions as https.AgentOptions };
}

/**
 * The keep-alive agent for this request's TLS material. When the material
 * changed, the previous agent is retired: its idle connections close now, the
 * ones in use (an open watch) when their request ends.
 */
function agentFor(
  kc: KubeConfig,
  cluster: Cluster,
  url: URL,
  options: https.RequestOptions,
  idleMs: number | undefined,
): http.Agent | undefined {
  // Proxy agents come from client-node, made for this request's TLS material (a view per digest: ./credentials.ts).
  if (cluster.proxyUrl) return options.agent instanceof http.Agent ? options.agent : undefined;
  const { digest, agentOptions } = tlsDigest(url.protocol, options);
  let slots = agentSlots.get(kc);
  if (!slots) agentSlots.set(kc, (slots = new Map()));
  const slotKey = slotKeyOf(kc, cluster);
  const slot = slots.get(slotKey);
  if (slot?.digest === digest) return slot.agent;
  if (slot) retire(slot.agent);
  const agent = url.protocol === 'http:' ? new http.Agent({ keepAlive: true }) : new https.Agent({ ...agentOptions, keepAlive: true });
  if (idleMs !== undefined) closeWhenIdle(agent, idleMs);
  slots.set(slotKey, { digest, agent });
  return agent;
}

function slotKeyOf(kc: KubeConfig, cluster: Cluster): string {
  return JSON.stringify([cluster.name, kc.getCurrentUser()?.name ?? '', cluster.server]);
}

/** Makes `agent` use `socket` (a TLS connection whose server chose HTTP/1.1 by ALPN) for its next new connection. */
function adopt(agent: http.Agent, socket: TLSSocket): void {
  const own = agent as unknown as { createConnection: (...args: unknown[]) => unknown };
  const create = own.createConnection;
  own.createConnection = (...args: unknown[]) => {
    own.createConnection = create;
    return socket.destroyed ? create.apply(agent, args) : socket;
  };
  // The agent asks synchronously when it needs a connection; one it did not need is closed, not leaked.
  setImmediate(() => {
    if (own.createConnection === create) return;
    own.createConnection = create;
    socket.destroy();
  });
}

/**
 * How a request to `url` with these applied options may go over HTTP/2 (see ./http2/request.ts):
 * the same connection key and TLS digest as the agents.
 */
export function http2Route(
  kc: KubeConfig,
  cluster: Cluster,
  url: URL,
  options: https.RequestOptions,
  settings: Pick<RequestSettings, 'protocol' | 'http2' | 'tlsHandshakeTimeoutMs'>,
): Http2Route {
  const { digest, agentOptions } = tlsDigest(url.protocol, options);
  return {
    ...{ owner: kc, slotKey: slotKeyOf(kc, cluster), digest, tlsOptions: agentOptions },
    ...{
      proxied: !!cluster.proxyUrl,
      protocol: settings.protocol,
      options: settings.http2,
      handshakeTimeoutMs: settings.tlsHandshakeTimeoutMs,
    },
  };
}

/**
 * How requests made with `kc` (and this `protocol` option) reach its current server, as far as is known now:
 * `h2` (streams of shared connections), `http1` (a connection per request in flight: a watch holds one for its
 * life), or undefined while nothing was asked yet (over TLS, the server's ALPN answer decides).
 */
export function knownProtocol(kc: KubeConfig, protocol: HttpProtocol = 'auto'): 'h2' | 'http1' | undefined {
  const cluster = kc.getCurrentCluster();
  if (!cluster) return undefined;
  if (protocol === 'h2') return 'h2';
  if (protocol === 'http1' || cluster.proxyUrl) return 'http1';
  if (!/^https:/i.test(cluster.server)) return 'http1';
  return negotiatedProtocol(kc, slotKeyOf(kc, cluster));
}

/**
 * How many HTTP/2 streams requests made with `kc` may hold at once on its current server: `http2.maxConnections` ×
 * the server's `SETTINGS_MAX_CONCURRENT_STREAMS` (100 until it says; see ../http2/pool.ts). 0 without a cluster.
 */
export function http2StreamCapacity(kc: KubeConfig, options: Http2Options = {}): number {
  const cluster = kc.getCurrentCluster();
  return cluster ? streamCapacity(kc, slotKeyOf(kc, cluster), options) : 0;
}

/**
 * Puts this request's keep-alive agent on `options` (HTTP/1.1), handing it the socket ALPN left, if any. A new
 * agent closes a pooled connection idle for `idleMs` (undefined: never).
 */
export function useAgent(
  kc: KubeConfig,
  cluster: Cluster,
  url: URL,
  options: https.RequestOptions,
  idleMs: number | undefined,
  socket?: TLSSocket,
): void {
  options.agent = agentFor(kc, cluster, url, options, idleMs);
  if (socket && options.agent) adopt(options.agent, socket);
}

function retire(agent: http.Agent): void {
  agent.maxFreeSockets = 0; // a socket freed from now on is closed, not pooled
  for (const sockets of Object.values(agent.freeSockets)) for (const socket of sockets ?? []) socket.destroy();
}

/**
 * Closes each pooled socket of `agent` that stays unused for `idleMs` (client-go's `IdleConnTimeout`), so a KubeConfig
 * made per call holds its connections that long after its last request, not for good. Node's agent pools a freed
 * socket (unref'd) until the server closes it; its `timeout` option would put the same bound on sockets in use (a
 * quiet watch) and runs on timers no test can move. The timer is an unref'd Node timer, started when the socket is
 * pooled, restarted when it is pooled again, cleared when it closes; a socket taken for a request meanwhile is kept.
 */
function closeWhenIdle(agent: http.Agent, idleMs: number): void {
  const timers = new WeakMap<Socket, ReturnType<typeof setTimeout> | undefined>();
  const pooled = (socket: Socket) => Object.values(agent.freeSockets).some((sockets) => sockets?.includes(socket));
  // Node's own 'free' listener (added by the constructor, so it runs first) has pooled the socket or destroyed it.
  agent.on('free', (socket: Socket) => {
    if (!timers.has(socket)) socket.once('close', () => clearTimeout(timers.get(socket)));
    clearTimeout(timers.get(socket));
    timers.set(socket, undefined);
    if (socket.destroyed || !pooled(socket)) return;
    const timer = setTimeout(() => {
      if (pooled(socket)) socket.destroy();
    }, idleMs);
    timer.unref();
    timers.set(socket, timer);
  });
}
