import type { KubeConfig } from '@kubernetes/client-node';
import { SECRET_NAME_WORDS, execConfigSecrets } from '../internal.ts';

/** Shorter values are not scrubbed: replacing every `ab` in a message would garble it and hide nothing. */
const MIN_SECRET_LENGTH = 4;

/**
 * Removes known secret values from text before it is printed: every line the
 * CLI writes to stderr goes through one of these. The values come from the
 * kubeconfig (tokens, passwords, client keys and certificates, auth-provider
 * settings, an exec plugin's secret-named env and flag values and token-like
 * values: `execConfigSecrets`) and from sink URLs (Basic-auth credentials), in
 * the forms a message could quote them.
 */
export class SecretScrubber {
  private readonly secrets = new Set<string>();
  private longestFirst: string[] = [];

  add(value: unknown): void {
    if (typeof value !== 'string') return;
    const trimmed = value.trim();
    if (trimmed.length < MIN_SECRET_LENGTH || this.secrets.has(trimmed)) return;
    this.secrets.add(trimmed);
    // Longest first: a secret that contains another is replaced whole.
    this.longestFirst = [...this.secrets].sort((a, b) => b.length - a.length);
  }

  /** The text with every known secret replaced by `<redacted>`. */
  scrub(text: string): string {
    let out = text;
    for (const secret of this.longestFirst) if (out.includes(secret)) out = out.split(secret).join('<redacted>');
    return out;
  }
}

/**
 * Every value in a loaded kubeconfig that must not be printed, in the forms a
 * message could show it: as written, base64-decoded (key and certificate
 * data), as a Basic `Authorization` value (user name and password), and the
 * user info of a server URL.
 */
export function kubeConfigSecrets(kc: KubeConfig): string[] {
  const out: string[] = [];
  for (const user of kc.getUsers()) {
    out.push(...[user.token, user.password, user.keyData, user.certData].filter((v): v is string => typeof v === 'string'));
    for (const data of [user.keyData, user.certData]) if (typeof data === 'string') out.push(...decodedLines(data));
    if (user.username !== undefined && user.password !== undefined)
      out.push(Buffer.from(`${user.username}:${user.password}`, 'utf8').toString('base64'));
    // A token file's path is no secret (client-node's in-cluster form of it, and kubectl's `tokenFile`).
    const { tokenFile: _path, ...providerConfig } = (user.authProvider?.config ?? {}) as Record<string, unknown>;
    out.push(...stringLeaves(providerConfig));
    // An exec plugin's secret-named env and flag values and token-like values, as execAuth.ts's knownSecrets (one rule).
    const { command, args, env } = (user.exec ?? {}) as { command?: unknown; args?: unknown; env?: unknown };
    out.push(...execConfigSecrets(command, Array.isArray(args) ? args : [], Array.isArray(env) ? env : []));
  }
  for (const cluster of kc.getClusters()) {
    try {
      const url = new URL(cluster.server);
      out.push(url.password, decodeURIComponentSafe(url.password));
    } catch {
      // Not a URL (messages never print it whole, see displayServer): its user info, if it looks like it has some.
      const password = /^[a-z][a-z0-9+.-]*:\/\/[^:/@]*:([^@/]*)@/i.exec(cluster.server)?.[1];
      if (password) out.push(password, decodeURIComponentSafe(password));
    }
  }
  return out.filter((v) => v.length >= MIN_SECRET_LENGTH);
}

/**
 * Keys whose values a kubeconfig holds secrets in (user entries, auth-provider config, exec env): the names the exec
 * plugin's stderr scrubber redacts too (one list, `SECRET_NAME_WORDS`), and, in a kubeconfig, an exec env's `value`
 * and certificate data.
 */
const SECRET_KEY = new RegExp(`${SECRET_NAME_WORDS}|certificate-data|value`, 'i');
/** Keys that name a file: a path is no secret (the file's contents may be), and a message about the file must say which. */
const PATH_KEY = /^(certificate-authority|client-certificate|client-key|tokenFile|token-file)$/;

/**
 * The values of secret-looking keys in kubeconfig text that may not parse
 * (YAML or JSON): `token: "…"`, `"password":"…"`, an exec env's `value: …`.
 * A net under {@link parseErrorMessage}, for a message that quotes a value.
 */
export function textSecrets(text: string): string[] {
  const out: string[] = [];
  const pair = /["']?([A-Za-z0-9_-]+)["']?[ \t]*:[ \t]*("(?:[^"\\\n]|\\.)*"|'[^'\n]*'|[^\s,{}[\]#]+)/g;
  for (const match of text.matchAll(pair)) {
    if (!SECRET_KEY.test(match[1] ?? '') || PATH_KEY.test(match[1] ?? '')) continue;
    const raw = match[2] ?? '';
    const value = raw.startsWith('"') || raw.startsWith("'") ? raw.slice(1, -1) : raw;
    out.push(value, raw);
  }
  return out.filter((v) => v.length >= MIN_SECRET_LENGTH);
}

/** Words a kubeconfig is made of: they may stay in a parse error's message. */
const STRUCTURE = new Set(
  (
    'apiVersion kind Config clusters cluster server certificate-authority certificate-authority-data insecure-skip-tls-verify tls-server-name ' +
    'proxy-url disable-compression users user client-certificate client-certificate-data client-key client-key-data token tokenFile ' +
    'username password auth-provider config exec command args env name value contexts context namespace current-context preferences ' +
    'extensions extension interactiveMode provideClusterInfo installHint as as-groups true false null'
  ).split(' '),
);

/**
 * A kubeconfig parse error, fit to print: the parser's first line only (YAML
 * parsers append a snippet of the file, secrets and all), with every word the
 * file holds, other than a kubeconfig's own keys, replaced by `…`. What is
 * left says what is wrong and where (`deficient indentation (12:1)`).
 */
export function parseErrorMessage(message: string, fileText: string): string {
  const first = message.split('\n')[0]?.trim() ?? '';
  const words = new Set(fileText.split(/[\s:,{}[\]"'#&*!|>=()]+/).filter((w) => w.length >= MIN_SECRET_LENGTH && !STRUCTURE.has(w)));
  let out = first;
  for (const word of [...words].sort((a, b) => b.length - a.length)) if (out.includes(word)) out = out.split(word).join('…');
  return out;
}

function stringLeaves(value: unknown, depth = 0): string[] {
  if (typeof value === 'string') return [value];
  if (depth > 8 || typeof value !== 'object' || value === null) return [];
  return Object.values(value).flatMap((v) => stringLeaves(v, depth + 1));
}

/** A base64 value decoded, line by line (a PEM's lines), for messages that quote the decoded form. */
function decodedLines(data: string): string[] {
  const decoded = Buffer.from(data, 'base64').toString('utf8');
  return [decoded, ...decoded.split('\n').filter((line) => line.length >= 16 && !line.startsWith('-----'))];
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
