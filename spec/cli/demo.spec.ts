/**
 * `rx-informer start` without a kubeconfig runs the built-in demo on rx-informer-emulator, which rx-informer
 * does not depend on (an optional peer): the CLI loads it by name at run time, and says what to do when it is
 * not installed.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { lstatSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import { filter, firstValueFrom } from 'rxjs';
import * as emulatorPackage from 'rx-informer-emulator';
import { parseCommandLine } from '../../src/cli/args.ts';
import { EMULATOR_PACKAGE, loadEmulator, writeKubeconfigFile, type DemoEmulator } from '../../src/cli/demo.ts';
import { informer, Pod } from '../../src/index.ts';
import { cli, expectNoStack, killAll } from './support.ts';

// Compile-time: the package gives the demo what it uses (tsc fails here when the two drift apart).
const satisfies: DemoEmulator = emulatorPackage;

const nodeOptions = (option: string) => ({ NODE_OPTIONS: `${process.env['NODE_OPTIONS'] ?? ''} ${option}`.trim() });
/** As `npm start` runs the CLI in this repository: the emulator from its TypeScript sources. */
const SOURCES = nodeOptions('--conditions=rx-informer-source');
const WITHOUT_EMULATOR = nodeOptions(`--import=${pathToFileURL(new URL('./withoutEmulator.ts', import.meta.url).pathname).href}`);

afterAll(() => killAll());

describe('rx-informer start (the built-in demo)', () => {
  it('loads rx-informer-emulator by its name', async () => {
    expect(EMULATOR_PACKAGE).toBe('rx-informer-emulator');
    const loaded = await loadEmulator();
    expect(loaded?.startApiServer).toBe(satisfies.startApiServer);
  });

  it('runs the demo: the emulator with live churn, watched until Ctrl-C', async () => {
    const c = cli(['start', '--churn-interval', '50'], SOURCES);
    await c.line('err', /^rx-informer demo: API-server emulator on http:\/\/127\.0\.0\.1:\d+ with live churn and injected faults$/);
    // Installed, the advice is the bin's command (`npm start -- …` only works inside this repository).
    await c.line('err', /^\(point it at a real cluster with: rx-informer start --kubeconfig ~\/\.kube\/config\)$/);
    await c.line('out', /^\d\d:\d\d:\d\d (ADDED|UPDATED|DELETED) /, 30_000);
    // Said before the slow part (loading the emulator and the client), and one next step once synced.
    expect(c.err[0]).toBe('rx-informer demo: starting…');
    const next = await c.line('err', /^try next: /);
    expect(next).toBe(
      'try next: rx-informer start --write-kubeconfig demo.kubeconfig writes its kubeconfig, to watch it from another terminal (kubectl too); Ctrl-C stops the demo',
    );
    expect(c.err.findIndex((l) => l.startsWith('try next: '))).toBeGreaterThan(c.err.findIndex((l) => /^synced /.test(l)));
    c.proc.kill('SIGINT');
    expect((await c.exit).code).toBe(130);
  });

  it('run by `npm start` in this repository, its advice and usage pointer say `npm start -- …`', async () => {
    const NPM_START = { ...SOURCES, npm_lifecycle_event: 'start', npm_package_name: 'rx-informer', npm_command: 'start' };
    const c = cli(['start', '--churn-interval', '50'], NPM_START);
    await c.line('err', /^\(point it at a real cluster with: npm start -- --kubeconfig ~\/\.kube\/config\)$/);
    c.proc.kill('SIGINT');
    expect((await c.exit).code).toBe(130);
    const bad = cli(['start', '--bogus'], NPM_START);
    expect((await bad.exit).code).toBe(2);
    expect(bad.err).toEqual(['error: unknown option --bogus', 'run `npm start -- --help` for usage']);
  });

  it('without rx-informer-emulator installed: after the starting line, one line that says to install it or pass --kubeconfig, exit 2', async () => {
    const c = cli(['start'], WITHOUT_EMULATOR);
    const { code } = await c.exit;
    expect(c.err).toEqual([
      'rx-informer demo: starting…',
      'error: install rx-informer-emulator to run the built-in demo (npm install rx-informer-emulator), or pass --kubeconfig',
    ]);
    expect(code).toBe(2);
    expectNoStack(c.raw());
  });
});

describe('rx-informer start --write-kubeconfig FILE', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rx-informer-kubeconfig-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('writes a kubeconfig for the running emulator (0600, replacing a file there): an informer through it syncs', async () => {
    const file = join(dir, 'demo.kubeconfig');
    writeFileSync(file, 'an older file\n', { mode: 0o644 });
    const c = cli(['start', '--churn-interval', '50', '--write-kubeconfig', file], SOURCES);
    try {
      const [, url] = /on (http:\/\/127\.0\.0\.1:\d+) /.exec(await c.line('err', /^rx-informer demo: API-server emulator on /))!;
      expect(await c.line('err', /^\(its kubeconfig is in /)).toBe(
        `(its kubeconfig is in ${file}: rx-informer watch --all --kubeconfig ${file}, or kubectl --kubeconfig)`,
      );
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const kc = new KubeConfig();
      kc.loadFromFile(file);
      expect(kc.getCurrentCluster()?.server).toBe(url);
      const pods = informer(kc, Pod);
      const running = pods.store$.subscribe();
      try {
        await firstValueFrom(pods.synced$.pipe(filter(Boolean)));
        expect((await firstValueFrom(pods.store$)).list().length).toBeGreaterThan(0);
      } finally {
        running.unsubscribe();
      }
    } finally {
      c.proc.kill('SIGINT');
      expect((await c.exit).code).toBe(130);
    }
    // Left there when start ends (naming a port nobody serves now).
    expect(readFileSync(file, 'utf8')).toMatch(/^\{/);
  });

  it('a symbolic link stays one (the file it names gets the kubeconfig); a file that cannot be written ends start: exit 1, one line', async () => {
    const real = join(dir, 'real.kubeconfig');
    const link = join(dir, 'link.kubeconfig');
    writeFileSync(real, 'old\n');
    symlinkSync(real, link);
    const c = cli(['start', '--churn-interval', '50', '--write-kubeconfig', link], SOURCES);
    await c.line('err', /^\(its kubeconfig is in /);
    c.proc.kill('SIGINT');
    expect((await c.exit).code).toBe(130);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(JSON.parse(readFileSync(real, 'utf8'))).toMatchObject({ kind: 'Config', 'current-context': expect.any(String) });

    const nowhere = join(dir, 'no-such-dir', 'x.kubeconfig');
    const failed = cli(['start', '--write-kubeconfig', nowhere], SOURCES);
    expect((await failed.exit).code).toBe(1);
    expect(failed.err).toEqual([
      'rx-informer demo: starting…',
      expect.stringMatching(new RegExp(`^error: --write-kubeconfig ${nowhere}: ENOENT`)),
    ]);
    expectNoStack(failed.raw());
  });

  it('a dangling symbolic link stays one too: the file it names is made (audit25: the link was replaced by a file)', () => {
    const target = join(dir, 'later.kubeconfig');
    const link = join(dir, 'dangling.kubeconfig');
    symlinkSync(target, link);
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: 'http://127.0.0.1:1' }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    writeKubeconfigFile(link, kc);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(JSON.parse(readFileSync(target, 'utf8'))).toMatchObject({ kind: 'Config', 'current-context': 'x' });
  });

  it("is start's own, for the built-in demo only: after watch, or with --kubeconfig/--context, a usage error", () => {
    expect(parseCommandLine(['start', '--write-kubeconfig', 'f'])).toMatchObject({ kind: 'run', options: { writeKubeconfig: 'f' } });
    expect(parseCommandLine(['watch', 'pods', '--write-kubeconfig', 'f'])).toEqual({
      kind: 'usage',
      message: "--write-kubeconfig is an option of start (a kubeconfig for the built-in demo's emulator), not of watch",
    });
    for (const other of [
      ['--kubeconfig', 'k'],
      ['--context', 'c'],
    ])
      expect(parseCommandLine(['start', ...other, '--write-kubeconfig', 'f'])).toEqual({
        kind: 'usage',
        message: '--write-kubeconfig writes a kubeconfig for the built-in demo, which --kubeconfig/--context replace: give one',
      });
  });
});
