/**
 * One request's pure step (src/1-transport/http/requestStep.ts), row by row: a state (the stage awaited, whether the
 * response was emitted, whether the request ended), an input, the effects in order and the next state; then the
 * errors a failure becomes. The shell (`send` in request.ts) is tested over HTTP by timeouts.spec.ts, http2.spec.ts,
 * networkErrors.spec.ts, tlsErrors.spec.ts and the hostile specs.
 */
import { describe, expect, it } from 'vitest';
import { InformerError } from '../../src/0-model/errors.ts';
import { Http2Error } from '../../src/1-transport/http2/response.ts';
import {
  initialRequest,
  requestError,
  requestStep,
  thrownError,
  type AwaitingStage,
  type RequestEffect,
  type RequestFacts,
  type RequestInput,
  type RequestState,
  type RequestTarget,
} from '../../src/1-transport/http/requestStep.ts';

const facts: RequestFacts = { phase: 'list', verb: 'list', what: 'list /api/v1/pods', timeoutMs: 5000 };
const target: RequestTarget = { pathname: '/prefix/api/v1/pods', ca: { caData: 'x' } };

/** A state as a row writes it: the stage awaited, then `+target`, `+responded`, `+ended` when so. */
function show(state: RequestState): string {
  return [state.awaiting, state.target ? '+target' : '', state.responded ? '+responded' : '', state.ended ? '+ended' : ''].join('');
}
function shown(error: InformerError): string {
  const plugin = error.execPlugin === undefined ? '' : ` execPlugin=${error.execPlugin}`;
  return `${error.reason}${error.unreachable ? ' unreachable' : ''}${plugin}: ${error.message}`;
}
const effect = (e: RequestEffect) => (e.type === 'fail' ? `fail ${shown(e.error)}` : e.type);

const state = (awaiting: AwaitingStage, more: Partial<RequestState> = {}): RequestState => ({
  awaiting,
  target: awaiting === 'credentials' ? undefined : target,
  responded: false,
  ended: false,
  ...more,
});
const ended = (awaiting: AwaitingStage) => state(awaiting, { ended: true });
const responded = state('response headers', { responded: true });
const errno = (code: string, message: string): NodeJS.ErrnoException => Object.assign(new Error(message), { code });
const refused = errno('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:6443');
const malformed = new InformerError(
  'MalformedLine',
  'list /api/v1/pods: the response came in Content-Encoding "br", not asked for; aborted',
);

interface Row {
  readonly rule: string;
  readonly from: RequestState;
  readonly input: RequestInput;
  readonly effects: readonly string[];
  readonly then: string;
}

const ROWS: readonly Row[] = [
  {
    rule: 'credentials applied: the request connects to its target',
    from: initialRequest,
    input: { type: 'credentials', target },
    effects: ['proceed'],
    then: 'connection+target',
  },
  {
    rule: 'credentials applied after the end: the request goes no further',
    from: ended('credentials'),
    input: { type: 'credentials', target },
    effects: [],
    then: 'credentials+ended',
  },
  {
    rule: 'HTTP/2 not used: the request goes over HTTP/1.1',
    from: state('connection'),
    input: { type: 'http1' },
    effects: ['proceed'],
    then: 'connection+target',
  },
  {
    rule: 'HTTP/2 not used, after the end (an HTTP/2 connection awaited, then unsubscribed): nothing is sent',
    from: ended('connection'),
    input: { type: 'http1' },
    effects: [],
    then: 'connection+target+ended',
  },
  {
    rule: 'the HTTP/2 connection names its stage',
    from: state('connection'),
    input: { type: 'stage', stage: 'TLS handshake' },
    effects: [],
    then: 'TLS handshake+target',
  },
  {
    rule: 'a socket from the pool (or already connected) waits for the response headers only',
    from: state('connection'),
    input: { type: 'socket', connecting: false },
    effects: [],
    then: 'response headers+target',
  },
  {
    rule: 'a socket still connecting: its connect is watched, the request still waits for the connection',
    from: state('connection'),
    input: { type: 'socket', connecting: true },
    effects: ['proceed'],
    then: 'connection+target',
  },
  {
    rule: 'a TLS socket connected: the request waits for the handshake',
    from: state('connection'),
    input: { type: 'connected', secure: true },
    effects: [],
    then: 'TLS handshake+target',
  },
  {
    rule: 'a plain socket connected: the request waits for the response headers',
    from: state('connection'),
    input: { type: 'connected', secure: false },
    effects: [],
    then: 'response headers+target',
  },
  {
    rule: 'the handshake done: the request waits for the response headers',
    from: state('TLS handshake'),
    input: { type: 'secured' },
    effects: [],
    then: 'response headers+target',
  },
  {
    rule: 'the timer while the credentials are applied: a Timeout, the server not yet asked (not unreachable)',
    from: initialRequest,
    input: { type: 'timer' },
    effects: ['clearTimer', 'fail Timeout: list /api/v1/pods: no response headers within 5000 ms (waiting for: credentials)'],
    then: 'credentials+ended',
  },
  {
    rule: 'the credentials come from an exec plugin (or a token file): remembered, nothing done',
    from: initialRequest,
    input: { type: 'credentialsFrom', source: 'exec plugin aws', execPlugin: 'aws' },
    effects: [],
    then: 'credentials',
  },
  {
    rule: 'the timer while an exec plugin runs: the Timeout names the plugin, and carries it as data (execPlugin)',
    from: state('credentials', { credentialsFrom: 'exec plugin aws', execPlugin: 'aws' }),
    input: { type: 'timer' },
    effects: [
      'clearTimer',
      'fail Timeout execPlugin=aws: list /api/v1/pods: no response headers within 5000 ms (waiting for: credentials from exec plugin aws)',
    ],
    then: 'credentials+ended',
  },
  {
    rule: 'the timer while a token file is read: named in the message, no execPlugin',
    from: state('credentials', { credentialsFrom: 'the token file /t' }),
    input: { type: 'timer' },
    effects: [
      'clearTimer',
      'fail Timeout: list /api/v1/pods: no response headers within 5000 ms (waiting for: credentials from the token file /t)',
    ],
    then: 'credentials+ended',
  },
  {
    rule: "the timer after the plugin's credential came (waiting for the server): no execPlugin, the server was asked",
    from: state('response headers', { credentialsFrom: 'exec plugin aws', execPlugin: 'aws' }),
    input: { type: 'timer' },
    effects: ['clearTimer', 'fail Timeout: list /api/v1/pods: no response headers within 5000 ms (waiting for: response headers)'],
    then: 'response headers+target+ended',
  },
  {
    rule: 'the timer while connecting: a Timeout from no server (unreachable)',
    from: state('connection'),
    input: { type: 'timer' },
    effects: ['clearTimer', 'fail Timeout unreachable: list /api/v1/pods: no response headers within 5000 ms (waiting for: connection)'],
    then: 'connection+target+ended',
  },
  {
    rule: 'the timer during the TLS handshake: a Timeout from no server (unreachable)',
    from: state('TLS handshake'),
    input: { type: 'timer' },
    effects: ['clearTimer', 'fail Timeout unreachable: list /api/v1/pods: no response headers within 5000 ms (waiting for: TLS handshake)'],
    then: 'TLS handshake+target+ended',
  },
  {
    rule: 'the timer while the headers are awaited: a Timeout from a server that is there (not unreachable)',
    from: state('response headers'),
    input: { type: 'timer' },
    effects: ['clearTimer', 'fail Timeout: list /api/v1/pods: no response headers within 5000 ms (waiting for: response headers)'],
    then: 'response headers+target+ended',
  },
  {
    rule: 'the timer after the response: nothing',
    from: responded,
    input: { type: 'timer' },
    effects: [],
    then: 'response headers+target+responded',
  },
  {
    rule: 'the timer after the end: nothing',
    from: ended('connection'),
    input: { type: 'timer' },
    effects: [],
    then: 'connection+target+ended',
  },
  {
    rule: 'the response headers: the timer stops, the response is emitted',
    from: state('response headers'),
    input: { type: 'response', status: 200, failure: undefined },
    effects: ['clearTimer', 'emit'],
    then: 'response headers+target+responded',
  },
  {
    rule: 'a 401: the credential is marked rejected before the response is emitted',
    from: state('response headers'),
    input: { type: 'response', status: 401, failure: undefined },
    effects: ['clearTimer', 'rejectCredential', 'emit'],
    then: 'response headers+target+responded',
  },
  {
    rule: 'response headers that do not decode: the request fails with the decoder error',
    from: state('response headers'),
    input: { type: 'response', status: undefined, failure: malformed },
    effects: ['clearTimer', `fail ${shown(malformed)}`],
    then: 'response headers+target+ended',
  },
  {
    rule: 'a response after the end: not emitted',
    from: ended('response headers'),
    input: { type: 'response', status: 200, failure: undefined },
    effects: ['clearTimer'],
    then: 'response headers+target+ended',
  },
  {
    rule: 'a 401 after the end: not emitted, the credential still marked (the server said so)',
    from: ended('response headers'),
    input: { type: 'response', status: 401, failure: undefined },
    effects: ['clearTimer', 'rejectCredential'],
    then: 'response headers+target+ended',
  },
  {
    rule: 'a connection refused before a response: a NetworkError from no server (unreachable)',
    from: state('connection'),
    input: { type: 'error', error: refused },
    effects: ['clearTimer', 'fail NetworkError unreachable: list /prefix/api/v1/pods: connect ECONNREFUSED 127.0.0.1:6443'],
    then: 'connection+target+ended',
  },
  {
    rule: 'a connection reset after the response: a NetworkError, not unreachable (a server answered)',
    from: responded,
    input: { type: 'error', error: errno('ECONNRESET', 'aborted') },
    effects: ['clearTimer', 'fail NetworkError: list /prefix/api/v1/pods: ECONNRESET aborted'],
    then: 'response headers+target+responded+ended',
  },
  {
    rule: 'an error after the end: ignored',
    from: ended('connection'),
    input: { type: 'error', error: refused },
    effects: [],
    then: 'connection+target+ended',
  },
  {
    rule: 'a request that could not start fails with its own InformerError',
    from: initialRequest,
    input: { type: 'thrown', error: malformed },
    effects: ['clearTimer', `fail ${shown(malformed)}`],
    then: 'credentials+ended',
  },
  {
    rule: 'a request that could not start for another error: a Config error naming it',
    from: initialRequest,
    input: { type: 'thrown', error: new TypeError('Invalid URL') },
    effects: ['clearTimer', 'fail Config: cannot apply the KubeConfig: Invalid URL'],
    then: 'credentials+ended',
  },
  {
    rule: 'a request that could not start, after the end (an exec plugin aborted): ignored',
    from: ended('credentials'),
    input: { type: 'thrown', error: new Error('aborted') },
    effects: [],
    then: 'credentials+ended',
  },
  {
    rule: 'torn down while the credentials are applied: the signal aborts them (an exec plugin)',
    from: initialRequest,
    input: { type: 'teardown', complete: false },
    effects: ['clearTimer', 'abort'],
    then: 'credentials+ended',
  },
  {
    rule: 'torn down while connecting: aborted',
    from: state('TLS handshake'),
    input: { type: 'teardown', complete: false },
    effects: ['clearTimer', 'abort'],
    then: 'TLS handshake+target+ended',
  },
  {
    rule: 'torn down after its response was read whole: not aborted (the connection goes back to the pool)',
    from: responded,
    input: { type: 'teardown', complete: true },
    effects: ['clearTimer'],
    then: 'response headers+target+responded+ended',
  },
  {
    rule: 'torn down with its response unread: aborted',
    from: responded,
    input: { type: 'teardown', complete: false },
    effects: ['clearTimer', 'abort'],
    then: 'response headers+target+responded+ended',
  },
  {
    rule: 'torn down after its failure: aborted still (its socket destroyed)',
    from: ended('response headers'),
    input: { type: 'teardown', complete: false },
    effects: ['clearTimer', 'abort'],
    then: 'response headers+target+ended',
  },
];

describe('requestStep', () => {
  it.each(ROWS.map((row) => [row.rule, row] as const))('%s', (_, row) => {
    const next = requestStep(facts, row.from, row.input);
    expect(next.effects.map(effect)).toEqual(row.effects);
    expect(show(next.state)).toBe(row.then);
  });

  it("an HTTP/1.1 request's walk over TLS: credentials, connection, handshake, headers, a read response left to the pool", () => {
    const walk: readonly RequestInput[] = [
      { type: 'credentials', target },
      { type: 'http1' },
      { type: 'socket', connecting: true },
      { type: 'connected', secure: true },
      { type: 'secured' },
      { type: 'response', status: 200, failure: undefined },
      { type: 'timer' },
      { type: 'teardown', complete: true },
    ];
    let at = initialRequest;
    const seen: string[] = [];
    for (const input of walk) {
      const next = requestStep(facts, at, input);
      at = next.state;
      seen.push(`${input.type}: ${show(at)} [${next.effects.map(effect).join(', ')}]`);
    }
    expect(seen).toEqual([
      'credentials: connection+target [proceed]',
      'http1: connection+target [proceed]',
      'socket: connection+target [proceed]',
      'connected: TLS handshake+target []',
      'secured: response headers+target []',
      'response: response headers+target+responded [clearTimer, emit]',
      'timer: response headers+target+responded []',
      'teardown: response headers+target+responded+ended [clearTimer]',
    ]);
  });

  it('is pure: the state given is never changed', () => {
    for (const row of ROWS) {
      const before = JSON.stringify(row.from);
      requestStep(facts, row.from, row.input);
      expect(JSON.stringify(row.from)).toBe(before);
    }
  });
});

interface ErrorRow {
  readonly rule: string;
  readonly error: NodeJS.ErrnoException;
  readonly responded?: boolean;
  readonly target?: RequestTarget | undefined;
  readonly is: string;
}

const ERROR_ROWS: readonly ErrorRow[] = [
  {
    rule: 'an HTTP/2 protocol failure is a ProtocolError',
    error: new Http2Error('the server broke the HTTP/2 protocol (PROTOCOL_ERROR)', 'ERR_HTTP2_ERROR', true, undefined),
    is: 'ProtocolError: list /prefix/api/v1/pods: the server broke the HTTP/2 protocol (PROTOCOL_ERROR)',
  },
  {
    rule: 'any other HTTP/2 failure is a NetworkError, never unreachable (even with a code that would say so)',
    error: new Http2Error('the HTTP/2 connection went away (GOAWAY)', 'ECONNRESET', false, undefined),
    is: 'NetworkError: list /prefix/api/v1/pods: the HTTP/2 connection went away (GOAWAY)',
  },
  {
    rule: 'a TLS handshake past its bound is a Timeout from no server, naming its option',
    error: errno('ERR_TLS_HANDSHAKE_TIMEOUT', 'the TLS handshake took over 10000 ms'),
    responded: true,
    is: 'Timeout unreachable: list /prefix/api/v1/pods: the TLS handshake took over 10000 ms (tlsHandshakeTimeoutMs)',
  },
  {
    rule: "an untrusted certificate is named against the kubeconfig's CA",
    error: errno('SELF_SIGNED_CERT_IN_CHAIN', 'self-signed certificate in certificate chain'),
    is: "NetworkError: list /prefix/api/v1/pods: the server's certificate is not trusted by the cluster's certificate-authority (CA) in the kubeconfig: SELF_SIGNED_CERT_IN_CHAIN",
  },
  {
    rule: 'a code that says no server answered, before a response: unreachable',
    error: errno('ENOTFOUND', 'getaddrinfo ENOTFOUND nowhere'),
    is: 'NetworkError unreachable: list /prefix/api/v1/pods: getaddrinfo ENOTFOUND nowhere',
  },
  {
    rule: 'the same code after a response: not unreachable',
    error: errno('ENOTFOUND', 'getaddrinfo ENOTFOUND nowhere'),
    responded: true,
    is: 'NetworkError: list /prefix/api/v1/pods: getaddrinfo ENOTFOUND nowhere',
  },
  {
    rule: 'another code before a response: not unreachable, the code said once',
    error: errno('EPROTO', 'write EPROTO wrong version number'),
    is: 'NetworkError: list /prefix/api/v1/pods: write EPROTO wrong version number',
  },
  {
    rule: 'without a target (no socket gives one): the path asked',
    error: errno('EPROTO', 'wrong version number'),
    target: undefined,
    is: 'NetworkError: list /api/v1/pods: EPROTO wrong version number',
  },
];

describe('requestError', () => {
  it.each(ERROR_ROWS.map((row) => [row.rule, row] as const))('%s', (_, row) => {
    const error = requestError(facts, 'target' in row ? row.target : target, row.responded ?? false, row.error);
    expect(shown(error)).toBe(row.is);
    expect(error.phase).toBe('list');
    expect(error.cause).toBe(row.error);
  });

  it('thrownError keeps an InformerError as it is, and words anything else as a Config error', () => {
    expect(thrownError(malformed)).toBe(malformed);
    expect(shown(thrownError('no'))).toBe('Config: cannot apply the KubeConfig: no');
    expect(thrownError('no').phase).toBe('config');
  });
});
