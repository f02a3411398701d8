import type { KubeConfig } from '@kubernetes/client-node';
import { InformerError } from '../index.ts';
import { messageOf } from './format.ts';
import { BYTE_LIMIT_FLAGS, type ByteLimitOption } from './args.ts';
import { slowPlugin } from './pluginWait.ts';

/**
 * Failures in words: what a connection, TLS, discovery or informer error means to the user, in one line
 * that names the server as messages may show it.
 */

/**
 * Says what a connection or discovery failure means in words (one line, no control characters), and how long the server
 * asked us to wait. `credential`: where the user's credential comes from ({@link credentialSource}), named on a 401.
 */
export function explain(error: unknown, server: string, secret = false, credential?: string): string {
  const sentence = explainReason(error, displayServer(server), secret, credential);
  const wait = error instanceof InformerError ? error.retryAfterSeconds : undefined;
  // The informer waits at least this long before its next attempt: a 5-minute silence should not look like a hang.
  return wait !== undefined && wait > 0 ? `${sentence} (the server asked to wait ${Math.ceil(wait)} s before retrying)` : sentence;
}

/**
 * A fault an informer met and goes on from, as `watch` and `replay` print it on stderr: `! LABEL: what it means`
 * (`secret`: parser messages that may quote Secret data are withheld).
 */
export function problemLine(label: string, error: unknown, server: string, secret = false, credential?: string): string {
  return `! ${label}: ${explain(error, server, secret, credential)}`;
}

/**
 * Where the current user's credential comes from when it is not the kubeconfig's own: `the exec plugin aws` (run again
 * after a 401), `the token file /var/run/…` (read again after a 401); undefined for a token or certificate in it.
 */
export function credentialSource(kc: KubeConfig): string | undefined {
  const user = kc.getCurrentUser();
  if (!user) return undefined;
  const config: unknown = user.authProvider?.config;
  const fromProvider = (key: string) =>
    typeof config === 'object' && config !== null ? (config as Record<string, unknown>)[key] : undefined;
  const tokenFile = fromProvider('tokenFile');
  if (typeof tokenFile === 'string' && tokenFile !== '') return `the token file ${tokenFile}`;
  const exec: unknown = user.exec ?? fromProvider('exec');
  const command = typeof exec === 'object' && exec !== null ? (exec as Record<string, unknown>)['command'] : undefined;
  return typeof command === 'string' && command !== '' ? `the exec plugin ${command}` : undefined;
}

function explainReason(error: unknown, server: string, secret: boolean, credential: string | undefined): string {
  if (error instanceof InformerError) {
    // A parser's message may quote the text it choked on: for Secrets, that is Secret data.
    if (secret && (error.reason === 'MalformedLine' || error.reason === 'ValidationFailed'))
      return `${error.reason} (details withheld: they may quote Secret data)`;
    switch (error.reason) {
      case 'NetworkError':
        return networkFailure(messageOf(error), server, error.unreachable);
      case 'Timeout': {
        // Waiting for an exec plugin's credential, the server was never asked: the plugin is named, not the network.
        const plugin = slowPlugin(error);
        if (plugin !== undefined) return `the ${plugin} gave no credential in time (the API server was not asked yet): ${messageOf(error)}`;
        // The transport's own timer on a request (no headers, no bytes), not a server's 504 or a quiet watch resumed.
        if (error.status === undefined && /: no (response headers|bytes) (within|for) \d+ ms/.test(error.message))
          return `the API server at ${server} did not answer in time: ${messageOf(error)} (check the server URL and the network to it)`;
        return withReason(error.reason, messageOf(error));
      }
      case 'ProtocolError':
        // A frame Node itself would not send (http2/request.ts's unsentFrame): the server never saw the request.
        if (codeOf(error.cause) === 'ERR_HTTP2_FRAME_ERROR') return `HTTP/2 request not sent, by our side: ${messageOf(error)}`;
        return `HTTP/2 failure from the API server at ${server} (or a proxy before it), not a network fault: ${messageOf(error)}`;
      case 'Unauthorized':
        return `the API server at ${server} rejected our credentials (401 Unauthorized): check ${credential ?? 'the token or certificate in the kubeconfig'}`;
      case 'Forbidden':
        return `forbidden (403): ${messageOf(error)}`;
      case 'NotFound':
        return `not found (404): ${messageOf(error)}`;
      case 'BadRequest':
        return `the server rejected the request (400 Bad Request): ${messageOf(error)}`;
      case 'Config':
        // client-node's words for an http:// server: say what to change.
        if (/HTTP protocol is not allowed when skipTLSVerify/.test(error.message)) {
          const fix = 'which the Kubernetes client refuses unless the cluster sets insecure-skip-tls-verify: true';
          return `bad kubeconfig: the server ${server} is plain http://, ${fix}`;
        }
        return `bad kubeconfig: ${messageOf(error)}`;
      case 'CredentialPlugin':
        return `cannot get credentials for ${server}: ${messageOf(error)}`;
      case 'ResponseTooLarge':
      case 'ListTooLong':
      case 'MalformedLine':
        return `${withReason(error.reason, messageOf(error))}${raiseWith(error.message)}`;
      default:
        return withReason(error.reason, messageOf(error));
    }
  }
  return messageOf(error);
}

/** `Reason: message`, once: a message that already starts with its reason (a server's `Timeout: …` Status) is not prefixed again. */
function withReason(reason: string, message: string): string {
  return message.startsWith(`${reason}: `) ? message : `${reason}: ${message}`;
}

const FLAG_OF = Object.fromEntries(Object.entries(BYTE_LIMIT_FLAGS).map(([flag, option]) => [option, flag])) as Record<
  ByteLimitOption,
  string
>;

/** The flag that raises the limit a message names (`… (option maxListBytes)` → ` (raise it with --max-list-bytes, e.g. 512Mi)`). */
function raiseWith(message: string): string {
  const option = /\boption (max\w+Bytes)\b/.exec(message)?.[1];
  const flag = option === undefined ? undefined : FLAG_OF[option as ByteLimitOption];
  const example = flag === 'max-list-total-bytes' ? '2Gi' : '512Mi';
  return flag === undefined ? '' : ` (raise the limit with --${flag} SIZE, e.g. --${flag} ${example})`;
}

/** A certificate the transport or Node refused: the server answered, we did not trust it. */
const CERTIFICATE =
  /is not trusted by|is not valid now|does not name the host|CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|certificate/i;
/** Any other failure of the TLS handshake (a protocol or cipher mismatch, a plain-HTTP server on an https:// URL). */
const TLS = /\bTLS\b|\bSSL\b|ERR_SSL_|EPROTO|handshake/i;

/** Refused, no route, no such host: words of a connection no server answered (for errors made without the `unreachable` mark). */
const NO_ANSWER = /\b(ECONNREFUSED|EHOSTUNREACH|EHOSTDOWN|ENETUNREACH|ENOTFOUND|EAI_AGAIN)\b/;

/**
 * A connection failure in words: a certificate or TLS problem is said to be one, not "cannot reach"; a connection
 * that broke after the server had answered (a watch dropped mid-stream) is "lost", not "cannot reach" either.
 */
function networkFailure(message: string, server: string, unreachable: boolean): string {
  // Not the server's fault: this process has no descriptor left for a connection.
  if (/\bE[MN]FILE\b|too many open files/i.test(message)) return `cannot open a connection to the API server at ${server}: ${message}`;
  if (CERTIFICATE.test(message)) return `cannot trust the API server at ${server} (TLS certificate): ${tlsAdvice(message)}`;
  if (TLS.test(message)) return `the TLS handshake with the API server at ${server} failed: ${message}`;
  if (unreachable || NO_ANSWER.test(message)) return `cannot reach the API server at ${server}: ${message}`;
  return `lost the connection to the API server at ${server}: ${message}`;
}

/** Node's hint for an unknown CA (`try running Node.js with --use-system-ca`) points the wrong way for a cluster: its CA is in the kubeconfig. */
function tlsAdvice(message: string): string {
  const hinted = /;? ?if the root CA is installed locally, try running Node\.js with --use-system-ca/;
  const certificate = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|certificate/i;
  // The transport already words its TLS verification failures (tlsFailure); only a raw Node message gets advice here.
  if (/is not trusted by|is not valid now|does not name the host/.test(message)) return message;
  if (!hinted.test(message) && !certificate.test(message)) return message;
  const advice =
    "the server's certificate is not signed by the certificate authority the kubeconfig names: " +
    'check certificate-authority or certificate-authority-data';
  return `${message.replace(hinted, '')} (${advice})`;
}

/** One group version discovery could not read (with --all, `following`: what is watched of it goes on, the dynamic factory keeps it). */
export function discoveryFailed(groupVersion: string, error: unknown, server: string, following = false): string {
  const after = following ? ' (what is watched of it goes on; resources it adds wait until discovery reads it)' : '';
  return `! discovery of ${groupVersion} failed: ${explain(error, server)}${after}`;
}

/**
 * The kubeconfig's server URL as messages show it: scheme, host, port and path;
 * never its userinfo (`https://user:password@…`), query or fragment.
 */
export function displayServer(server: string): string {
  if (server.startsWith('(')) return server;
  try {
    const url = new URL(server);
    return `${url.protocol}//${url.host}${url.pathname === '/' ? '' : url.pathname}`;
  } catch {
    return "(the kubeconfig's server, which is not a valid URL)";
  }
}

/** An error's Node `code` (`ERR_HTTP2_FRAME_ERROR`), if it has one. */
function codeOf(error: unknown): unknown {
  return error instanceof Error && 'code' in error ? error.code : undefined;
}
