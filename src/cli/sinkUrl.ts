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

/**
 * The ports fetch blocks (https://fetch.spec.whatwg.org/#bad-port): a request
 * to one fails at once, every time, so it is refused at start instead of retried forever.
 */
export const BAD_PORTS: ReadonlySet<string> = new Set(
  (
    '1 7 9 11 13 15 17 19 20 21 22 23 25 37 42 43 53 69 77 79 87 95 101 102 103 104 109 110 111 113 115 117 119 123 135 137 139 143 161 179 ' +
    '389 427 465 512 513 514 515 526 530 531 532 540 548 554 556 563 587 601 636 989 990 993 995 1719 1720 1723 2049 3659 4045 4190 5060 ' +
    '5061 6000 6566 6665 6666 6667 6668 6669 6679 6697 10080'
  ).split(' '),
);

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
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return { ok: false, error: `${flag} needs an http:// or https:// URL, not ${url.protocol}` };
  if (!url.hostname) return { ok: false, error: `${flag} needs a URL with a host` };
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  if (BAD_PORTS.has(port)) {
    const why = 'is one that fetch refuses to connect to (a "bad port" in the WHATWG Fetch standard, kept for other protocols)';
    return { ok: false, error: `${flag}: port ${port} ${why}; use another port` };
  }
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

/**
 * What messages call each sink of one flag: `webhook https://host` (the origin only: paths and queries hold
 * tokens), or, when two of them share an origin, `webhook #2 https://host` (its place among that flag's URLs).
 */
export function sinkLabels(kind: string, targets: readonly SinkTarget[]): string[] {
  return targets.map((target, i) =>
    targets.some((other, j) => j !== i && other.origin === target.origin)
      ? `${kind} #${i + 1} ${target.origin}`
      : `${kind} ${target.origin}`,
  );
}
