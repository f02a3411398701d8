/**
 * The bin as users run it: a child process against one TLS emulator (with a
 * bearer token), asserting stdout, stderr and the exit code. Every wait is for
 * a line or a request, never a fixed sleep.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import type * as http from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { MAIN, NODE, cli, cliRuns, expectNoStack, killAll, receiver, until } from './support.ts';

const SYNCED = /^synced \d+ resources?, \d+ objects? in \d+ ms/;

let api: ApiServer;
let kubeconfig: string;
/** What the CLI says on stderr once it has read the kubeconfig, before its first request. */
let CONNECTING: string;

beforeAll(async () => {
  api = await startApiServer({ tls: true, token: 'emulator-token', bookmarkIntervalMs: 200 });
  const dir = mkdtempSync(join(tmpdir(), 'rx-informer-cli-'));
  kubeconfig = join(dir, 'config');
  writeFileSync(kubeconfig, api.kubeConfig.exportConfig());
  CONNECTING = `connecting to ${new URL(api.url).origin} (context emulator) …`;
});

afterAll(async () => {
  killAll();
  await api.close();
});

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

describe('rx-informer (the bin, against a TLS emulator)', () => {
  it('never shows Secret values: pretty output, JSON output, webhook and Slack bodies; --show-secret-values opts out with a warning', async () => {
    const secrets = ['hunter2', 'correct-horse', 'tok3n-value', 'applied-pw'];
    const hook = await receiver();
    const slack = await receiver((_q, s) => void s.writeHead(200).end('ok'));
    const pretty = cli(['watch', 'secrets', '-n', 'vault', '--kubeconfig', kubeconfig, '--slack', `${slack.url}/services/T0/B0/XYZ`]);
    const json = cli(
      ['watch', 'secret', '-n', 'vault', '-o', 'json', '--utc', '--kubeconfig', kubeconfig, '--webhook', `${hook.url}/hook`],
      { TZ: 'Asia/Kolkata' },
    );
    const clear = cli(['watch', 'secrets', '-n', 'vault', '-w', '--kubeconfig', kubeconfig, '--show-secret-values']);
    try {
      await Promise.all([pretty.line('err', SYNCED), json.line('err', SYNCED), clear.line('err', SYNCED)]);
      const lastApplied = JSON.stringify({
        apiVersion: 'v1',
        kind: 'Secret',
        data: { password: b64('applied-pw') },
        stringData: { plain: 'applied-pw' },
      });
      api.create('secrets', {
        metadata: { name: 'db', namespace: 'vault', annotations: { 'kubectl.kubernetes.io/last-applied-configuration': lastApplied } },
        data: { password: b64('hunter2') },
      });
      api.patch('secrets', 'vault', 'db', { data: { password: b64('correct-horse'), token: b64('tok3n-value') } });
      api.patch('secrets', 'vault', 'db', {
        data: { token: null },
        metadata: { annotations: { 'kubectl.kubernetes.io/last-applied-configuration': lastApplied.replace('applied', 'other') } },
      });

      await pretty.line('out', /UPDATED secrets vault\/db .*token: -<redacted>/);
      expect(pretty.out.map((l) => l.replace(/^\d\d:\d\d:\d\d /, ''))).toEqual([
        'ADDED   secrets vault/db',
        'UPDATED secrets vault/db  data.password: <changed>, data.token: +<redacted>',
        'UPDATED secrets vault/db  metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"]: <changed>, data.token: -<redacted>',
      ]);
      const records = await (async () => {
        await json.line('out', /"path":"data\.token","old"/);
        return json.out.map(
          (l) =>
            JSON.parse(l) as {
              type: string;
              object?: { data?: Record<string, string> };
              diff?: { path: string; old?: string; new?: string }[];
            },
        );
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

  it('bad input is one line (in our words) and a pointer to --help, exit 2 before any request: URLs (never echoed), flags, namespaces, extra arguments', async () => {
    const cases: [string[], RegExp][] = [
      [
        ['watch', 'pods', '--webhook', 'not-a-url'],
        /^error: --webhook needs an absolute http:\/\/ or https:\/\/ URL; the value given is not a URL$/,
      ],
      [
        ['watch', 'pods', '--slack', 'ftp://user:pa55word@example.com/x'],
        /^error: --slack needs an http:\/\/ or https:\/\/ URL, not ftp:$/,
      ],
      [['watch', 'pods', '-n', 'a', '-A'], /^error: -n and -A\/--all-namespaces contradict each other/],
      [['watch', 'pods', '-n', 'Bad_NS'], /^error: -n: "Bad_NS" is not a namespace name/],
      [['watch', '--colour'], /^error: unknown option --colour$/],
      [['watch', 'pods', '--bogus=1'], /^error: unknown option --bogus$/],
      [['watch', 'pods', '--all=yes'], /^error: --all takes no value$/],
      // The test appends --kubeconfig FILE: the flag before it takes no value from it.
      [
        ['watch', 'pods', '--context'],
        /^error: --context needs a value \(to give one that starts with "-", write --context=--kubeconfig\)$/,
      ],
      [['watch', 'pods', '-n'], /^error: -n\/--namespace needs a value/],
      [['start', 'pods'], /^error: start takes no resource names \(it watches everything\); to watch some, use `rx-informer watch pods`$/],
      // kubectl's `pods --all` is every pod; ours is every resource, and `pods` was dropped unsaid (audit35).
      [
        ['watch', 'pods', '--all'],
        /^error: --all watches every resource that can be listed \(Secrets included\) and takes no resource names; to watch pods in all namespaces, use `rx-informer watch pods -A` \(all namespaces is the default\)$/,
      ],
      [['frob'], /^error: unknown command "frob"/],
      [
        ['watch', 'pods', '--webhook', 'http://127.0.0.1:6000/hook'],
        /^error: --webhook: port 6000 is one that fetch refuses to connect to/,
      ],
      [['watch', 'pods', '--slack', 'https://u:pa55word@127.0.0.1:1/x'], /^error: --slack: port 1 is one that fetch refuses to connect to/],
      [['watch'], /^error: name at least one resource/],
      [
        ['watch', 'pods', '--max-list-bytes', '1.5Gi'],
        /^error: --max-list-bytes: "1\.5Gi" is not a size \(a whole number of bytes, or with Ki, Mi or Gi: 512Mi\)$/,
      ],
      [['watch', 'pods', '--compression', 'br'], /^error: --compression must be gzip or none, not "br"$/],
    ];
    const before = api.requests.length;
    // One process for all of them (what is said before anything is done); the bin as a process below.
    const results = await cliRuns(cases.map(([args]) => [...args, '--kubeconfig', kubeconfig]));
    expect(results).toHaveLength(cases.length);
    results.forEach(({ code, err }, i) => {
      expect(code).toBe(2);
      // One line of what is wrong, one pointer to the help: not the whole help.
      expect(err).toEqual([expect.stringMatching(cases[i]![1]), 'run `rx-informer --help` for usage']);
      expectNoStack(err.join('\n'));
      expect(err.join('\n')).not.toContain('pa55word');
    });
    const bad = cli([...cases[0]![0], '--kubeconfig', kubeconfig]);
    const version = cli(['--version']);
    expect((await bad.exit).code).toBe(2);
    expect(bad.err).toEqual(results[0]!.err);
    expect(api.requests.length).toBe(before);
    expect((await version.exit).code).toBe(0);
    expect(version.out).toEqual([expect.stringMatching(/^rx-informer \d+\.\d+\.\d+/)]);
  });

  it('a permanent error exits 1 with one sentence: a bad selector (400), 403 on the only resource, a bad kubeconfig or context, an unknown CA', async () => {
    const forbidden = api.faults.add({
      match: { resource: 'leases' },
      times: Infinity,
      fault: {
        type: 'status',
        code: 403,
        reason: 'Forbidden',
        message: 'leases.coordination.k8s.io is forbidden: User "ci" cannot list resource "leases"',
      },
    });
    try {
      // The emulator's kubeconfig without its CA: the server's certificate is unknown.
      const config = JSON.parse(readFileSync(kubeconfig, 'utf8')) as { clusters: { cluster: Record<string, unknown> }[] };
      for (const { cluster } of config.clusters) delete cluster['certificate-authority-data'];
      const noCa = `${kubeconfig}-no-ca`;
      writeFileSync(noCa, JSON.stringify(config));
      const runs = [
        cli(['watch', 'pods', '-l', 'app in (web', '--kubeconfig', kubeconfig]),
        cli(['watch', 'leases', '--kubeconfig', kubeconfig]),
        cli(['watch', 'pods', '--kubeconfig', `${kubeconfig}-missing`]),
        cli(['watch', 'pods', '--kubeconfig', kubeconfig, '--context', 'nope']),
        cli(['watch', 'pods', '--kubeconfig', noCa]),
        cli(['watch', 'podz', '--kubeconfig', kubeconfig]),
      ];
      const exits = await Promise.all(runs.map((r) => r.exit));
      expect(exits.map((e) => e.code)).toEqual([1, 1, 1, 1, 1, 1]);
      // Once the kubeconfig is read, one line says where the CLI connects; a kubeconfig that does not load has none.
      expect(runs[4]!.err).toEqual([
        CONNECTING,
        expect.stringMatching(
          /^error: cannot trust the API server at https:\/\/127\.0\.0\.1:\d+ \(TLS certificate\): list \/api: the server's certificate is not trusted by the system CAs \(the kubeconfig names no certificate-authority for this cluster\): DEPTH_ZERO_SELF_SIGNED_CERT$/,
        ),
      ]);
      expect(runs[4]!.raw()).not.toContain('--use-system-ca');
      expect(runs[2]!.err).toEqual([expect.stringMatching(/^error: cannot load kubeconfig .*-missing/)]);
      expect(runs[3]!.err).toEqual(['error: the kubeconfig has no context "nope" (it has: emulator)']);
      expect(runs[0]!.err).toEqual([
        CONNECTING,
        expect.stringMatching(/^error: cannot watch pods: the server rejected the request \(400 Bad Request\): /),
      ]);
      // An unknown resource: exit 1 as before, with the one name close to it (kubectl gives no hint).
      expect(runs[5]!.err).toEqual([CONNECTING, `error: the server doesn't have a resource type "podz"; did you mean pods?`]);
      expect(runs[1]!.err).toEqual([
        CONNECTING,
        'error: cannot watch leases.coordination.k8s.io: forbidden (403): leases.coordination.k8s.io is forbidden: User "ci" cannot list resource "leases"',
      ]);
    } finally {
      forbidden.remove();
    }
  });

  it('several namespaces (-n a,b), local time by default (TZ honoured); a closed stdout (| head -1) then ends quietly with 0', async () => {
    const c = cli(['watch', 'configmaps', '-n', 'ns-a,ns-b', '-o', 'json', '--kubeconfig', kubeconfig], { TZ: 'Asia/Kolkata' });
    await c.line('err', SYNCED);
    expect(c.err).toEqual(
      expect.arrayContaining([
        'synced configmaps in ns-a: 0 objects',
        'synced configmaps in ns-b: 0 objects',
        expect.stringMatching(/^synced 1 resource, 0 objects in \d+ ms \(2 namespaces\); watching for changes/),
      ]),
    );
    for (const ns of ['ns-c', 'ns-a', 'ns-b']) api.create('configmaps', { metadata: { name: `cm-${ns}`, namespace: ns } });
    // Order holds per informer, not across them: wait for both watched ones; ns-c was created first.
    await Promise.all([c.line('out', /cm-ns-a/), c.line('out', /cm-ns-b/)]);
    expect(c.out.map((l) => (JSON.parse(l) as { name: string }).name).sort()).toEqual(['cm-ns-a', 'cm-ns-b']);
    expect((JSON.parse(c.out[0]!) as { time: string }).time).toMatch(/T\d\d:\d\d:\d\d\.\d{3}\+05:30$/);
    c.proc.stdout.destroy();
    for (let i = 0; i < 3; i++) api.create('configmaps', { metadata: { name: `more-${i}`, namespace: 'ns-a' } });
    expect((await c.exit).code).toBe(0);
    expect(c.err.filter((l) => !l.startsWith('synced '))).toEqual([CONNECTING]);
  });

  it('Ctrl-C before sync exits 130 too', async () => {
    const slow = api.faults.add({
      match: { resource: 'replicasets', watch: false },
      times: Infinity,
      fault: { type: 'delay', ms: 60_000 },
    });
    try {
      const c = cli(['watch', 'replicasets', '-A', '--kubeconfig', kubeconfig]);
      // The list is held by the fault: the CLI is past discovery and waiting for its first sync.
      await until(() => slow.hits > 0);
      c.proc.kill('SIGINT');
      expect((await c.exit).code).toBe(130);
      expect(c.err).toEqual([CONNECTING]);
    } finally {
      slow.remove();
    }
  });

  it('a server that does not answer: the first line says where the CLI connects, not silence until the timer gives up', async () => {
    const never = join(dirname(kubeconfig), 'never.jsonl');
    const silent = api.faults.add({ match: { path: '/api' }, times: Infinity, fault: { type: 'delay', ms: 600_000 } });
    try {
      const runs = [
        cli(['watch', 'pods', '--kubeconfig', kubeconfig, '-o', 'json']),
        cli(['record', 'pods', '-o', never, '--kubeconfig', kubeconfig]),
      ];
      // Said before the first request's answer (the discovery held by the fault), -o json too (stdout stays JSON only).
      await Promise.all(runs.map((c) => c.line('err', /^connecting to /)));
      for (const c of runs) c.proc.kill('SIGINT');
      for (const c of runs) {
        expect((await c.exit).code).toBe(130);
        expect(c.out).toEqual([]);
      }
      expect(runs[0]!.err).toEqual([CONNECTING]);
      // record stopped before discovery answered (it had been waiting for it, deaf to Ctrl-C): no file.
      expect(runs[1]!.err).toEqual([CONNECTING, `stopped before the server answered: ${never} not written`]);
      expect(existsSync(never)).toBe(false);
    } finally {
      silent.remove();
    }
  });

  it('webhook: userinfo becomes an Authorization header, a redirect is refused, only the origin is ever printed; SIGTERM exits 143', async () => {
    const elsewhere = await receiver();
    const hook = await receiver((_q, s) => void s.writeHead(307, { location: `${elsewhere.url}/steal` }).end());
    const url = `${hook.url.replace('http://', 'http://alice:s3cret-pass@')}/private-path?token=query-token`;
    const c = cli(['watch', 'configmaps', '-n', 'redir', '--kubeconfig', kubeconfig, '--webhook', url]);
    try {
      await c.line('err', SYNCED);
      // Credentials over http:// are sent as asked, with one warning that does not repeat them.
      expect(c.err[0]).toBe(
        `warning: --webhook ${hook.url}: the user name and password in the URL go over plain http://, readable by anyone on the way; use https://`,
      );
      api.create('configmaps', { metadata: { name: 'x', namespace: 'redir' }, data: { k: 'v' } });
      await hook.received(1);
      expect(hook.requests[0]!.headers.authorization).toBe(`Basic ${b64('alice:s3cret-pass')}`);
      expect(hook.requests[0]!.url).toBe('/private-path?token=query-token');
      await c.line('err', /redirect refused/);
    } finally {
      c.proc.kill('SIGTERM');
      expect((await c.exit).code).toBe(143);
      expect(elsewhere.requests).toEqual([]);
      expect(c.err, c.err.join('\n')).toContain(
        `! webhook ${hook.url}: 1 failed attempt (last: HTTP 307 redirect refused (not followed); 1 event given up); 0 waiting`,
      );
      expect(c.err.at(-1)).toBe(`webhook ${hook.url}: 0 events delivered, 1 not (1 refused by the receiver)`);
      for (const hidden of ['s3cret-pass', 'alice', 'private-path', 'query-token']) expect(c.raw()).not.toContain(hidden);
      await hook.close();
      await elsewhere.close();
    }
  });

  it('webhook: a dead endpoint is reported once, not per event; SIGINT flushes what it can and says what was lost', async () => {
    const held: http.ServerResponse[] = [];
    let holding = true;
    const slow = await receiver((_q, s) => (holding ? held.push(s) : s.writeHead(204).end()));
    // Closed only once the slow receiver has its port: it could otherwise be given the dead one's, just freed.
    const gone = await receiver();
    const dead = gone.url;
    await gone.close();
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

  it('webhook: a second Ctrl-C during the flush says what each sink did so far (queued counts as unsent), then exits 130', async () => {
    // audit35: it exited 130 at once, with no summary: what was never sent went unsaid.
    const held: http.ServerResponse[] = [];
    const slow = await receiver((_q, s) => void held.push(s));
    const c = cli(['watch', 'configmaps', '-n', 'flush2', '--kubeconfig', kubeconfig, '--webhook', slow.url]);
    await c.line('err', SYNCED);
    for (let i = 0; i < 5; i++) api.create('configmaps', { metadata: { name: `cm-${i}`, namespace: 'flush2' } });
    await c.line('out', /cm-4/);
    await slow.received(1);
    // The receiver holds its first request and every one after: five events wait when Ctrl-C comes.
    c.proc.kill('SIGINT');
    await c.line('err', /^delivering 5 queued events… \(Ctrl-C again to stop\)$/);
    c.proc.kill('SIGINT');
    expect((await c.exit).code).toBe(130);
    expect(c.err).toContain(`webhook ${slow.url}: 0 events delivered, 5 not (5 unsent at exit)`);
    for (const res of held) res.writeHead(204).end();
    await slow.close();
  });

  it('two webhooks to one origin are told apart (by their place among the --webhook flags), in problems and summaries', async () => {
    const hook = await receiver((q, s) => void s.writeHead(q.url === '/down' ? 503 : 204).end());
    const c = cli([
      'watch',
      'configmaps',
      '-n',
      'twins',
      '--kubeconfig',
      kubeconfig,
      '--webhook',
      `${hook.url}/up`,
      '--webhook',
      `${hook.url}/down`,
    ]);
    try {
      await c.line('err', SYNCED);
      api.create('configmaps', { metadata: { name: 'twin', namespace: 'twins' } });
      await c.line('err', new RegExp(`^! webhook #2 ${hook.url}: 1 failed attempt \\(last: HTTP 503\\)`));
      await until(() => hook.requests.some((r) => r.url === '/up'));
    } finally {
      c.proc.kill('SIGTERM');
      expect((await c.exit).code).toBe(143);
      await hook.close();
    }
    expect(c.err.slice(-2)).toEqual([
      `webhook #1 ${hook.url}: 1 event delivered`,
      `webhook #2 ${hook.url}: 0 events delivered, 1 not (1 unsent at exit)`,
    ]);
    for (const path of ['/up', '/down']) expect(c.raw()).not.toContain(`${hook.url}${path}`);
  });

  it('SIGHUP (the terminal went away) flushes the sinks as SIGTERM does, then exits 129', async () => {
    const held: http.ServerResponse[] = [];
    const hook = await receiver((_q, s) => held.push(s));
    const c = cli(['watch', 'configmaps', '-n', 'hup', '--kubeconfig', kubeconfig, '--webhook', hook.url]);
    try {
      await c.line('err', SYNCED);
      api.create('configmaps', { metadata: { name: 'before-hangup', namespace: 'hup' } });
      await hook.received(1);
      // The receiver holds the delivery: the flush has to wait for it.
      c.proc.kill('SIGHUP');
      for (const res of held) res.writeHead(204).end();
      expect(await c.exit).toEqual({ code: 129, signal: null });
      expect(c.err.at(-1)).toBe(`webhook ${hook.url}: 1 event delivered`);
    } finally {
      await hook.close();
    }
  });

  it('a long Retry-After is shown, so a wait of minutes does not look like a hang', async () => {
    const busy = api.faults.add({
      match: { resource: 'configmaps', namespace: 'busy', watch: true },
      times: 1,
      fault: { type: 'status', code: 429, retryAfterSeconds: 300 },
    });
    const c = cli(['watch', 'configmaps', '-n', 'busy', '--kubeconfig', kubeconfig]);
    try {
      await c.line('err', SYNCED);
      await c.line('err', /^! configmaps: TooManyRequests: .* \(the server asked to wait 300 s before retrying\)$/);
    } finally {
      busy.remove();
      c.proc.kill('SIGINT');
      expect((await c.exit).code).toBe(130);
    }
  });

  it('on Node.js older than 22.19 the bin says so in one line and how to get a newer one, before importing anything (even for --help)', async () => {
    // The bin as built: main.ts alone, transpiled (cli.js is never reached on an old Node).
    const ts = (await import('typescript')).default;
    const dir = mkdtempSync(join(tmpdir(), 'rx-informer-bin-'));
    writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
    const source = readFileSync(MAIN, 'utf8');
    const { outputText } = ts.transpileModule(source, {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2023, rewriteRelativeImportExtensions: true },
    });
    writeFileSync(join(dir, 'main.js'), outputText);
    // Always: this Node, told it is 20.11.1. Also, where the machine has one (as CI images and this one do), a real old Node.
    writeFileSync(join(dir, 'pretend-old.mjs'), "Object.defineProperty(process.versions, 'node', { value: '20.11.1' });\n");
    const runs: [string, string[], string][] = [
      [NODE, ['--import', join(dir, 'pretend-old.mjs'), join(dir, 'main.js'), '--help'], '20.11.1'],
    ];
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
      expect({ code, out, err }).toEqual({
        code: 1,
        out: '',
        err:
          `rx-informer needs Node.js 22.19 or newer; this is Node.js ${version}.\n` +
          'Install Node.js 24 LTS (https://nodejs.org, or `nvm install 24` / `fnm install 24`) and run it again.\n',
      });
    }
  });
});
