/**
 * The packages as users get them: `npm pack` of rx-informer (the root) and of
 * rx-informer-emulator (packages/emulator), both tarballs installed into a
 * fresh project outside the repository, then every README and docs example
 * compiled against what was installed (`rx-informer`, its subpaths and
 * `rx-informer-emulator` resolved through the packages' `exports`, their
 * shipped `.d.ts` files, strict). Also checks that each tarball ships no source
 * maps pointing at an unshipped `src/` and holds the LICENSE, that the
 * emulator's ships no tests or TypeScript sources, that no manifest has an
 * install-time script, that neither `npm pack` nor a consumer's `npm install
 * <tarballs>` (scripts allowed, as a consumer runs it) prints a warning (`npm
 * warn …` on stderr: npm 11 warns about install scripts that `allowScripts`
 * does not cover, and npm 12 refuses to run them), and that the installed
 * `rx-informer start` finds the installed emulator (the demo's dynamic import)
 * and starts its demo. `npm pack` builds each `dist/` first (`prepack`).
 * Run by `.ci/run` after `npm test`:
 *
 *   node scripts/packCheck.ts
 *
 * Exits 1 on any failure. Dependencies come from npm's cache when they are there
 * (`--prefer-offline`), so it costs seconds, not a download.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import ts from 'typescript';
import { ROOT, blocksOf, documentationFiles } from './readmeExamples.ts';

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
/**
 * npm runs on the `node` first on PATH: put this Node (one `engines` allows) first, as a consumer's would be,
 * or npm warns that the package does not support an older system Node it happens to find.
 */
const env = { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env['PATH'] ?? ''}` };
const started = performance.now();
const work = mkdtempSync(join(tmpdir(), 'rx-informer-pack-'));
const failures: string[] = [];
/** The scripts npm runs (or, for `prepare`, warns about) when a package is installed. */
const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall', 'prepare'];

/** What each package's tarball must hold, beyond the LICENSE and no source maps. */
const TARBALLS = [
  { name: 'rx-informer', packArgs: [] as string[], mustShip: ['dist/index.d.ts', 'dist/cli/main.js', 'README.md'] },
  {
    name: 'rx-informer-emulator',
    packArgs: ['--workspace', 'rx-informer-emulator'],
    mustShip: ['dist/index.d.ts', 'dist/index.js', 'README.md'],
  },
];
/** Tests, fixtures and TypeScript sources have no place in a tarball (declarations aside). */
const NOT_SHIPPED = /(^|\/)(spec|marbles|tests?|__tests__|fixtures)\/|\.(spec|test)\.[cm]?[jt]s$|(?<!\.d)\.[cm]?ts$/;

try {
  const filenames: string[] = [];
  for (const { name, packArgs, mustShip } of TARBALLS) {
    const packed = JSON.parse(run(`npm pack (${name})`, ['pack', ...packArgs, '--json', '--pack-destination', work], ROOT)) as {
      name: string;
      filename: string;
      files: { path: string }[];
    }[];
    const tarball = packed[0]!;
    if (packed.length !== 1 || tarball.name !== name) failures.push(`npm pack for ${name} packed ${packed.map((p) => p.name).join(', ')}`);
    const shipped = tarball.files.map((f) => f.path);
    if (shipped.some((path) => path.endsWith('.map')))
      failures.push(`${name}: the tarball ships source maps (they point at src/, which is not shipped)`);
    for (const path of ['LICENSE', ...mustShip]) if (!shipped.includes(path)) failures.push(`${name}: the tarball has no ${path}`);
    const strays = shipped.filter((path) => NOT_SHIPPED.test(path));
    if (strays.length > 0) failures.push(`${name}: the tarball ships tests or sources: ${strays.slice(0, 5).join(', ')}`);
    console.log(`pack-check: ${tarball.filename}, ${shipped.length} files`);
    filenames.push(tarball.filename);
  }

  // A newcomer's project, made the way README.md says: `npm init -y` writes `"type": "commonjs"`, and the README's
  // `npm pkg set type=module` (the package is ESM-only) is what lets its examples run as they stand.
  const project = join(work, 'project');
  mkdirSync(project);
  for (const command of newProjectCommands()) run(command.join(' '), command.slice(1), project);
  const installArgs = [
    'install',
    '--prefer-offline',
    '--no-audit',
    '--no-fund',
    ...filenames.map((filename) => join(work, filename)),
    `@types/node@${versionOf('@types/node')}`,
  ];
  run('npm install <tarballs>', installArgs, project);
  for (const { name } of TARBALLS) {
    const manifest = JSON.parse(readFileSync(join(project, 'node_modules', name, 'package.json'), 'utf8')) as {
      scripts?: Record<string, string>;
    };
    for (const script of INSTALL_SCRIPTS) {
      if (manifest.scripts?.[script] !== undefined)
        failures.push(`${name}: the published package.json has a "${script}" script: consumers' npm runs or warns about it`);
    }
  }

  const demo = await startsDemo(project);
  if (demo !== undefined) failures.push(`the installed \`rx-informer start\` did not run its demo on the installed emulator: ${demo}`);

  const blocks = blocksOf(documentationFiles()).filter((block) => block.mode !== 'fragment');
  const names = blocks.map((block, i) => {
    const name = `example-${String(i).padStart(2, '0')}.ts`;
    writeFileSync(join(project, name), block.code);
    return name;
  });
  const program = ts.createProgram({
    rootNames: names.map((name) => join(project, name)),
    options: {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2023,
      lib: ['lib.es2023.d.ts'],
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      moduleDetection: ts.ModuleDetectionKind.Force,
      types: ['node'],
      skipLibCheck: true,
    },
  });
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const file = diagnostic.file?.fileName.replace(`${project}/`, '') ?? '';
    const index = names.indexOf(file);
    const block = blocks[index];
    const where = block ? `${block.file}:${block.line}` : file;
    failures.push(`${where}: TS${diagnostic.code}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`);
  }
  console.log(`pack-check: ${blocks.length} examples compiled against the installed packages`);

  const first = blocks.find((block) => block.file === 'README.md' && block.mode === 'run');
  const ran = first ? runsAsNewcomer(project, first.code) : 'README.md has no example to run';
  if (ran !== undefined) failures.push(`README.md's first example in a fresh project: ${ran}`);
  else console.log("pack-check: README.md's first example ran in a project made as README.md says");
} finally {
  rmSync(work, { recursive: true, force: true });
}

/**
 * Runs npm, echoing its stderr; every `npm warn` line there is a failure.
 * Returns stdout (npm pack's JSON).
 */
function run(what: string, args: string[], cwd: string): string {
  const result = spawnSync(npm, args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
  if (result.stderr) process.stderr.write(result.stderr);
  if (result.error) throw result.error;
  if (result.status !== 0) throw new Error(`${what} exited with ${result.status}`);
  for (const line of result.stderr.split('\n')) if (/^npm warn/i.test(line.trim())) failures.push(`${what} warns: ${line.trim()}`);
  return result.stdout;
}

/**
 * Runs the installed bin's `start` until the demo's emulator is up and a first change is printed, then Ctrl-C:
 * undefined when it did, exited 130 and said nothing it should not; else what happened.
 */
function startsDemo(project: string, timeoutMs = 60_000): Promise<string | undefined> {
  const bin = join(project, 'node_modules', '.bin', 'rx-informer');
  const child = spawn(process.execPath, [bin, 'start', '--churn-interval', '50'], { cwd: project, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const check = () => {
      if (/^rx-informer demo: API-server emulator on /m.test(err) && /^\d\d:\d\d:\d\d (ADDED|UPDATED|DELETED) /m.test(out))
        child.kill('SIGINT');
    };
    child.stdout.on('data', (chunk: Buffer) => ((out += chunk.toString()), check()));
    child.stderr.on('data', (chunk: Buffer) => ((err += chunk.toString()), check()));
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve(code === 130 ? undefined : `exit ${code ?? signal}; stderr: ${err.slice(-2000)}`);
    });
  });
}

/**
 * The commands README.md gives for a new project (the `npm init -y && npm pkg set type=module && npm install …`
 * line), as npm argument lists, but for the install: the tarballs stand in for the registry's packages.
 */
function newProjectCommands(): string[][] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const line = /`(npm init -y[^`]*)`/.exec(readme)?.[1];
  if (!line) throw new Error('README.md does not say how to start a new project (`npm init -y && …`)');
  const commands = line.split('&&').map((command) => command.trim().split(/\s+/));
  if (!commands.some((command) => command.join(' ') === 'npm pkg set type=module'))
    failures.push('README.md\'s new-project line does not set "type": "module" (the package is ESM-only)');
  return commands.filter((command) => command[0] === 'npm' && command[1] !== 'install' && command[1] !== 'i');
}

/** Runs an example as `node example.ts` in the project: undefined when it exits 0, else what it said. */
function runsAsNewcomer(project: string, code: string): string | undefined {
  writeFileSync(join(project, 'example.ts'), code);
  const result = spawnSync(process.execPath, ['example.ts'], { cwd: project, env, encoding: 'utf8', timeout: 60_000 });
  if (result.status === 0) return undefined;
  return `exit ${result.status ?? result.signal}: ${(result.stderr || result.stdout).trim().split('\n').slice(0, 3).join(' / ')}`;
}

/** The version the repository installed, so the fresh project takes it from npm's cache. */
function versionOf(name: string): string {
  return (JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
}

for (const failure of failures) console.error(`pack-check: ${failure}`);
console.log(
  `pack-check: ${failures.length === 0 ? 'ok' : `${failures.length} problems`} in ${((performance.now() - started) / 1000).toFixed(1)} s`,
);
process.exitCode = failures.length === 0 ? 0 : 1;
