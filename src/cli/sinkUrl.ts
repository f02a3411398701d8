/**
 * Sink URLs, checked before anything else runs. Kept free of imports so the
 * CLI can refuse a bad flag before loading the Kubernetes client.
 */

/** Where a sink posts, and the only part of it that is ever printed. */
export interface SinkTarget {
  /** The URL to POST to, without userinfo. Never printed: paths and queries hold tokens (Slack's do). */
  readonly url: string;
  /** `https://hooks.example.com`: what messages show. */
  readonly origin: string;
  /** `Authorization` from the URL's userinfo, if it had any. */
  readonly headers: Readonly<Record<string, string>>;
}

export type SinkUrlResult = { readonly ok: true; readonly target: SinkTarget } | { readonly ok: false; readonly error: string };

/**
 * Parses a `--webhook`/`--slack` URL. Userinfo (`user:pass@`) becomes a Basic
 * `Authorization` header, as curl does; fetch would refuse the URL outright.
 * Error messages never repeat the URL, which may hold a password.
 */
export function parseSinkUrl(flag: string, raw: string): SinkUrlResult {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, error: `${flag} needs an absolute http:// or https:// URL; the value given is not a URL` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { ok: false, error: `${flag} needs an http:// or https:// URL, not ${url.protocol}` };
  if (!url.hostname) return { ok: false, error: `${flag} needs a URL with a host` };
  const headers: Record<string, string> = {};
  if (url.username || url.password) {
    let user: string;
    let password: string;
    try {
      user = decodeURIComponent(url.username);
      password = decodeURIComponent(url.password);
    } catch {
      return { ok: false, error: `${flag}: the user name or password in the URL is not valid percent-encoding` };
    }
    headers['authorization'] = `Basic ${Buffer.from(`${user}:${password}`, 'utf8').toString('base64')}`;
    url.username = '';
    url.password = '';
  }
  return { ok: true, target: { url: url.toString(), origin: url.origin, headers } };
}
