// Which of an exec plugin's kubeconfig values a failure message must not quote (execConfigSecrets): secret-named env
// and flag values and token-like values — not every arg, or a failing plugin's message loses what the user must read.
import { describe, expect, it } from 'vitest';
import { InformerError } from '../../src/0-model/errors.ts';
import { knownSecrets } from '../../src/1-transport/http/execAuth.ts';
import { execConfig, interpret } from '../../src/1-transport/http/execCredential.ts';
import { execConfigSecrets } from '../../src/1-transport/http/secretNames.ts';

function failureOf(args: string[], env: { name: string; value: string }[], stderr: string): string {
  const config = execConfig({ apiVersion: 'client.authentication.k8s.io/v1beta1', command: 'aws', args, env }, 'u');
  if (config instanceof InformerError) throw config;
  const error = interpret({ outcome: 'exited', code: 255, signal: null, stdout: '', stderr }, config, knownSecrets(config, undefined));
  return (error as InformerError).message;
}

describe('execConfigSecrets', () => {
  it("an aws plugin's failure keeps the profile, cluster, region and output it names (audit46)", () => {
    const message = failureOf(
      ['--region', 'us-west-2', 'eks', 'get-token', '--cluster-name', 'prod', '--output', 'json'],
      [{ name: 'AWS_PROFILE', value: 'default' }],
      'The config profile (default) could not be found\nNo cluster found for name: prod in region us-west-2; use --output json\n',
    );
    expect(message).toContain('The config profile (default) could not be found');
    expect(message).toContain('No cluster found for name: prod in region us-west-2; use --output json');
  });

  it('secret-named env values and flag values, joined or not, and token-like values are secrets', () => {
    const token = 'AKIAIOSFODNN7EXAMPLE2';
    expect(
      execConfigSecrets(
        'sh',
        [
          'sh',
          '--password',
          'hunter22',
          '--pin=12345',
          '--user',
          'bob',
          '--client-secret',
          'shh-shh',
          '--token',
          'tok1',
          token,
          '/usr/local/bin/x2y3z4w5v6u7t8s9r0',
        ],
        [
          { name: 'LOGIN_PIN', value: 'pin-1234' },
          { name: 'AWS_SECRET_ACCESS_KEY', value: 'wJalrXUtnFEMI' },
          { name: 'AWS_PROFILE', value: 'default' },
          { name: 'SPIN_MODE', value: 'spinning' },
          { name: 'HOME', value: 'Zx9Yw8Vu7Ts6Rq5Po4Nm3' },
        ],
      ),
    ).toEqual(['pin-1234', 'wJalrXUtnFEMI', 'Zx9Yw8Vu7Ts6Rq5Po4Nm3', 'hunter22', '--pin=12345', '12345', 'shh-shh', 'tok1', token]);
  });

  it('a PW or PASS word names a secret: LDAP_PW, --pass X, --pass=X, -pw X', () => {
    expect(
      execConfigSecrets(
        'ldap-login',
        ['--pass', 'Winter2026!', '--pass=Summer2026!', '-pw', 'Autumn2026!'],
        [
          { name: 'LDAP_PW', value: 'hunter22' },
          { name: 'VAULT_PASS', value: 'correcthorse' },
        ],
      ),
    ).toEqual(['hunter22', 'correcthorse', 'Winter2026!', '--pass=Summer2026!', 'Summer2026!', 'Autumn2026!']);
  });

  it('nor a bare -p (a port, a profile), nor words that merely contain pass or pw (--passive, BYPASS_PROXY, COMPASS_DIR)', () => {
    expect(
      execConfigSecrets(
        'plugin',
        ['-p', '9090', '--profile', 'prod', '--passive', 'yes-please', '--pwsh', 'pwsh-7'],
        [
          { name: 'BYPASS_PROXY', value: 'internal.example' },
          { name: 'COMPASS_DIR', value: 'north-pole' },
        ],
      ),
    ).toEqual([]);
  });

  it('short values (under 4 characters), the command, bare flags and ordinary words are not', () => {
    expect(
      execConfigSecrets('aws', ['aws', '--pin', '123', '--verbose', 'get-token', 'us-west-2'], [{ name: 'TOKEN', value: 'abc' }]),
    ).toEqual([]);
  });
});
