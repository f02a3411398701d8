/**
 * The package as users get it: `npm pack`, install the tarball into a fresh
 * project outside the repository, then compile every README and docs example
 * against what was installed (`rx-informer` and `rx-informer/testing` resolved
 * through the package's `exports`, its shipped `.d.ts` files, strict). Also
 * checks that the tarball ships no source maps pointing at an unshipped `src/`
 * and holds the LICENSE. Run by `.ci/run` after `npm test`:
 *
 *   node scripts/packCheck.ts
 *
 * Exits 1 on any failure. Dependencies come from npm's cache when they are there
 * (`--prefer-offline`), so it costs seconds, not a download.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { ROOT, blocksOf, documentationFiles } from './readmeExamples.ts';

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const started = performance.now();
const work = mkdtempSync(join(tmpdir(), 'rx-informer-pack-'));
const failures: string[] = [];

try {
  const packed = JSON.parse(execFileSync(npm, ['pack', '--json', '--pack-destination', work], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })) as {
    filename: string;
    files: { path: string }[];
  }[];
  const tarball = packed[0]!;
  const shipped = tarball.files.map((f) => f.path);
  if (shipped.some((path) => path.endsWith('.map'))) failures.push('the tarball ships source maps (they point at src/, which is not shipped)');
  if (!shipped.includes('LICENSE')) failures.push('the tarball has no LICENSE');
  if (!shipped.includes('dist/index.d.ts')) failures.push('the tarball has no dist/index.d.ts');

  const project = join(work, 'project');
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'pack-check', private: true, type: 'module' }));
  execFileSync(npm, ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', join(work, tarball.filename), `@types/node@${versionOf('@types/node')}`], {
    cwd: project,
    stdio: ['ignore', 'ignore', 'inherit'],
  });

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

/** The version the repository installed, so the fresh project takes it from npm's cache. */
function versionOf(name: string): string {
  return (JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
}

for (const failure of failures) console.error(`pack-check: ${failure}`);
console.log(`pack-check: ${failures.length === 0 ? 'ok' : `${failures.length} problems`} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
process.exitCode = failures.length === 0 ? 0 : 1;
