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
