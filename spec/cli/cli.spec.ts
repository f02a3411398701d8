/**
 * The bin as users run it: a child process against one TLS emulator (with a
 * bearer token), asserting stdout, stderr and the exit code. Every wait is for
 * a line or a request, never a fixed sleep.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApiServer, type ApiServer } from '../../src/testing/index.ts';

const NODE = new URL('../../node_modules/.bin/node', import.meta.url).pathname;
const MAIN = new URL('../../src/cli/main.ts', import.meta.url).pathname;

/** A running CLI: its output so far, line by line, and ways to wait for it. */
interface Cli {
  readonly proc: ChildProcessWithoutNullStreams;
  readonly out: string[];
  readonly err: string[];
  /** Resolves with the first line (present or future) of `stream` matching `pattern`. */
  line(stream: 'out' | 'err', pattern: RegExp, timeoutMs?: number): Promise<string>;
  readonly exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** stdout and stderr as received, whole (control characters and all). */
  raw(): string;
}

const running = new Set<ChildProcessWithoutNullStreams>();

function cli(args: string[], env: NodeJS.ProcessEnv = {}): Cli {
  const proc = spawn(NODE, [MAIN, ...args], { env: { ...process.env, ...env }, stdio: 'pipe' });
  running.add(proc);
  const out: string[] = [];
  const err: string[] = [];
  let raw = '';
  const waiters: { stream: 'out' | 'err'; pattern: RegExp; resolve: (line: string) => void }[] = [];
  const feed = (stream: 'out' | 'err', lines: string[]) => {
    let rest = '';
    return (chunk: Buffer) => {
      raw += chunk.toString('utf8');
      const parts = (rest + chunk.toString('utf8')).split('\n');
      rest = parts.pop() ?? '';
      for (const line of parts) {
        lines.push(line);
        for (const w of [...waiters]) {
          if (w.stream === stream && w.pattern.test(line)) {
            waiters.splice(waiters.indexOf(w), 1);
            w.resolve(line);
          }
        }
      }
    };
  };
  proc.stdout.on('data', feed('out', out));
  proc.stderr.on('data', feed('err', err));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.on('close', (code, signal) => {
      running.delete(proc);
      resolve({ code, signal });
    }),
  );
  return {
    proc,
    out,
    err,
    exit,
    raw: () => raw,
    line: (stream, pattern, timeoutMs = 15_000) => {
      const seen = (stream === 'out' ? out : err).find((l) => pattern.test(l));
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${stream} line matching ${pattern}; stdout:\n${out.join('\n')}\nstderr:\n${err.join('\n')}`)), timeoutMs);
        waiters.push({ stream, pattern, resolve: (l) => (clearTimeout(timer), resolve(l)) });
        void exit.then(() => setImmediate(() => reject(new Error(`exited before a ${stream} line matching ${pattern}; stdout:\n${out.join('\n')}\nstderr:\n${err.join('\n')}`))));
      });
    },
  };
}

/** A local HTTP receiver on 127.0.0.1 whose answer each test decides. */
interface Receiver {
  readonly url: string;
  readonly requests: { headers: http.IncomingHttpHeaders; url: string; body: string }[];
  /** Resolves once `n` requests have arrived. */
  received(n: number): Promise<void>;
  close(): Promise<void>;
}

async function receiver(answer: (req: http.IncomingMessage, res: http.ServerResponse) => void = (_q, s) => void s.writeHead(204).end()): Promise<Receiver> {
  const requests: Receiver['requests'] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      requests.push({ headers: req.headers, url: req.url ?? '', body: Buffer.concat(chunks).toString('utf8') });
      for (const w of waiters.filter((w) => requests.length >= w.n)) w.resolve();
      answer(req, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    received: (n) => (requests.length >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve }))),
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

async function until(check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** No stack trace, no Node internals. */
function expectNoStack(text: string): void {
  expect(text).not.toMatch(/\n\s+at |node:internal|TypeError|RangeError/);
}

const SYNCED = /^synced \d+ resources?, \d+ objects? in \d+ ms/;

let api: ApiServer;
let kubeconfig: string;

beforeAll(async () => {
  api = await startApiServer({ tls: true, token: 'emulator-token', bookmarkIntervalMs: 200 });
  const dir = mkdtempSync(join(tmpdir(), 'rx-informer-cli-'));
  kubeconfig = join(dir, 'config');
  writeFileSync(kubeconfig, api.kubeConfig.exportConfig());
});

afterAll(async () => {
  for (const proc of running) proc.kill('SIGKILL');
  await api.close();
});

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

describe('rx-informer (the bin, against a TLS emulator)', () => {
  it('never shows Secret values: pretty output, JSON output, webhook and Slack bodies; --show-secret-values opts out with a warning', async () => {
    const secrets = ['hunter2', 'correct-horse', 'tok3n-value', 'applied-pw'];
    const hook = await receiver();
    const slack = await receiver((_q, s) => void s.writeHead(200).end('ok'));
    const pretty = cli(['watch', 'secrets', '-n', 'vault', '--kubeconfig', kubeconfig, '--slack', `${slack.url}/services/T0/B0/XYZ`]);
    const json = cli(['watch', 'secret', '-n', 'vault', '-o', 'json', '--utc', '--kubeconfig', kubeconfig, '--webhook', `${hook.url}/hook`], { TZ: 'Asia/Kolkata' });
    const clear = cli(['watch', 'secrets', '-n', 'vault', '-w', '--kubeconfig', kubeconfig, '--show-secret-values']);
    try {
      await Promise.all([pretty.line('err', SYNCED), json.line('err', SYNCED), clear.line('err', SYNCED)]);
      const lastApplied = JSON.stringify({ apiVersion: 'v1', kind: 'Secret', data: { password: b64('applied-pw') }, stringData: { plain: 'applied-pw' } });
      api.create('secrets', {
        metadata: { name: 'db', namespace: 'vault', annotations: { 'kubectl.kubernetes.io/last-applied-configuration': lastApplied } },
        data: { password: b64('hunter2') },
      });
      api.patch('secrets', 'vault', 'db', { data: { password: b64('correct-horse'), token: b64('tok3n-value') } });
      api.patch('secrets', 'vault', 'db', { data: { token: null }, metadata: { annotations: { 'kubectl.kubernetes.io/last-applied-configuration': lastApplied.replace('applied', 'other') } } });

      await pretty.line('out', /UPDATED secrets vault\/db .*token: -<redacted>/);
      expect(pretty.out.map((l) => l.replace(/^\d\d:\d\d:\d\d /, ''))).toEqual([
        'ADDED   secrets vault/db',
        'UPDATED secrets vault/db  data.password: <changed>, data.token: +<redacted>',
        'UPDATED secrets vault/db  metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"]: <changed>, data.token: -<redacted>',
      ]);
      const records = await (async () => {
        await json.line('out', /"path":"data\.token","old"/);
        return json.out.map((l) => JSON.parse(l) as { type: string; object?: { data?: Record<string, string> }; diff?: { path: string; old?: string; new?: string }[] });
      })();
      // The keyed hash: a value's redaction is stable within a run, so changes can be compared.
      const added = records[0]?.object?.data?.password;
      expect(added).toMatch(/^<redacted:[0-9a-f]{12}>$/);
      expect(records.map((r) => (r as { time?: string }).time)).toEqual(Array(3).fill(expect.stringMatching(/T\d\d:\d\d:\d\d\.\d{3}Z$/)));
      expect(records[1]?.diff?.[0]).toEqual({ path: 'data.password', old: added, new: expect.stringMatching(/^<redacted:[0-9a-f]{12}>$/) });

      await hook.received(3);
      await slack.received(1);
      await clear.line('out', /UPDATED secrets vault\/db .*data\.token: -/);
      const slackText = () => slack.requests.map((r) => (JSON.parse(r.body) as { text: string }).text).join('\n');
      await (async () => {
        while (slackText().split('\n').length < 3) await slack.received(slack.requests.length + 1);
      })();
      expect(slackText()).toMatch(/UPDATED secrets vault\/db {2}data\.password: &lt;changed&gt;/);
      const everything = [pretty.raw(), json.raw(), ...hook.requests.map((r) => r.body), ...slack.requests.map((r) => r.body)].join('\n');
      for (const secret of secrets) {
        expect(everything).not.toContain(secret);
        expect(everything).not.toContain(b64(secret));
      }
      expect(clear.err).toContain('warning: --show-secret-values: Secret values will be printed and sent to every sink in clear');
      expect(clear.out.join('\n')).toContain(JSON.stringify(b64('hunter2')));
    } finally {
      for (const c of [pretty, json, clear]) c.proc.kill('SIGINT');
      const exits = await Promise.all([pretty.exit, json.exit, clear.exit]);
      expect(exits.map((e) => e.code)).toEqual([130, 130, 130]);
      expect(pretty.err.at(-1), pretty.err.join('\n')).toBe(`slack ${slack.url}: 3 events delivered`);
      await hook.close();
      await slack.close();
    }
  });

  it('bad input is one line and exit 2 before any request: URLs (never echoed), flags, namespaces', async () => {
    const cases: [string[], RegExp][] = [
      [['watch', 'pods', '--webhook', 'not-a-url'], /^error: --webhook needs an absolute http:\/\/ or https:\/\/ URL; the value given is not a URL$/],
      [['watch', 'pods', '--slack', 'ftp://user:pa55word@example.com/x'], /^error: --slack needs an http:\/\/ or https:\/\/ URL, not ftp:$/],
      [['watch', 'pods', '-n', 'a', '-A'], /^error: -n and -A\/--all-namespaces contradict each other/],
      [['watch', 'pods', '-n', 'Bad_NS'], /^error: -n: "Bad_NS" is not a namespace name/],
      [['watch', '--colour'], /^error: Unknown option '--colour'/],
      [['watch'], /^error: name at least one resource/],
    ];
    const before = api.requests.length;
    const results = await Promise.all(
      cases.map(async ([args]) => {
        const c = cli([...args, '--kubeconfig', kubeconfig]);
        return { exit: await c.exit, err: c.err };
      }),
    );
    results.forEach(({ exit, err }, i) => {
      expect(exit.code).toBe(2);
      expect(err[0]).toMatch(cases[i]![1]);
      expectNoStack(err.join('\n'));
      expect(err.join('\n')).not.toContain('pa55word');
    });
    expect(api.requests.length).toBe(before);
    const version = cli(['--version']);
    expect((await version.exit).code).toBe(0);
    expect(version.out).toEqual([expect.stringMatching(/^rx-informer \d+\.\d+\.\d+/)]);
  });

  it('a permanent error exits 1 with one sentence: a bad selector (400), 403 on the only resource, a bad kubeconfig or context', async () => {
    const forbidden = api.faults.add({
      match: { resource: 'leases' },
      times: Infinity,
      fault: { type: 'status', code: 403, reason: 'Forbidden', message: 'leases.coordination.k8s.io is forbidden: User "ci" cannot list resource "leases"' },
    });
    try {
      const runs = [
        cli(['watch', 'pods', '-l', 'app in (web', '--kubeconfig', kubeconfig]),
        cli(['watch', 'leases', '--kubeconfig', kubeconfig]),
        cli(['watch', 'pods', '--kubeconfig', `${kubeconfig}-missing`]),
        cli(['watch', 'pods', '--kubeconfig', kubeconfig, '--context', 'nope']),
      ];
      const exits = await Promise.all(runs.map((r) => r.exit));
      expect(exits.map((e) => e.code)).toEqual([1, 1, 1, 1]);
      expect(runs[2]!.err).toEqual([expect.stringMatching(/^error: cannot load kubeconfig .*-missing/)]);
      expect(runs[3]!.err).toEqual(['error: the kubeconfig has no context "nope" (it has: emulator)']);
      expect(runs[0]!.err).toEqual([expect.stringMatching(/^error: cannot watch pods: the server rejected the request \(400 Bad Request\): /)]);
      expect(runs[1]!.err).toEqual(['error: cannot watch leases.coordination.k8s.io: forbidden (403): leases.coordination.k8s.io is forbidden: User "ci" cannot list resource "leases"']);
    } finally {
      forbidden.remove();
    }
  });

  it('several namespaces (-n a,b), local time by default (TZ honoured); a closed stdout (| head -1) then ends quietly with 0', async () => {
    const c = cli(['watch', 'configmaps', '-n', 'ns-a,ns-b', '-o', 'json', '--kubeconfig', kubeconfig], { TZ: 'Asia/Kolkata' });
    await c.line('err', SYNCED);
    expect(c.err).toEqual(expect.arrayContaining(['synced configmaps in ns-a: 0 objects', 'synced configmaps in ns-b: 0 objects', expect.stringMatching(/^synced 2 resources, 0 objects in/)]));
    for (const ns of ['ns-c', 'ns-a', 'ns-b']) api.create('configmaps', { metadata: { name: `cm-${ns}`, namespace: ns } });
    // Order holds per informer, not across them: wait for both watched ones; ns-c was created first.
    await Promise.all([c.line('out', /cm-ns-a/), c.line('out', /cm-ns-b/)]);
    expect(c.out.map((l) => (JSON.parse(l) as { name: string }).name).sort()).toEqual(['cm-ns-a', 'cm-ns-b']);
    expect((JSON.parse(c.out[0]!) as { time: string }).time).toMatch(/T\d\d:\d\d:\d\d\.\d{3}\+05:30$/);
    c.proc.stdout.destroy();
    for (let i = 0; i < 3; i++) api.create('configmaps', { metadata: { name: `more-${i}`, namespace: 'ns-a' } });
    expect((await c.exit).code).toBe(0);
    expect(c.err.filter((l) => !l.startsWith('synced '))).toEqual([]);
  });

  it('Ctrl-C before sync exits 130 too', async () => {
    const slow = api.faults.add({ match: { resource: 'replicasets', watch: false }, times: Infinity, fault: { type: 'delay', ms: 60_000 } });
    try {
      const c = cli(['watch', 'replicasets', '-A', '--kubeconfig', kubeconfig]);
      // The list is held by the fault: the CLI is past discovery and waiting for its first sync.
      await until(() => slow.hits > 0);
      c.proc.kill('SIGINT');
      expect((await c.exit).code).toBe(130);
      expect(c.err).toEqual([]);
    } finally {
      slow.remove();
    }
  });

  it('webhook: userinfo becomes an Authorization header, a redirect is refused, only the origin is ever printed; SIGTERM exits 143', async () => {
    const elsewhere = await receiver();
    const hook = await receiver((_q, s) => void s.writeHead(307, { location: `${elsewhere.url}/steal` }).end());
    const url = `${hook.url.replace('http://', 'http://alice:s3cret-pass@')}/private-path?token=query-token`;
    const c = cli(['watch', 'configmaps', '-n', 'redir', '--kubeconfig', kubeconfig, '--webhook', url]);
    try {
      await c.line('err', SYNCED);
      api.create('configmaps', { metadata: { name: 'x', namespace: 'redir' }, data: { k: 'v' } });
      await hook.received(1);
      expect(hook.requests[0]!.headers.authorization).toBe(`Basic ${b64('alice:s3cret-pass')}`);
      expect(hook.requests[0]!.url).toBe('/private-path?token=query-token');
      await c.line('err', /redirect refused/);
    } finally {
      c.proc.kill('SIGTERM');
      expect((await c.exit).code).toBe(143);
      expect(elsewhere.requests).toEqual([]);
      expect(c.err, c.err.join('\n')).toContain(`! webhook ${hook.url}: 1 failed attempt (last: HTTP 307 redirect refused (not followed); 1 event given up); 0 waiting`);
      expect(c.err.at(-1)).toBe(`webhook ${hook.url}: 0 events delivered, 1 not (1 refused by the receiver)`);
      for (const hidden of ['s3cret-pass', 'alice', 'private-path', 'query-token']) expect(c.raw()).not.toContain(hidden);
      await hook.close();
      await elsewhere.close();
    }
  });

  it('webhook: a dead endpoint is reported once, not per event; SIGINT flushes what it can and says what was lost', async () => {
    const gone = await receiver();
    const dead = gone.url;
    await gone.close();
    const held: http.ServerResponse[] = [];
    let holding = true;
    const slow = await receiver((_q, s) => (holding ? held.push(s) : s.writeHead(204).end()));
    const c = cli(['watch', 'configmaps', '-n', 'flush', '--kubeconfig', kubeconfig, '--webhook', dead, '--webhook', slow.url]);
    await c.line('err', SYNCED);
    for (let i = 0; i < 5; i++) api.create('configmaps', { metadata: { name: `cm-${i}`, namespace: 'flush' } });
    await c.line('out', /cm-4/);
    await c.line('err', new RegExp(`^! webhook ${dead}: 1 failed attempt`));
    await slow.received(1);
    // The slow receiver holds its first request: four events wait behind it when Ctrl-C comes.
    c.proc.kill('SIGINT');
    holding = false;
    for (const res of held) res.writeHead(204).end();
    expect((await c.exit).code).toBe(130);
    expect(c.err).toContain(`webhook ${slow.url}: 5 events delivered`);
    expect(c.err).toContain(`webhook ${dead}: 0 events delivered, 5 not (5 unsent at exit)`);
    expect(c.err.filter((l) => l.startsWith(`! webhook ${dead}`)).length).toBeLessThanOrEqual(2);
    expect(slow.requests.map((r) => (JSON.parse(r.body) as { name: string }).name)).toEqual(['cm-0', 'cm-1', 'cm-2', 'cm-3', 'cm-4']);
    await slow.close();
  });

  it('on Node.js older than 22.19 the bin says so in one line, before importing anything (even for --help)', async () => {
    // The bin as built: main.ts alone, transpiled (cli.js is never reached on an old Node).
    const ts = (await import('typescript')).default;
    const dir = mkdtempSync(join(tmpdir(), 'rx-informer-bin-'));
    writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
    const source = readFileSync(MAIN, 'utf8');
    const { outputText } = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2023, rewriteRelativeImportExtensions: true } });
    writeFileSync(join(dir, 'main.js'), outputText);
    // Always: this Node, told it is 20.11.1. Also, where the machine has one (as CI images and this one do), a real old Node.
    writeFileSync(join(dir, 'pretend-old.mjs'), "Object.defineProperty(process.versions, 'node', { value: '20.11.1' });\n");
    const runs: [string, string[], string][] = [[NODE, ['--import', join(dir, 'pretend-old.mjs'), join(dir, 'main.js'), '--help'], '20.11.1']];
    for (const candidate of ['/usr/bin/node', '/usr/local/bin/node']) {
      if (!existsSync(candidate)) continue;
      const version = execFileSync(candidate, ['--version'], { encoding: 'utf8' }).trim().slice(1);
      const [major = 0, minor = 0] = version.split('.').map(Number);
      if (major < 22 || (major === 22 && minor < 19)) runs.push([candidate, [join(dir, 'main.js'), '--help'], version]);
    }
    for (const [node, args, version] of runs) {
      const proc = spawn(node, args, { stdio: 'pipe' });
      let out = '';
      let err = '';
      proc.stdout.on('data', (c: Buffer) => (out += c.toString()));
      proc.stderr.on('data', (c: Buffer) => (err += c.toString()));
      const code = await new Promise<number | null>((resolve) => proc.on('close', resolve));
      expect({ code, out, err }).toEqual({ code: 1, out: '', err: `rx-informer needs Node.js 22.19 or newer; this is Node.js ${version}.\n` });
    }
  });
});
