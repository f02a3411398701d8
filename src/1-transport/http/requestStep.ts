import type { Cluster } from '@kubernetes/client-node';

// One request's decisions as data, beside its shell (request.ts): the stage it waits for, and its failures in words.

/** What a request waits for before its response headers, named in its `Timeout`. */
export type AwaitingStage = 'credentials' | 'connection' | 'TLS handshake' | 'response headers';

/**
 * Socket error codes that mean no server answered: the connection was refused, reset or never made (host or network
 * unreachable, DNS, a connect timeout). With no response yet, such a failure makes the error `unreachable`.
 */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EADDRNOTAVAIL',
]);

/** Whether a socket error's code says that no server answered (see {@link UNREACHABLE_CODES}). */
export function isUnreachableCode(code: string | undefined): boolean {
  return code !== undefined && UNREACHABLE_CODES.has(code);
}

/** OpenSSL's codes for a server certificate no trusted CA vouches for. */
const UNTRUSTED_CERTIFICATE = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
  'CERT_CHAIN_TOO_LONG',
  'INVALID_CA',
]);

/**
 * A socket error's code and message, the code said once: Node's message for a refused connection already
 * names it (`connect ECONNREFUSED 127.0.0.1:6443`), others do not (`ECONNRESET Client network socket disconnected …`).
 */
export function networkDetail(error: NodeJS.ErrnoException): string {
  const code = error.code ?? '';
  return code === '' || error.message.includes(code) ? error.message : `${code} ${error.message}`;
}

/**
 * A TLS verification failure in words that point at the kubeconfig, instead of Node's
 * (which suggests `--use-system-ca`, rarely the fix for a cluster's own CA); undefined
 * for any other error.
 */
export function tlsFailure(error: NodeJS.ErrnoException, cluster: Pick<Cluster, 'caData' | 'caFile'>): string | undefined {
  const code = error.code ?? '';
  if (UNTRUSTED_CERTIFICATE.has(code)) {
    const trust =
      cluster.caData || cluster.caFile
        ? "the cluster's certificate-authority (CA) in the kubeconfig"
        : 'the system CAs (the kubeconfig names no certificate-authority for this cluster)';
    return `the server's certificate is not trusted by ${trust}: ${code}`;
  }
  if (code === 'CERT_HAS_EXPIRED' || code === 'CERT_NOT_YET_VALID') return `the server's certificate is not valid now: ${code}`;
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID')
    return `the server's certificate does not name the host of the kubeconfig's server URL: ${code}`;
  return undefined;
}
