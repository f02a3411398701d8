/**
 * The exec credential protocol, the pure part (src/1-transport/http/execCredential.ts): what a
 * kubeconfig's `exec` may say, what the plugin is told (KUBERNETES_EXEC_INFO), what its output means,
 * how long a credential is used, and what of its stderr may be printed.
 */
import { describe, expect, it } from 'vitest';
import type { Cluster } from '@kubernetes/client-node';
import { InformerError } from '../../src/index.ts';
import {
  EXEC_STDERR_SHOWN_CHARS,
  credentialSecrets,
  execConfig,
  execInfo,
  interpret,
  isFresh,
  parseCredential,
  pluginEnv,
  scrubStderr,
  type ExecConfig,
  type PluginResult,
} from '../../src/1-transport/http/execCredential.ts';

const V1 = 'client.authentication.k8s.io/v1';
const V1BETA1 = 'client.authentication.k8s.io/v1beta1';

function config(exec: Record<string, unknown>): ExecConfig {
  const checked = execConfig({ command: 'get-token', apiVersion: V1, interactiveMode: 'Never', ...exec }, 'u');
  if (checked instanceof InformerError) throw checked;
  return checked;
}

describe('execConfig: the kubeconfig user’s exec, checked', () => {
  const wrong: [string, unknown, RegExp][] = [
    ['not an object', 'get-token', /exec is not an object/],
    ['no command', { apiVersion: V1 }, /no command/],
    ['args not strings', { command: 'x', apiVersion: V1, args: [1] }, /args must be a list of strings/],
    ['an env entry without a name', { command: 'x', apiVersion: V1, env: [{ value: 'v' }] }, /every env entry needs a name/],
    [
      'no apiVersion',
      { command: 'x' },
      /apiVersion must be one of client.authentication.k8s.io\/v1, client.authentication.k8s.io\/v1beta1 \(got null\)/,
    ],
    ['v1alpha1 (removed)', { command: 'x', apiVersion: 'client.authentication.k8s.io/v1alpha1' }, /apiVersion must be one of/],
    [
      'an unknown interactiveMode',
      { command: 'x', apiVersion: V1, interactiveMode: 'Sometimes' },
      /interactiveMode must be Never, IfAvailable or Always/,
    ],
    ['interactiveMode Always (no terminal is ever given)', { command: 'x', apiVersion: V1, interactiveMode: 'Always' }, /needs a terminal/],
  ];
  it.each(wrong)('%s: a Config error naming the user', (_name, exec, message) => {
    const error = execConfig(exec, 'alice');
    expect(error).toBeInstanceOf(InformerError);
    expect([(error as InformerError).reason, (error as InformerError).phase]).toEqual(['Config', 'config']);
    expect((error as InformerError).message).toMatch(/^the exec plugin of user "alice": /);
    expect((error as InformerError).message).toMatch(message);
  });

  it('v1beta1 and v1 without interactiveMode run as IfAvailable; the rest is kept as written', () => {
    expect(execConfig({ command: 'x', apiVersion: V1BETA1 }, 'u')).toEqual({
      command: 'x',
      args: [],
      env: [],
      apiVersion: V1BETA1,
      interactiveMode: 'IfAvailable',
      provideClusterInfo: false,
      installHint: undefined,
    });
    expect(
      execConfig(
        {
          command: 'x',
          apiVersion: V1,
          args: ['a', 'b'],
          env: [{ name: 'A', value: '1' }, { name: 'B' }],
          provideClusterInfo: true,
          installHint: 'brew',
        },
        'u',
      ),
    ).toEqual({
      command: 'x',
      args: ['a', 'b'],
      env: [
        { name: 'A', value: '1' },
        { name: 'B', value: '' },
      ],
      apiVersion: V1,
      interactiveMode: 'IfAvailable',
      provideClusterInfo: true,
      installHint: 'brew',
    });
  });
});

describe('KUBERNETES_EXEC_INFO and the environment', () => {
  const cluster: Cluster = {
    name: 'c',
    server: 'https://10.0.0.1:6443',
    skipTLSVerify: false,
    tlsServerName: 'kubernetes',
    proxyUrl: 'http://proxy:3128',
  } as Cluster;

  it('always says interactive: false; the cluster only with provideClusterInfo (CA as base64 bytes)', () => {
    expect(JSON.parse(execInfo(config({}), cluster, Buffer.from('CA')))).toEqual({
      kind: 'ExecCredential',
      apiVersion: V1,
      spec: { interactive: false },
    });
    expect(JSON.parse(execInfo(config({ provideClusterInfo: true, apiVersion: V1BETA1 }), cluster, Buffer.from('CA')))).toEqual({
      kind: 'ExecCredential',
      apiVersion: V1BETA1,
      spec: {
        cluster: {
          server: 'https://10.0.0.1:6443',
          'tls-server-name': 'kubernetes',
          'certificate-authority-data': Buffer.from('CA').toString('base64'),
          'proxy-url': 'http://proxy:3128',
        },
        interactive: false,
      },
    });
    expect(JSON.parse(execInfo(config({ provideClusterInfo: true }), { ...cluster, skipTLSVerify: true }, undefined)).spec.cluster).toEqual(
      {
        server: 'https://10.0.0.1:6443',
        'tls-server-name': 'kubernetes',
        'insecure-skip-tls-verify': true,
        'proxy-url': 'http://proxy:3128',
      },
    );
  });

  it('the process environment, the kubeconfig’s env over it, and KUBERNETES_EXEC_INFO', () => {
    const env = pluginEnv(
      config({
        env: [
          { name: 'HOME', value: '/plugin' },
          { name: 'X', value: '1' },
        ],
      }),
      { HOME: '/me', PATH: '/bin' },
      '{}',
    );
    expect(env).toEqual({ HOME: '/plugin', PATH: '/bin', X: '1', KUBERNETES_EXEC_INFO: '{}' });
  });
});

describe('parseCredential: what the plugin printed', () => {
  const of = (status: unknown, apiVersion = V1) => JSON.stringify({ apiVersion, kind: 'ExecCredential', status });
  const rows: [string, string, unknown][] = [
    ['a token', of({ token: 't0k3n' }), { token: 't0k3n' }],
    ['a certificate and key', of({ clientCertificateData: 'CERT', clientKeyData: 'KEY' }), { cert: 'CERT', key: 'KEY' }],
    [
      'an expirationTimestamp',
      of({ token: 't0k3n', expirationTimestamp: '2026-11-27T01:00:00Z' }),
      { token: 't0k3n', expiresAt: Date.parse('2026-11-27T01:00:00Z') },
    ],
    ['expirationTimestamp null', of({ token: 't0k3n', expirationTimestamp: null }), { token: 't0k3n' }],
    ['not JSON', '{"status":', 'its output is not JSON (10 bytes; not shown: it may hold a credential)'],
    ['an array', '[]', 'its output is not an ExecCredential object'],
    [
      'another kind',
      JSON.stringify({ apiVersion: V1, kind: 'Secret', status: { token: 't' } }),
      'its output is not an ExecCredential (another kind)',
    ],
    ['another version', of({ token: 't' }, V1BETA1), `it is configured to use ${V1}, and returned apiVersion ${V1BETA1}`],
    ['no status', JSON.stringify({ apiVersion: V1, kind: 'ExecCredential' }), 'it returned no status'],
    ['an empty status', of({}), 'it returned neither a token nor a client certificate and key'],
    [
      'a certificate without its key',
      of({ clientCertificateData: 'CERT' }),
      'it returned a client certificate without its key, or a key without its certificate',
    ],
    [
      'a key without its certificate',
      of({ token: 't', clientKeyData: 'KEY' }),
      'it returned a client certificate without its key, or a key without its certificate',
    ],
    ['a token that is not a string', of({ token: 42 }), 'status.token is not a string'],
    ['a bad expirationTimestamp', of({ token: 't', expirationTimestamp: 'soon' }), 'status.expirationTimestamp is not an RFC 3339 time'],
    // Date.parse took these, the first as local time (client-go's metav1.Time parses time.RFC3339 only).
    ...[
      '2026-11-28T12:00:00',
      '2026-11-28',
      '1',
      'Nov 28 2026',
      '2026-11-28 12:00:00Z',
      '2026-11-28T12:00:00+0100',
      '2026-13-01T00:00:00Z',
    ].map((stamp): [string, string, unknown] => [
      `expirationTimestamp ${stamp}: not RFC 3339`,
      of({ token: 't', expirationTimestamp: stamp }),
      'status.expirationTimestamp is not an RFC 3339 time',
    ]),
    [
      'an expirationTimestamp with an offset and fractional seconds',
      of({ token: 't', expirationTimestamp: '2026-11-28T13:00:00.5+01:00' }),
      { token: 't', expiresAt: Date.parse('2026-11-28T12:00:00.5Z') },
    ],
  ];
  it.each(rows)('%s', (_name, stdout, expected) => {
    expect(parseCredential(stdout, V1)).toEqual(expected);
  });
});

describe('isFresh: a cached credential is used until its expirationTimestamp has passed', () => {
  const at = Date.parse('2026-11-27T01:00:00Z');
  it.each([
    ['no expirationTimestamp: until a 401', {}, at + 1e12, true],
    ['before it', { expiresAt: at }, at - 1, true],
    ['at it', { expiresAt: at }, at, true],
    ['after it', { expiresAt: at }, at + 1, false],
  ])('%s', (_name, credential, now, fresh) => {
    expect(isFresh({ token: 't', ...credential }, now)).toBe(fresh);
  });
});

describe('interpret: a run’s outcome as a credential or a CredentialPlugin error', () => {
  const c = config({ installHint: 'see https://example.com/install' });
  const ran = (over: Partial<Extract<PluginResult, { outcome: 'exited' }>>): PluginResult => ({
    outcome: 'exited',
    code: 0,
    signal: null,
    stdout: '',
    stderr: '',
    ...over,
  });
  const message = (result: PluginResult, known: string[] = []) => {
    const out = interpret(result, c, known);
    expect(out).toBeInstanceOf(InformerError);
    expect([(out as InformerError).reason, (out as InformerError).phase]).toEqual(['CredentialPlugin', 'config']);
    return (out as InformerError).message;
  };

  it('not found (with the install hint), not executable, not started', () => {
    expect(message({ outcome: 'not-started', code: 'ENOENT' })).toBe(
      'exec plugin get-token: executable not found (see https://example.com/install)',
    );
    expect(message({ outcome: 'not-started', code: 'EACCES' })).toBe('exec plugin get-token: not executable (permission denied)');
    expect(message({ outcome: 'not-started', code: 'E2BIG' })).toBe('exec plugin get-token: cannot start (E2BIG)');
  });

  it('a non-zero exit or a signal, with the end of its stderr; output over a limit', () => {
    expect(message(ran({ code: 2, stderr: 'error: not logged in\n' }))).toBe(
      'exec plugin get-token: failed with exit code 2: error: not logged in',
    );
    expect(message(ran({ code: null, signal: 'SIGSEGV' }))).toBe('exec plugin get-token: was killed by SIGSEGV');
    expect(
      message({ outcome: 'too-large', stream: 'stdout', limit: 1024 * 1024, stdout: '{"token":"abcdefgh', stderr: 'x abcdefgh\n' }),
    ).toBe('exec plugin get-token: its stdout passed the 1 MiB limit; stopped reading and killed it: x <redacted>');
  });

  it('a credential from a clean exit; a bad one is an error that does not quote stdout', () => {
    const stdout = JSON.stringify({ apiVersion: V1, kind: 'ExecCredential', status: { token: 'secret-token-1' } });
    expect(interpret(ran({ stdout }), c)).toEqual({ token: 'secret-token-1' });
    expect(message(ran({ stdout: 'secret-token-1' }))).toBe(
      'exec plugin get-token: its output is not JSON (14 bytes; not shown: it may hold a credential)',
    );
  });
});

describe('scrubStderr: what of a plugin’s stderr may be printed', () => {
  it('known secrets (the credential it printed, the previous one) are replaced, whatever the context', () => {
    expect(scrubStderr('token is abcd-1234-efgh\nold one was zzzz-9999', ['abcd-1234-efgh', 'zzzz-9999'])).toBe(
      'token is <redacted> | old one was <redacted>',
    );
  });

  it('what looks like a credential is replaced even when nobody said it was one', () => {
    const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln';
    const pem = '-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIB\n-----END EC PRIVATE KEY-----';
    expect(
      scrubStderr(
        `got ${jwt}\n${pem}\nAuthorization: Bearer abc.def\naccess_token=s3cr3t password: "hunter22"\nclient-key-data: QUJD\n`,
        [],
      ),
    ).toBe(
      'got <redacted> | <redacted> | Authorization: <redacted> | access_token=<redacted> password: "<redacted>" | client-key-data: <redacted>',
    );
  });

  it.each([
    // A secret word anywhere in the name: `\b` does not match after `_`, so these escaped a `\bsecret\b`.
    ['aws_secret_access_key=wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY', 'aws_secret_access_key=<redacted>'],
    ['client_secret: GOCSPX-abcdefghijkl', 'client_secret: <redacted>'],
    ['refresh_token=1//0gLr8p9xHhVZ', 'refresh_token=<redacted>'],
    ['credential: hunter2-very-secret', 'credential: <redacted>'],
    ['x-auth=c2VjcmV0LXRva2VuLXZhbHVl', 'x-auth=<redacted>'],
    ['"privateKey": "MIIEvQIBADANBg"', '"privateKey": "<redacted>"'],
    // Authorization and Cookie headers: the whole value, whatever the scheme.
    ['Authorization: Token 9f8e7d6c5b4a39281706', 'Authorization: <redacted>'],
    ['proxy-authorization: Negotiate YIIGhgYJKoZIhvcSAQICAQBuggZ1', 'proxy-authorization: <redacted>'],
    ['session cookie: sid=Zm9vYmFyYmF6cXV1eA; csrf=abcdef123456', 'session cookie: <redacted>'],
    // Not secrets: an error's words stay readable.
    [
      'Unauthorized: the server has asked for the client to provide credentials',
      'Unauthorized: the server has asked for the client to provide credentials',
    ],
    ['error: you must be logged in to the server (author: ops)', 'error: you must be logged in to the server (author: ops)'],
    ['basicAuth: dXNlcjpwYXNzd29yZA==', 'basicAuth: <redacted>'],
    // Go's oauth2 error (gcloud-, kubelogin-style plugins): `oauth` is no secret name.
    ['oauth2: "invalid_grant" "Token has been expired or revoked."', 'oauth2: "invalid_grant" "Token has been expired or revoked."'],
  ])('a credential under any secret name is replaced: %s', (line, shown) => {
    expect(scrubStderr(line, [])).toBe(shown);
  });

  it('cut at the read limit: the incomplete last line (maybe half a secret) is dropped', () => {
    expect(scrubStderr('first line\nsecond: half-a-sec', ['half-a-secret'], true)).toBe('first line');
    expect(scrubStderr('one long line with half-a-sec', ['half-a-secret'], true)).toBe('');
  });

  it(`at most ${EXEC_STDERR_SHOWN_CHARS} characters: the last lines, control characters as spaces`, () => {
    const lines = Array.from({ length: 100 }, (_, i) => `line ${i} ${'x'.repeat(40)}`);
    const shown = scrubStderr(lines.join('\n'), []);
    expect(shown.length).toBeLessThanOrEqual(EXEC_STDERR_SHOWN_CHARS + 4);
    expect(shown.startsWith('… | line ')).toBe(true);
    expect(shown.endsWith(`line 99 ${'x'.repeat(40)}`)).toBe(true);
    expect(scrubStderr('a\u001b[31mred\u0007\r\n\tb', [])).toBe('a [31mred | b');
    expect(scrubStderr('word '.repeat(5000), []).length).toBe(EXEC_STDERR_SHOWN_CHARS + 1);
  });

  it('only the end is looked at, from a line’s start or a blank: no piece of a secret begins what is shown', () => {
    // One line far longer than what is looked at, of a secret again and again: the first word seen could be its end.
    const secret = `${'Q'.repeat(30)}END`;
    expect(scrubStderr(`${secret} `.repeat(5000), [secret]).replace(/<redacted>|…|\s/g, '')).toBe('');
    expect(scrubStderr('y'.repeat(50_000), [])).toBe('…'); // one word: all of it could be a token
    expect(scrubStderr(`${'z'.repeat(50_000)}\nthe last line`, [])).toBe('… | the last line');
  });

  it('a hostile stderr (what would make a careless pattern backtrack) is scrubbed in linear time', () => {
    const started = performance.now();
    for (const text of ['a-'.repeat(512 * 1024), 'eyJ'.repeat(350_000), 'x-token='.repeat(130_000), 'Bearer '.repeat(150_000)])
      scrubStderr(text, ['abcdefgh']);
    // A bound, not a benchmark: quadratic backtracking on these takes hours (40 KB of "a-" took 7.6 s).
    expect(performance.now() - started).toBeLessThan(20_000);
  });

  it('secrets are found in stdout even when it is cut or not JSON', () => {
    expect(credentialSecrets(JSON.stringify({ status: { token: 'tok-1234', clientKeyData: 'key-5678' } }))).toEqual(
      expect.arrayContaining(['tok-1234', 'key-5678']),
    );
    expect(credentialSecrets('{"kind":"ExecCredential","status":{"token":"tok-cut-off-her')).toContain('tok-cut-off-her');
  });
});
