/**
 * The package as users get it: `npm pack`, install the tarball into a fresh
 * project outside the repository, then compile every README and docs example
 * against what was installed (`rx-informer` and `rx-informer/testing` resolved
 * through the package's `exports`, its shipped `.d.ts` files, strict). Also
 * checks that the tarball ships no source maps pointing at an unshipped `src/`
 * and holds the LICENSE, that its manifest has no install-time script, and
 * that neither `npm pack` nor a consumer's `npm install <tarball>` (scripts
 * allowed, as a consumer runs it) prints a warning (`npm warn …` on stderr:
 * npm 11 warns about install scripts that `allowScripts` does not cover, and
 * npm 12 refuses to run them). `npm pack` builds `dist/` first (`prepack`).
 * Run by `.ci/run` after `npm test`:
 *
 *   node scripts/packCheck.ts
 *
 * Exits 1 on any failure. Dependencies come from npm's cache when they are there
 * (`--prefer-offline`), so it costs seconds, not a download.
 */
import { execFileSync, spawnSync } from 'node:child_process';
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

try {
  const packed = JSON.parse(run('npm pack', ['pack', '--json', '--pack-destination', work], ROOT)) as {
    filename: string;
    files: { path: string }[];
  }[];
  const tarball = packed[0]!;
  const shipped = tarball.files.map((f) => f.path);
  if (shipped.some((path) => path.endsWith('.map')))
    failures.push('the tarball ships source maps (they point at src/, which is not shipped)');
  if (!shipped.includes('LICENSE')) failures.push('the tarball has no LICENSE');
  if (!shipped.includes('dist/index.d.ts')) failures.push('the tarball has no dist/index.d.ts');

  const project = join(work, 'project');
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'pack-check', private: true, type: 'module' }));
  const installArgs = [
    'install',
    '--prefer-offline',
    '--no-audit',
    '--no-fund',
    join(work, tarball.filename),
    `@types/node@${versionOf('@types/node')}`,
  ];
  run('npm install <tarball>', installArgs, project);
  const manifest = JSON.parse(readFileSync(join(project, 'node_modules', 'rx-informer', 'package.json'), 'utf8')) as {
    scripts?: Record<string, string>;
  };
  for (const script of INSTALL_SCRIPTS) {
    if (manifest.scripts?.[script] !== undefined)
      failures.push(`the published package.json has a "${script}" script: consumers' npm runs or warns about it`);
  }

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
  console.log(`pack-check: ${tarball.filename}, ${shipped.length} files; ${blocks.length} examples compiled against the installed package`);
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

/** The version the repository installed, so the fresh project takes it from npm's cache. */
function versionOf(name: string): string {
  return (JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
}

for (const failure of failures) console.error(`pack-check: ${failure}`);
console.log(
  `pack-check: ${failures.length === 0 ? 'ok' : `${failures.length} problems`} in ${((performance.now() - started) / 1000).toFixed(1)} s`,
);
process.exitCode = failures.length === 0 ? 0 : 1;
