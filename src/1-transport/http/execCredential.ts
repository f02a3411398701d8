import type { Cluster, User } from '@kubernetes/client-node';
import { InformerError } from '../../0-model/errors.ts';
import { isRecord } from '../../util/isRecord.ts';
import { bearerTokenFault } from './bearerToken.ts';
import { formatBytes } from './options.ts';
import { SECRET_NAME_WORDS } from './secretNames.ts';

// The exec credential protocol (client.authentication.k8s.io v1 and v1beta1), as client-go's
// plugin/pkg/client/auth/exec speaks it: what a kubeconfig's `exec` asks for, what the plugin is
// given (its environment and KUBERNETES_EXEC_INFO), and what its output means. Pure: running the
// plugin is ./execPlugin.ts, caching and sharing its credential ./execAuth.ts.

/** The ExecCredential versions spoken. */
export const EXEC_API_VERSIONS = ['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1'] as const;
export type ExecApiVersion = (typeof EXEC_API_VERSIONS)[number];

/** Largest stdout read from a plugin (an ExecCredential: a token, or a certificate and key); past it the plugin is killed. */
export const EXEC_MAX_STDOUT_BYTES = 1024 * 1024;
/** Largest stderr read from a plugin (its messages); past it the plugin is killed. */
export const EXEC_MAX_STDERR_BYTES = 1024 * 1024;
/** At most this much of a plugin's stderr is quoted in an error (its end, cut at a line). */
export const EXEC_STDERR_SHOWN_CHARS = 1000;

export type InteractiveMode = 'Never' | 'IfAvailable' | 'Always';

/** A kubeconfig user's `exec`, checked. */
export interface ExecConfig {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: readonly { readonly name: string; readonly value: string }[];
  readonly apiVersion: ExecApiVersion;
  readonly interactiveMode: InteractiveMode;
  readonly provideClusterInfo: boolean;
  readonly installHint: string | undefined;
}

/** What a plugin handed out. `expiresAt`: ms since the epoch; none: good until the server answers 401. */
export interface Credential {
  readonly token?: string;
  readonly cert?: string;
  readonly key?: string;
  readonly expiresAt?: number;
}

/** How a plugin run ended, as ./execPlugin.ts reports it (output decoded as UTF-8, each bounded). */
export type PluginResult =
  | {
      readonly outcome: 'exited';
      readonly code: number | null;
      readonly signal: string | null;
      readonly stdout: string;
      readonly stderr: string;
    }
  | {
      readonly outcome: 'too-large';
      readonly stream: 'stdout' | 'stderr';
      readonly limit: number;
      readonly stdout: string;
      readonly stderr: string;
    }
  | { readonly outcome: 'not-started'; readonly code: string | undefined };

/** The `exec` of a user: from `user.exec`, or client-node's `auth-provider` form (`name: exec`, or `config.exec`). */
export function execOf(user: User): unknown {
  const provider: unknown = user.authProvider;
  const fromProvider = isRecord(provider) && isRecord(provider['config']) ? provider['config']['exec'] : undefined;
  return (user.exec as unknown) ?? fromProvider;
}

/**
 * The user's `exec`, checked as client-go's kubeconfig validation does (a command, a known apiVersion,
 * env entries with names, a known interactiveMode), or a `Config` error saying what is wrong.
 * A v1 `exec` without `interactiveMode` (which kubectl refuses) runs as `IfAvailable`.
 * `Always` is refused: a plugin is never given a terminal (its stdin is closed).
 */
export function execConfig(exec: unknown, user: string): ExecConfig | InformerError {
  const wrong = (what: string) => new InformerError('Config', `the exec plugin of user "${user}": ${what}`, { phase: 'config' });
  if (!isRecord(exec)) return wrong('exec is not an object');
  const { command, args = [], env = [], apiVersion, interactiveMode = 'IfAvailable', provideClusterInfo, installHint } = exec;
  if (typeof command !== 'string' || command === '') return wrong('no command');
  if (!Array.isArray(args) || !args.every((a) => typeof a === 'string')) return wrong('args must be a list of strings');
  if (!Array.isArray(env) || !env.every((e) => isRecord(e) && typeof e['name'] === 'string' && e['name'] !== ''))
    return wrong('every env entry needs a name');
  if (!EXEC_API_VERSIONS.includes(apiVersion as ExecApiVersion))
    return wrong(`apiVersion must be one of ${EXEC_API_VERSIONS.join(', ')} (got ${JSON.stringify(apiVersion ?? null)})`);
  if (interactiveMode !== 'Never' && interactiveMode !== 'IfAvailable' && interactiveMode !== 'Always')
    return wrong(`interactiveMode must be Never, IfAvailable or Always (got ${JSON.stringify(interactiveMode)})`);
  if (interactiveMode === 'Always')
    return wrong('interactiveMode Always needs a terminal, and rx-informer never gives a plugin one (use Never or IfAvailable)');
  return {
    command,
    args: args as string[],
    env: (env as Record<string, unknown>[]).map((e) => ({
      name: String(e['name']),
      value: typeof e['value'] === 'string' ? e['value'] : '',
    })),
    apiVersion: apiVersion as ExecApiVersion,
    interactiveMode,
    provideClusterInfo: provideClusterInfo === true,
    installHint: typeof installHint === 'string' && installHint !== '' ? installHint : undefined,
  };
}

/**
 * KUBERNETES_EXEC_INFO: an ExecCredential with its spec. `interactive` is always false (no terminal is
 * passed on); the cluster (server, TLS settings, CA bytes) only with `provideClusterInfo`.
 */
export function execInfo(config: ExecConfig, cluster: Cluster | null, caData: Buffer | undefined): string {
  const spec: Record<string, unknown> = {};
  if (config.provideClusterInfo && cluster) {
    spec['cluster'] = {
      server: cluster.server,
      ...(cluster.tlsServerName ? { 'tls-server-name': cluster.tlsServerName } : {}),
      ...(cluster.skipTLSVerify ? { 'insecure-skip-tls-verify': true } : {}),
      ...(caData && caData.length > 0 ? { 'certificate-authority-data': caData.toString('base64') } : {}),
      ...(cluster.proxyUrl ? { 'proxy-url': cluster.proxyUrl } : {}),
    };
  }
  spec['interactive'] = false;
  return JSON.stringify({ kind: 'ExecCredential', apiVersion: config.apiVersion, spec });
}

/** The plugin's environment: ours, the kubeconfig's `env` over it, and KUBERNETES_EXEC_INFO. */
export function pluginEnv(config: ExecConfig, base: NodeJS.ProcessEnv, info: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base };
  for (const { name, value } of config.env) env[name] = value;
  env['KUBERNETES_EXEC_INFO'] = info;
  return env;
}

/**
 * What a plugin run means: its credential, or a `CredentialPlugin` error (phase `config`) that says
 * what went wrong. A message never quotes stdout (it may hold the credential); stderr is quoted cut,
 * scrubbed of whatever looks like a credential (see {@link scrubStderr}). `known`: secrets to scrub besides.
 */
export function interpret(result: PluginResult, config: ExecConfig, known: readonly string[] = []): Credential | InformerError {
  const plugin = `exec plugin ${config.command}`;
  const fail = (what: string) => new InformerError('CredentialPlugin', `${plugin}: ${what}`, { phase: 'config' });
  if (result.outcome === 'not-started') {
    if (result.code === 'ENOENT') return fail(`executable not found${config.installHint ? ` (${oneLine(config.installHint)})` : ''}`);
    if (result.code === 'EACCES') return fail('not executable (permission denied)');
    return fail(`cannot start (${result.code ?? 'unknown error'})`);
  }
  const secrets = [...known, ...credentialSecrets(result.stdout)];
  const said = (cut: boolean) => {
    const text = scrubStderr(result.stderr, secrets, cut);
    return text === '' ? '' : `: ${text}`;
  };
  if (result.outcome === 'too-large')
    return fail(
      `its ${result.stream} passed the ${formatBytes(result.limit)} limit; stopped reading and killed it${said(result.stream === 'stderr')}`,
    );
  if (result.code !== 0) {
    const how = result.code === null ? `was killed by ${result.signal ?? 'a signal'}` : `failed with exit code ${result.code}`;
    return fail(`${how}${said(false)}`);
  }
  const parsed = parseCredential(result.stdout, config.apiVersion);
  return typeof parsed === 'string' ? fail(`${parsed}${said(false)}`) : parsed;
}

/** An ExecCredential's status, or what is wrong with the output (never quoting it). */
export function parseCredential(stdout: string, apiVersion: ExecApiVersion): Credential | string {
  let doc: unknown;
  try {
    doc = JSON.parse(stdout);
  } catch {
    return `its output is not JSON (${Buffer.byteLength(stdout)} bytes; not shown: it may hold a credential)`;
  }
  if (!isRecord(doc)) return 'its output is not an ExecCredential object';
  if (doc['kind'] !== 'ExecCredential') return 'its output is not an ExecCredential (another kind)';
  if (doc['apiVersion'] !== apiVersion) return `it is configured to use ${apiVersion}, and returned ${describeVersion(doc['apiVersion'])}`;
  const status = doc['status'];
  if (!isRecord(status)) return 'it returned no status';
  const { token, clientCertificateData: cert, clientKeyData: key, expirationTimestamp } = status;
  for (const [name, value] of [
    ['token', token],
    ['clientCertificateData', cert],
    ['clientKeyData', key],
  ] as const)
    if (value !== undefined && value !== null && typeof value !== 'string') return `status.${name} is not a string`;
  const has = (v: unknown): v is string => typeof v === 'string' && v !== '';
  if (!has(token) && !has(cert) && !has(key)) return 'it returned neither a token nor a client certificate and key';
  if (has(cert) !== has(key)) return 'it returned a client certificate without its key, or a key without its certificate';
  const fault = has(token) ? bearerTokenFault(token) : undefined;
  if (fault !== undefined) return `status.token ${fault}`;
  let expiresAt: number | undefined;
  if (expirationTimestamp !== undefined && expirationTimestamp !== null) {
    // RFC 3339 only, as client-go's metav1.Time (time.RFC3339): Date.parse takes "1", a date, or a time without an
    // offset (read as local time).
    expiresAt = typeof expirationTimestamp === 'string' && RFC3339.test(expirationTimestamp) ? Date.parse(expirationTimestamp) : NaN;
    if (Number.isNaN(expiresAt)) return 'status.expirationTimestamp is not an RFC 3339 time';
  }
  return {
    ...(has(token) ? { token } : {}),
    ...(has(cert) && has(key) ? { cert, key } : {}),
    ...(expiresAt !== undefined ? { expiresAt } : {}),
  };
}

/** An RFC 3339 date-time (`2026-11-28T12:00:00Z`, `…00.5+01:00`); its ranges are Date.parse's to check (NaN). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/;

/** Whether a cached credential may still be used at `now` (client-go: until its expirationTimestamp has passed). */
export function isFresh(credential: Credential, now: number): boolean {
  return credential.expiresAt === undefined || now <= credential.expiresAt;
}

/**
 * Secrets in a plugin's stdout, even when it is cut or not JSON: the status' token and key, read
 * from the JSON if it parses, and by pattern from the text if not (a cut value counts as far as it goes).
 */
export function credentialSecrets(stdout: string): string[] {
  const out: string[] = [];
  try {
    const status: unknown = (JSON.parse(stdout) as { status?: unknown } | null)?.status;
    if (isRecord(status)) for (const v of [status['token'], status['clientKeyData']]) if (typeof v === 'string') out.push(v);
  } catch {
    // not JSON: by pattern below
  }
  for (const match of stdout.matchAll(/"(?:token|clientKeyData)"\s*:\s*"((?:[^"\\]|\\.)*)"?/g)) {
    const raw = match[1] ?? '';
    out.push(raw);
    try {
      out.push(JSON.parse(`"${raw}"`) as string);
    } catch {
      // cut inside an escape: the raw text was taken
    }
  }
  return out.filter((s) => s.length >= 4);
}

/**
 * What looks like a credential whoever printed it: a JWT, a PEM private key (or a line of one: base64 alone on
 * a line), `Bearer …`, `token: …` and the like. Every repetition is bounded, so that no text makes a pattern
 * backtrack for long (and they only ever see {@link STDERR_WINDOW} characters).
 */
const CREDENTIAL_LIKE = [
  /eyJ[A-Za-z0-9_-]{2,8192}\.[A-Za-z0-9_-]{2,8192}\.[A-Za-z0-9_-]{0,8192}/g,
  /-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]{0,40}PRIVATE KEY-----|$)/g,
  /^[A-Za-z0-9+/=]{40,}$/gm,
  /\b(Bearer|Basic)[ \t]{1,16}[A-Za-z0-9._~+/=-]{1,8192}/gi,
];
/**
 * Headers whose value is a credential whatever its scheme: `Authorization: Token …` (`Bearer`, `Negotiate`,
 * `Proxy-Authorization`), its scheme and credential (group 1 up to them); a `Cookie:` (or `Set-Cookie:`) to the end
 * of its line (`a=1; b=2`).
 */
const SECRET_HEADERS = [
  /(\b[A-Za-z-]{0,20}authorization["']?[ \t]{0,16}[:=][ \t]{0,16})(?:[A-Za-z0-9-]{1,32}[ \t]{1,16})?[^\s"',;)}]{1,8192}/gi,
  /(\b[A-Za-z-]{0,20}cookie["']?[ \t]{0,16}[:=][ \t]{0,16})[^\r\n]{1,8192}/gi,
];
/**
 * `name: value` or `name=value`, quoted or not, where the name holds a word of {@link SECRET_NAME_WORDS} anywhere
 * (`aws_secret_access_key=…`, `client_secret: …`, `x-auth=…`): group 1 up to the value, group 2 the value.
 */
const SECRET_ASSIGNMENT = new RegExp(
  String.raw`(["']?[A-Za-z0-9_.-]{0,40}(?:${SECRET_NAME_WORDS})[A-Za-z0-9_.-]{0,40}["']?[ 	]{0,16}[:=][ 	]{0,16}["']?)([^\s"',}]{1,8192})`,
  'gi',
);

/** How much of the end of stderr is looked at: a few times what is shown, since scrubbing shortens nothing much. */
const STDERR_WINDOW = 4 * EXEC_STDERR_SHOWN_CHARS;

/**
 * A plugin's stderr fit to print: its end, every known secret and whatever looks like a credential replaced
 * by `<redacted>`, control characters by spaces, at most {@link EXEC_STDERR_SHOWN_CHARS} characters of its last
 * lines. Only the last {@link STDERR_WINDOW} characters are looked at, starting at a line (a longer last line:
 * after a blank, so that no part of a token begins it). `cut`: the text stopped at the read limit, so its last,
 * incomplete line (which may hold the first part of a secret) is dropped first.
 */
export function scrubStderr(stderr: string, secrets: readonly string[], cut = false): string {
  let text = endOf(cut ? stderr.slice(0, Math.max(0, stderr.lastIndexOf('\n'))) : stderr, STDERR_WINDOW);
  const pieces = new Set<string>();
  for (const secret of secrets) {
    pieces.add(secret);
    // A multi-line secret (a PEM key) shows line by line too.
    for (const line of secret.split(/\r?\n/)) if (line.length >= 16) pieces.add(line);
  }
  for (const piece of [...pieces].sort((a, b) => b.length - a.length))
    if (piece.length >= 4 && text.includes(piece)) text = text.split(piece).join('<redacted>');
  for (const pattern of CREDENTIAL_LIKE)
    text = text.replace(pattern, (_m, scheme?: unknown) => (typeof scheme === 'string' ? `${scheme} <redacted>` : '<redacted>'));
  for (const header of SECRET_HEADERS) text = text.replace(header, (_m, key: string) => `${key}<redacted>`);
  text = text.replace(SECRET_ASSIGNMENT, (_m, key: string) => `${key}<redacted>`);
  const lines = text
    .split(/\r?\n/)
    .map((l) => oneLine(l))
    .filter((l) => l !== '');
  let shown = '';
  for (let i = lines.length - 1; i >= 0; i--) {
    const next = shown === '' ? lines[i]! : `${lines[i]!} | ${shown}`;
    if (next.length > EXEC_STDERR_SHOWN_CHARS) {
      if (shown === '') shown = `…${lines[i]!.slice(-EXEC_STDERR_SHOWN_CHARS)}`;
      else shown = `… | ${shown}`;
      break;
    }
    shown = next;
  }
  return shown;
}

/** The last `window` characters of `text` at most, from the start of a line (or, within one long line, after a blank). */
function endOf(text: string, window: number): string {
  if (text.length <= window) return text;
  let start = text.length - window;
  if (text[start - 1] !== '\n') {
    const newline = text.indexOf('\n', start);
    if (newline >= 0) start = newline + 1;
    else {
      const blank = text.slice(start).search(/\s/);
      start = blank < 0 ? text.length : start + blank + 1;
    }
  }
  return `…\n${text.slice(start)}`;
}

function oneLine(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ').trim();
}

/** An apiVersion the plugin returned, quoted only when it has an apiVersion's shape (anything else could be a credential). */
function describeVersion(value: unknown): string {
  if (value === undefined) return 'no apiVersion';
  return typeof value === 'string' && /^[a-z0-9.-]{1,100}\/[a-z0-9]{1,20}$/.test(value) ? `apiVersion ${value}` : 'another apiVersion';
}
