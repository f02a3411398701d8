// What names a secret, in one place: the exec plugin's stderr scrubber (execCredential.ts) and the CLI's scan of
// kubeconfig text (src/cli/secrets.ts, through src/internal.ts) read the same list.

/**
 * Words that, found anywhere in a name (a key, a header, an environment variable), say its value is a secret:
 * `token` (`id_token`, `refresh_token`), `secret` (`client_secret`, `aws_secret_access_key`), `password`, `passwd`,
 * `credential`, `cookie`, `auth` not after an `o` nor followed by a letter (`x-auth`, `basicAuth`, `auth-provider`; not
 * `Unauthorized`, not `oauth2`), key data (`client-key-data`, `clientKeyData`), private and API keys. A
 * regular-expression source of alternatives, to be matched case-insensitively and without `\b`: a `\b` does not
 * match between `_` and a letter, so `aws_secret_access_key` escaped a `\bsecret\b`.
 */
export const SECRET_NAME_WORDS = String.raw`token|secret|passw(?:or)?d|credential|cookie|(?<!o)auth(?![a-z])|key-?data|private[_-]?key|api[_-]?key`;

/**
 * A name that marks an exec plugin's env value or flag value secret: {@link SECRET_NAME_WORDS}, a passphrase, and as
 * words of their own a PIN, an OTP, a `PW` or a `PASS` (`LDAP_PW`, `--pass`; not `--passive`, `BYPASS`, `SPIN`). Not
 * a bare `-p`: a port or a profile in many plugins.
 */
const EXEC_SECRET_NAME = new RegExp(String.raw`${SECRET_NAME_WORDS}|pwd|passphrase|(?:^|[^a-z])(?:pin|otp|pw|pass)(?![a-z])`, 'i');

/** A value that looks like a credential whatever names it: 20 or more token characters, letters and digits, not a path. */
const TOKEN_LIKE = /^(?![/.~])(?=[^]*[A-Za-z])(?=[^]*\d)[A-Za-z0-9+/=._~-]{20,}$/;

/**
 * The secrets an exec plugin's kubeconfig entry hands it, which a failure message must not quote (execAuth.ts) and the
 * CLI scrubs (src/cli/secrets.ts): an `env` value whose name says secret (`LOGIN_PIN`, `AWS_SECRET_ACCESS_KEY`), a
 * flag's value whose name does (`--password X`, `--pin=X`, both the value and the whole arg), and any value that looks
 * like a token. Not every arg: `--cluster-name prod --region us-west-2 --output json` with `AWS_PROFILE=default` are
 * what a user needs to read in a failing plugin's message (client-go scrubs nothing there). 4 characters or more.
 */
export function execConfigSecrets(command: unknown, args: readonly unknown[], env: readonly unknown[]): string[] {
  const out: string[] = [];
  for (const entry of env) {
    const { name, value } = (entry ?? {}) as { name?: unknown; value?: unknown };
    if (typeof value === 'string' && ((typeof name === 'string' && EXEC_SECRET_NAME.test(name)) || TOKEN_LIKE.test(value))) out.push(value);
  }
  let flag: string | undefined; // the previous arg, when it was a bare flag (`--password`) whose value is this one
  for (const arg of args) {
    if (typeof arg !== 'string' || arg === command) {
      flag = undefined;
      continue;
    }
    const joined = /^(--?[\w.-]+)=(.+)$/s.exec(arg);
    if (joined && (EXEC_SECRET_NAME.test(joined[1]!) || TOKEN_LIKE.test(joined[2]!))) out.push(arg, joined[2]!);
    else if (!joined && ((flag !== undefined && EXEC_SECRET_NAME.test(flag)) || TOKEN_LIKE.test(arg))) out.push(arg);
    flag = /^--?[A-Za-z][\w.-]*$/.test(arg) ? arg : undefined;
  }
  return out.filter((s) => s.length >= 4);
}
