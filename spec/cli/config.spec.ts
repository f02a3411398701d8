/**
 * Configuration as users get it wrong: no secret from a kubeconfig or a sink
 * URL in any output, whatever is wrong with it; a clear first message when
 * there is no kubeconfig at all.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadKubeConfig } from '../../src/cli/kubeconfig.ts';
import { parseErrorMessage, SecretScrubber, textSecrets } from '../../src/cli/secrets.ts';
import { UsageError } from '../../src/cli/watch.ts';
import { NODE, cli, cliRuns, expectNoStack, killAll } from './support.ts';

afterAll(() => killAll());

const dir = mkdtempSync(join(tmpdir(), 'rx-informer-config-'));
const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

/** Each secret below appears in one file at least; none may appear in any output. */
const SECRETS = [
  'argpw-MMMM-1414',
  'envpin-NNNN-1515',
  'tok-AAAA-1111',
  'KEYDATA-BBBB-2222',
  'pw-CCCC-3333',
  'idt-DDDD-4444',
  'rft-EEEE-5555',
  'cs-FFFF-6666',
  'env-GGGG-7777',
  'env-HHHH-8888',
  'tok-IIII-9999',
  'pw-JJJJ-0000',
  'key-KKKK-1212',
  'env-LLLL-1313',
  'at-MMMM-1414',
  'tok-NNNN-1515',
  'pw-OOOO-1616',
  'srvpw-RRRR-1717',
  'envsecret-UUUU-1919',
  'plugintok-ZZZZ-2020',
];

/** Kubeconfigs that do not parse, in YAML and JSON, each with secrets near the fault (where a parser's snippet would quote them). */
const MALFORMED: Record<string, string> = {
  'unclosed-quote.yaml': `apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n    token: "tok-AAAA-1111\n    client-key-data: ${b64('KEYDATA-BBBB-2222')}\n`,
  // The parser names an alias it cannot resolve: here, the password.
  'alias.yaml': 'users:\n- name: u\n  user:\n    password: *pw-CCCC-3333\n',
  'auth-provider.yaml':
    'users:\n- name: u\n  user:\n    auth-provider:\n      name: oidc\n      config:\n        id-token: idt-DDDD-4444\n        refresh-token: "rft-EEEE-5555"\n       client-secret: cs-FFFF-6666\n',
  'exec-env.yaml':
    'users:\n- name: u\n  user:\n    exec:\n      command: get-token\n      env:\n      - name: SECRET\n        value: env-GGGG-7777\n     - {name: X, value: !weird env-HHHH-8888}\n',
  'flow.yaml': 'users:\n- name: u\n  user: {token: tok-NNNN-1515, password: "pw-OOOO-1616\n',
  'users.json': `{"users":[{"name":"u","user":{"token":"tok-IIII-9999","password":"pw-JJJJ-0000","client-key-data":"key-KKKK-1212"}}],"clusters":[{"name":"c","cluster":{"server":"https://x"}}]  "contexts": []}`,
  'exec-and-provider.json':
    '{"users":[{"name":"u","user":{"exec":{"command":"x","env":[{"name":"A","value":"env-LLLL-1313"}]},"auth-provider":{"name":"oidc","config":{"access-token":"at-MMMM-1414"}}}]}, , ]}',
};

function valid(cluster: Record<string, unknown>, user: Record<string, unknown>): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster }],
    users: [{ name: 'u', user }],
    contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'x',
  });
}

/** Kubeconfigs that parse, whose use fails in ways whose messages could quote a secret. */
const FAILING: Record<string, string> = {
  // Userinfo in the server URL, a token; nothing listens on port 1.
  'server-userinfo.json': valid(
    { server: 'https://admin:srvpw-RRRR-1717@127.0.0.1:1/', 'insecure-skip-tls-verify': true },
    { token: 'tok-AAAA-1111' },
  ),
  // An exec plugin that prints its secret environment to stderr and fails: client-node quotes that stderr.
  'exec-fails.json': valid(
    { server: 'https://127.0.0.1:1', 'insecure-skip-tls-verify': true },
    {
      exec: {
        apiVersion: 'client.authentication.k8s.io/v1beta1',
        command: NODE,
        args: ['-e', "process.stderr.write('leaked-' + process.env.SECRET_ENV + ' ' + process.env.OTHER); process.exit(3)"],
        env: [
          { name: 'SECRET_ENV', value: 'envsecret-UUUU-1919' },
          { name: 'OTHER', value: 'env-GGGG-7777' },
        ],
      },
    },
  ),
  // A plugin that prints its credential, then 300 MiB of stderr quoting it: cut at 1 MiB, killed, scrubbed.
  'exec-endless-stderr.json': valid(
    { server: 'https://127.0.0.1:1', 'insecure-skip-tls-verify': true },
    {
      exec: {
        apiVersion: 'client.authentication.k8s.io/v1',
        command: NODE,
        args: [
          '-e',
          `process.stdout.write(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: 'plugintok-ZZZZ-2020' } }));
           const chunk = Buffer.from('using plugintok-ZZZZ-2020\\n'.repeat(2520));
           let n = 0;
           const write = () => { while (n++ < 4800) if (!process.stderr.write(chunk)) return void process.stderr.once('drain', write); };
           write();`,
        ],
        interactiveMode: 'Never',
      },
    },
  ),
  // A CA file that is not there: its path is shown (a path is no secret), the token is not.
  'missing-ca.json': valid(
    { server: 'https://127.0.0.1:1', 'certificate-authority': join(dir, 'no-such-ca.crt') },
    { token: 'tok-AAAA-1111' },
  ),
  // A plugin that echoes its args and env (a password, a PIN) on stderr: the kubeconfig's secrets (audit43).
  'exec-args.json': valid(
    { server: 'https://127.0.0.1:1', 'insecure-skip-tls-verify': true },
    {
      exec: {
        apiVersion: 'client.authentication.k8s.io/v1',
        command: 'sh',
        args: ['-c', 'echo "login failed: $* (pin $LOGIN_PIN)" >&2; exit 1', '_', '--password', 'argpw-MMMM-1414'],
        env: [{ name: 'LOGIN_PIN', value: 'envpin-NNNN-1515' }],
        interactiveMode: 'Never',
      },
    },
  ),
};

describe('kubeconfig: no secret in any message', () => {
  // Seven command lines in one child process, one after the other (cliRuns): what is said before anything is done.
  it(
    'a kubeconfig that does not parse (YAML or JSON) is one line that says what and where, quoting none of it; exit 1',
    { timeout: 120_000 },
    async () => {
      const files = Object.entries(MALFORMED).map(([name, text]) => {
        const file = join(dir, name);
        writeFileSync(file, text);
        return file;
      });
      const runs = await cliRuns(files.map((file) => ['watch', 'pods', '--kubeconfig', file]));
      expect(runs).toHaveLength(files.length);
      for (const [i, name] of Object.keys(MALFORMED).entries()) {
        const run = runs[i]!;
        expect(run.code, name).toBe(1);
        expect(run.err, name).toEqual([
          expect.stringMatching(
            new RegExp(
              `^error: cannot load kubeconfig .*${name.replace('.', '\\.')}: not a valid kubeconfig \\(YAML or JSON\\): .*\\(\\d+:\\d+\\)$`,
            ),
          ),
        ]);
        const all = run.raw();
        expectNoStack(all);
        for (const secret of SECRETS) {
          expect(all, `${name}: ${secret}`).not.toContain(secret);
          expect(all, `${name}: ${secret} in base64`).not.toContain(b64(secret));
        }
      }
    },
  );

  it(
    'a kubeconfig that parses but fails in use (a server URL with a password, an exec plugin that prints its secrets, or 300 MiB of stderr quoting its token; a missing CA file) prints none of them',
    { timeout: 120_000 },
    async () => {
      const runs = [];
      for (const [name, text] of Object.entries(FAILING)) {
        const file = join(dir, name);
        writeFileSync(file, text);
        const run = cli(['watch', 'pods', '--kubeconfig', file]);
        runs.push({ name, run });
        expect((await run.exit).code, name).toBe(1);
        const all = run.raw();
        for (const secret of SECRETS) expect(all, `${name}: ${secret}`).not.toContain(secret);
        expect(all).not.toContain('admin');
      }
      const [userinfo, exec, endless, ca, args] = runs.map((r) => r.run.err);
      // All but the missing CA load: one line says where the CLI connects (the server's URL without its user info)
      // before it fails. A kubeconfig that cannot be used at all says so, and no connecting line (below).
      const connecting = 'connecting to https://127.0.0.1:1 (context x) …';
      expect(endless).toEqual([
        connecting,
        expect.stringMatching(
          /^error: cannot get credentials for https:\/\/127\.0\.0\.1:1: exec plugin \S+: its stderr passed the 1 MiB limit; stopped reading and killed it: …( \| using <redacted>)+/,
        ),
      ]);
      expect(userinfo).toEqual([connecting, expect.stringMatching(/^error: cannot reach the API server at https:\/\/127\.0\.0\.1:1: /)]);
      // The plugin's message is still shown, its secrets replaced; a failing plugin is no bad kubeconfig.
      expect(exec).toEqual([
        connecting,
        `error: cannot get credentials for https://127.0.0.1:1: exec plugin ${NODE}: failed with exit code 3: leaked-<redacted> <redacted>`,
      ]);
      expect(ca).toEqual([
        `error: bad kubeconfig: cannot read the certificate-authority file ${join(dir, 'no-such-ca.crt')}: no such file`,
      ]);
      expect(args).toEqual([
        connecting,
        'error: cannot get credentials for https://127.0.0.1:1: exec plugin sh: failed with exit code 1: login failed: --password <redacted> (pin <redacted>)',
      ]);
    },
  );

  // The connecting line comes once the kubeconfig is loaded and its server resolved: a kubeconfig the transport would
  // refuse on its first request ("bad kubeconfig") is said to be bad, with no line saying the CLI connects.
  it('a bad kubeconfig (its server no http(s) URL, plain http:// refused, a TLS file missing) has no connecting line', async () => {
    const token = { token: 'tok-AAAA-1111' };
    const missing = (name: string) => join(dir, name);
    const BAD: Record<string, [string, string]> = {
      'bad-url.json': [valid({ server: 'https://admin:srvpw-RRRR-1717@[not a host' }, token), "the cluster's server is not a valid URL"],
      'ftp.json': [valid({ server: 'ftp://127.0.0.1:1' }, token), 'the server ftp://127.0.0.1:1 is not an https:// (or http://) URL'],
      'plain-http.json': [
        valid({ server: 'http://127.0.0.1:1' }, token),
        'the server http://127.0.0.1:1 is plain http://, which the Kubernetes client refuses unless the cluster sets insecure-skip-tls-verify: true',
      ],
      'no-client-cert.json': [
        valid({ server: 'https://127.0.0.1:1' }, { 'client-certificate': missing('no.crt'), 'client-key': missing('no.key') }),
        `cannot read the client-certificate file ${missing('no.crt')}: no such file`,
      ],
      'no-ca.json': [
        valid({ server: 'https://127.0.0.1:1', 'certificate-authority': missing('no-such-ca.crt') }, token),
        `cannot read the certificate-authority file ${missing('no-such-ca.crt')}: no such file`,
      ],
    };
    const files = Object.entries(BAD).map(([name, [text]]) => {
      writeFileSync(join(dir, name), text);
      return join(dir, name);
    });
    const runs = await cliRuns(
      files.flatMap((file) => [
        ['watch', 'pods', '--kubeconfig', file],
        ['record', 'pods', '--kubeconfig', file, '-o', join(dir, 'never.trace')],
      ]),
    );
    for (const [i, [name, [, why]]] of Object.entries(BAD).entries()) {
      for (const run of [runs[2 * i]!, runs[2 * i + 1]!]) {
        expect(run.code, name).toBe(1);
        expect(run.err, name).toEqual([
          expect.stringMatching(new RegExp(`^(record: )?error: bad kubeconfig: ${why.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`)),
        ]);
        expect(run.raw(), name).not.toContain('srvpw');
      }
    }
  });

  it('a parse error keeps what is wrong and where, and drops every word of the file but a kubeconfig own keys', () => {
    const text = 'users:\n- name: u\n  user:\n    password: *hunter22\n';
    expect(parseErrorMessage('unidentified alias "hunter22" (4:16)\n\n 3 |   user:\n 4 |     password: *hunter22\n', text)).toBe(
      'unidentified alias "…" (4:16)',
    );
    expect(textSecrets('{"token":"abc-123","name":"n"}\n  password: p4ss w0rd\n  value: "q u o"\n  client-key-data: QUJD\n')).toEqual(
      expect.arrayContaining(['abc-123', 'p4ss', 'q u o', 'QUJD']),
    );
    // The names the exec plugin's stderr scrubber knows (one list): anywhere in a key, `_` or not.
    expect(
      textSecrets('client_secret: GOCSPX-abcdefgh\naws_secret_access_key: wJalrXUtnFEMI\nx-auth: c2VjcmV0LXRv\nid_token: eyJzdWIi\n'),
    ).toEqual(expect.arrayContaining(['GOCSPX-abcdefgh', 'wJalrXUtnFEMI', 'c2VjcmV0LXRv', 'eyJzdWIi']));
    const scrubber = new SecretScrubber();
    for (const s of ['abcd', 'abcdef', 'ab']) scrubber.add(s);
    expect(scrubber.scrub('x abcdef y abcd z ab')).toBe('x <redacted> y <redacted> z ab');
  });
});

describe('no kubeconfig at all', () => {
  it('says where it looked and what to do, before anything else', () => {
    const home = mkdtempSync(join(tmpdir(), 'rx-informer-home-'));
    let thrown: unknown;
    try {
      loadKubeConfig(undefined, undefined, undefined, { env: { HOME: home }, serviceAccountToken: join(home, 'no-token') });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(UsageError);
    expect((thrown as Error).message).toBe(
      'no kubeconfig found: looked at $KUBECONFIG (not set), ~/.kube/config (no such file) and the in-cluster service account (not in a pod); ' +
        'pass --kubeconfig FILE, or run `rx-informer start` without options for the built-in emulator',
    );
  });
});
