import type { Cluster } from '@kubernetes/client-node';
import { InformerError, type ErrorPhase } from '../../0-model/errors.ts';
import { Http2Error } from '../http2/response.ts';
import type { ConnectStage } from '../http2/connection.ts';
import { TLS_HANDSHAKE_TIMEOUT } from '../tlsHandshake.ts';

// One HTTP request's life as data, in the reflector's shape (src/2-source/step.ts): a state, an input, one pure step
// giving the next state and the effects, in order. It holds the request's decisions: which stage it waits for, what
// its timer firing means in that stage, which error (and reason) an event becomes, what tearing it down does, and that
// an event after its end is ignored. The shell, request.ts's `send`, performs the effects: credentials, sockets,
// HTTP/2, the timer. Each rule is a row of spec/1-transport/requestStep.spec.ts.

/** What a request waits for before its response headers, named in its `Timeout`. */
export type AwaitingStage = 'credentials' | 'connection' | 'TLS handshake' | 'response headers';

/** What a request's errors name, fixed when it is subscribed. */
export interface RequestFacts {
  readonly phase: ErrorPhase;
  /** Its method when given one, else its phase (`list`). */
  readonly verb: string;
  /** The verb and the path asked, without its query (`list /api/v1/pods`): the timer's and the decoder's words. */
  readonly what: string;
  /** The timer before the response headers (`requestTimeoutMs`); none when undefined. */
  readonly timeoutMs: number | undefined;
}

/** Where the request goes, known once its credentials are applied: its errors name the URL's path (server prefix included). */
export interface RequestTarget {
  readonly pathname: string;
  /** The cluster's CA, as the kubeconfig gives it: a TLS verification failure says which CA did not vouch. */
  readonly ca: Pick<Cluster, 'caData' | 'caFile'>;
}

/** What one request remembers between its events. */
export interface RequestState {
  readonly awaiting: AwaitingStage;
  readonly target: RequestTarget | undefined;
  /** Its response headers were emitted: a socket failure after them is not `unreachable`, the timer is over. */
  readonly responded: boolean;
  /** It failed or was torn down: every later event is ignored (a 401's credential aside). */
  readonly ended: boolean;
  /** The exec plugin or token file its credentials come from (`exec plugin aws`), named when it times out waiting for them. */
  readonly credentialsFrom?: string;
  /** When they come from an exec plugin: its command, put on the `Timeout` as data (`InformerError.execPlugin`). */
  readonly execPlugin?: string;
}

export const initialRequest: RequestState = { awaiting: 'credentials', target: undefined, responded: false, ended: false };

/** What the shell tells the step. */
export type RequestInput =
  /** The credentials come from `source` (an exec plugin, a token file), which may take a while. */
  | { readonly type: 'credentialsFrom'; readonly source: string; readonly execPlugin?: string }
  /** The credentials are applied (an exec plugin run, a token read): the request may connect to `target`. */
  | { readonly type: 'credentials'; readonly target: RequestTarget }
  /** HTTP/2 is not used (not asked, not offered by ALPN): the request may go over HTTP/1.1. */
  | { readonly type: 'http1' }
  /** The HTTP/2 connection reached `stage`. */
  | { readonly type: 'stage'; readonly stage: ConnectStage }
  /** An HTTP/1.1 request got its socket, still `connecting` or not (reused from the pool, or already connected). */
  | { readonly type: 'socket'; readonly connecting: boolean }
  /** The HTTP/1.1 socket connected; a `secure` one starts its TLS handshake. */
  | { readonly type: 'connected'; readonly secure: boolean }
  /** The HTTP/1.1 socket's TLS handshake is done. */
  | { readonly type: 'secured' }
  /** The request's timer fired (`timeoutMs` after the subscription). */
  | { readonly type: 'timer' }
  /** The response headers arrived: their status, or the error decoding them (an unknown Content-Encoding). */
  | { readonly type: 'response'; readonly status: number | undefined; readonly failure: InformerError | undefined }
  /** The request or its socket failed (before or after the headers). */
  | { readonly type: 'error'; readonly error: NodeJS.ErrnoException }
  /** The request could not start: no cluster, a credential that failed, a server URL that is none. */
  | { readonly type: 'thrown'; readonly error: unknown }
  /** The subscription ended (unsubscribed, or after the request's error): `complete` when its response was read whole. */
  | { readonly type: 'teardown'; readonly complete: boolean };

/** What the step asks the shell to do, in order. */
export type RequestEffect =
  /** Go on with the stage the input ended (connect after the credentials, send over HTTP/1.1, watch the socket connect). */
  | { readonly type: 'proceed' }
  | { readonly type: 'clearTimer' }
  /** Report `error` to the subscriber: the request's end. */
  | { readonly type: 'fail'; readonly error: InformerError }
  /** Mark the credential that was sent rejected: the next request runs the exec plugin (or reads the token file) again. */
  | { readonly type: 'rejectCredential' }
  /** Emit the response. */
  | { readonly type: 'emit' }
  /** Abort the signal (credentials, an exec plugin, an HTTP/2 connection awaited) and destroy the request, if sent. */
  | { readonly type: 'abort' };

export interface RequestStep {
  readonly state: RequestState;
  readonly effects: readonly RequestEffect[];
}

const NONE: readonly never[] = [];
const PROCEED: readonly RequestEffect[] = [{ type: 'proceed' }];
const CLEAR: RequestEffect = { type: 'clearTimer' };

/**
 * The request's one transition: pure (no I/O, no timer), so that its rules read in one place and are tested by table
 * rows, without sockets.
 */
export function requestStep(facts: RequestFacts, state: RequestState, input: RequestInput): RequestStep {
  switch (input.type) {
    case 'credentialsFrom':
      if (state.ended) return { state, effects: NONE };
      return { state: { ...state, credentialsFrom: input.source, execPlugin: input.execPlugin }, effects: NONE };
    case 'credentials':
      if (state.ended) return { state, effects: NONE };
      return { state: { ...state, awaiting: 'connection', target: input.target }, effects: PROCEED };
    case 'http1':
      return { state, effects: state.ended ? NONE : PROCEED };
    case 'stage':
      return at(state, input.stage);
    case 'socket':
      // A socket from the pool (or one already connected) waits for nothing but the headers.
      return input.connecting ? { state, effects: PROCEED } : at(state, 'response headers');
    case 'connected':
      return at(state, input.secure ? 'TLS handshake' : 'response headers');
    case 'secured':
      return at(state, 'response headers');
    case 'timer': {
      if (state.ended || state.responded) return { state, effects: NONE };
      const { awaiting } = state;
      const from = awaiting === 'credentials' && state.credentialsFrom !== undefined ? ` from ${state.credentialsFrom}` : '';
      const message = `${facts.what}: no response headers within ${facts.timeoutMs} ms (waiting for: ${awaiting}${from})`;
      // No server answered while it connects or shakes hands; one that is slow to answer is there.
      const unreachable = awaiting === 'connection' || awaiting === 'TLS handshake';
      // Still waiting for a plugin's credential (a login in a browser): which one, as data, so the CLI can wait on.
      const execPlugin = awaiting === 'credentials' ? state.execPlugin : undefined;
      return fail(state, new InformerError('Timeout', message, { phase: facts.phase, unreachable, execPlugin }), [CLEAR]);
    }
    case 'response': {
      if (input.failure) return state.ended ? { state, effects: [CLEAR] } : fail(state, input.failure, [CLEAR]);
      // A 401 marks the credential even after the end (the server said so), and before the 401 is reported: the
      // reflector's retry then runs the exec plugin (or reads the token file) again.
      const reject: readonly RequestEffect[] = input.status === 401 ? [CLEAR, { type: 'rejectCredential' }] : [CLEAR];
      if (state.ended) return { state, effects: reject };
      return { state: { ...state, responded: true }, effects: [...reject, { type: 'emit' }] };
    }
    case 'error':
      if (state.ended) return { state, effects: NONE };
      return fail(state, requestError(facts, state.target, state.responded, input.error), [CLEAR]);
    case 'thrown':
      if (state.ended) return { state, effects: NONE };
      return fail(state, thrownError(input.error), [CLEAR]);
    case 'teardown':
      // A response read whole leaves its connection to the pool; anything else is aborted, in any stage.
      return { state: { ...state, ended: true }, effects: input.complete ? [CLEAR] : [CLEAR, { type: 'abort' }] };
  }
}

/** The request now waits for `stage` (an event after its end changes nothing that shows). */
function at(state: RequestState, stage: AwaitingStage): RequestStep {
  return { state: state.awaiting === stage ? state : { ...state, awaiting: stage }, effects: NONE };
}

function fail(state: RequestState, error: InformerError, before: readonly RequestEffect[]): RequestStep {
  return { state: { ...state, ended: true }, effects: [...before, { type: 'fail', error }] };
}

/**
 * The error a failed request (or socket) reports: an HTTP/2 failure in its words (./http2/response.ts), a broken protocol
 * or a GOAWAY with an error code its own reason; a TLS handshake past its bound a `Timeout` from no server, as a
 * stalled connect is; a TLS verification failure in words that point at the kubeconfig; any other a `NetworkError`,
 * `unreachable` only before a response and only for the codes that say no server answered. Without a target (never:
 * sockets open after it), the path asked.
 */
export function requestError(
  facts: RequestFacts,
  target: RequestTarget | undefined,
  responded: boolean,
  error: NodeJS.ErrnoException,
): InformerError {
  const { verb, phase } = facts;
  const pathname = target?.pathname ?? facts.what.slice(verb.length + 1);
  if (error instanceof Http2Error)
    return new InformerError(error.protocol ? 'ProtocolError' : 'NetworkError', `${verb} ${pathname}: ${error.message}`, {
      phase,
      cause: error,
    });
  if (error.code === TLS_HANDSHAKE_TIMEOUT)
    return new InformerError('Timeout', `${verb} ${pathname}: ${error.message} (tlsHandshakeTimeoutMs)`, {
      phase,
      cause: error,
      unreachable: true,
    });
  const detail = tlsFailure(error, target?.ca ?? {}) ?? networkDetail(error);
  const unreachable = !responded && isUnreachableCode(error.code);
  return new InformerError('NetworkError', `${verb} ${pathname}: ${detail}`, { phase, cause: error, unreachable });
}

/** What a request that could not start reports: its own `InformerError`, or anything else as a `Config` one. */
export function thrownError(error: unknown): InformerError {
  if (error instanceof InformerError) return error;
  return new InformerError('Config', `cannot apply the KubeConfig: ${error instanceof Error ? error.message : String(error)}`, {
    phase: 'config',
    cause: error,
  });
}

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
