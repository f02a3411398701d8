/**
 * Checks that the TypeScript in our documentation works: every ```ts block of
 * README.md, docs/*.md and packages/emulator/README.md is written out as a
 * module of its own, compiled with the repository's strict compiler options,
 * and run.
 *
 * - They are compiled and run as a newcomer would in a clone, where dist/ is
 *   not built: from a folder of the repository, with its tsconfig as it is,
 *   and `node --conditions=rx-informer-source`. `rx-informer` (the package
 *   naming itself), its subpaths and `rx-informer-emulator` then resolve to
 *   their sources through the packages' `exports` (the `rx-informer-source`
 *   condition; tsconfig's `customConditions` for the compiler).
 * - Each block must stand alone: no block sees another's declarations.
 * - A run passes when the process exits 0 by itself within the time limit, so
 *   an example must also let go of what it started (unsubscribe, close the
 *   emulator); one that leaves a socket or a timer behind fails.
 *
 * The fence's info string says what to do with a block:
 *
 * | fence              | compiled | run |
 * |--------------------|:--------:|:---:|
 * | ```ts              | yes      | yes |
 * | ```ts no-run       | yes      | no  | (needs something we do not have here, such as a real cluster)
 * | ```ts fragment     | no       | no  | (deliberately incomplete: a signature sketch, an excerpt)
 *
 * Run it with `node scripts/readmeExamples.ts [files…]`; `npm test` runs it
 * through spec/repo/readme.spec.ts.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export type BlockMode = 'run' | 'no-run' | 'fragment';

export interface Block {
  /** The Markdown file, relative to the repository. */
  readonly file: string;
  /** Line of the opening fence (1-based). */
  readonly line: number;
  readonly mode: BlockMode;
  readonly code: string;
}

export interface Failure {
  readonly block: Block;
  readonly stage: 'compile' | 'run';
  readonly message: string;
}

export interface CheckOptions {
  /** Longest a run may take before it counts as hanging (ms). */
  readonly runTimeoutMs?: number;
  /** Keep the generated folder (for a look at it after a failure). */
  readonly keep?: boolean;
}

const TS_INFO = new Set(['ts', 'typescript']);
const MODES = new Set<string>(['no-run', 'fragment']);

/** The ```ts blocks of a Markdown text, with their line and mode. An unknown mode word is an error, not a silent skip. */
export function extractBlocks(markdown: string, file: string): Block[] {
  const blocks: Block[] = [];
  const lines = markdown.split('\n');
  let open: { fence: string; line: number; info: string[]; body: string[] } | undefined;
  for (const [index, text] of lines.entries()) {
    if (open) {
      const close = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(text);
      if (close && close[1]!.startsWith(open.fence)) {
        const [language, ...words] = open.info;
        if (language !== undefined && TS_INFO.has(language)) {
          const unknown = words.filter((word) => !MODES.has(word));
          if (unknown.length > 0)
            throw new Error(`${file}:${open.line}: unknown word(s) after \`\`\`ts: ${unknown.join(' ')} (use no-run or fragment)`);
          const mode: BlockMode = words.includes('fragment') ? 'fragment' : words.includes('no-run') ? 'no-run' : 'run';
          blocks.push({ file, line: open.line, mode, code: open.body.join('\n') + '\n' });
        }
        open = undefined;
      } else {
        open.body.push(text);
      }
      continue;
    }
    // CommonMark: at most 3 spaces of indent, and a backtick fence's info string has no backtick
    // (so an inline ```` ```ts ```` in a paragraph is not a fence).
    const start = /^ {0,3}(`{3,}|~{3,})\s*(.*)$/.exec(text);
    if (start && !(start[1]!.startsWith('`') && start[2]!.includes('`')))
      open = { fence: start[1]!, line: index + 1, info: start[2]!.trim().split(/\s+/).filter(Boolean), body: [] };
  }
  if (open) throw new Error(`${file}:${open.line}: code block never closed`);
  return blocks;
}

/** README.md, docs/*.md and the emulator package's README, relative to the repository. */
export function documentationFiles(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs, 'packages/emulator/README.md', 'src/workqueue/README.md'];
}

export function blocksOf(files: readonly string[]): Block[] {
  return files.flatMap((file) => extractBlocks(readFileSync(join(ROOT, file), 'utf8'), file));
}

function moduleName(block: Block, index: number): string {
  return `${String(index).padStart(2, '0')}-${block.file.replace(/[^A-Za-z0-9]+/g, '-')}-L${block.line}.ts`;
}

function compile(dir: string, files: readonly string[]): Map<string, string[]> {
  const configPath = join(dir, 'tsconfig.json');
  const parsed = ts.getParsedCommandLineOfConfigFile(
    configPath,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
      },
    },
  );
  if (!parsed) throw new Error(`cannot read ${configPath}`);
  const program = ts.createProgram({ rootNames: files.map((file) => join(dir, file)), options: parsed.options });
  // What getPreEmitDiagnostics reports, for the examples only: checking every file of src/ as well would take
  // most of the time, for errors that are the type-check's business (`npm run typecheck`).
  const examples = program.getRootFileNames().flatMap((name) => program.getSourceFile(name) ?? []);
  const diagnostics = [
    ...program.getConfigFileParsingDiagnostics(),
    ...program.getOptionsDiagnostics(),
    ...examples.flatMap((file) => program.getSyntacticDiagnostics(file)),
    ...program.getGlobalDiagnostics(),
    ...examples.flatMap((file) => program.getSemanticDiagnostics(file)),
    ...(parsed.options.declaration ? examples.flatMap((file) => program.getDeclarationDiagnostics(file)) : []),
  ];
  const byFile = new Map<string, string[]>();
  for (const diagnostic of diagnostics) {
    // Errors inside src/ are the type-check's business (`npm run typecheck`); here only the examples count.
    const file = diagnostic.file ? relative(dir, diagnostic.file.fileName) : '';
    if (diagnostic.file && (file.startsWith('..') || !files.includes(file))) continue;
    const where =
      diagnostic.file && diagnostic.start !== undefined ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start) : undefined;
    const text = `${where ? `line ${where.line + 1}:${where.character + 1}: ` : ''}TS${diagnostic.code}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`;
    byFile.set(file, [...(byFile.get(file) ?? []), text]);
  }
  return byFile;
}

/** How a sample is run in a clone (the README says so). */
export const SOURCE_CONDITION_FLAG = '--conditions=rx-informer-source';

function run(dir: string, file: string, timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolveRun) => {
    const child = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', SOURCE_CONDITION_FLAG, join(dir, file)], {
      cwd: dir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      // The end of the output says what went wrong; a runaway example can print without end.
      if (output.length > 4000) output = `…${output.slice(-4000)}`;
      if (timedOut)
        resolveRun(`still running after ${timeoutMs} ms (an example must end by itself: unsubscribe, close what it started)\n${output}`);
      else if (code !== 0) resolveRun(`exited with ${code ?? signal}\n${output}`);
      else resolveRun(undefined);
    });
  });
}

/** The blocks written out as modules, with a tsconfig, in a git-ignored folder of the repository. */
export interface Workspace {
  readonly dir: string;
  /** The module written for each block that is not a fragment. */
  readonly modules: ReadonlyMap<Block, string>;
  dispose(): void;
}

export function writeWorkspace(blocks: readonly Block[]): Workspace {
  // Inside the repository, so that the examples' own imports (rxjs, zod, client-node) resolve from node_modules.
  mkdirSync(join(ROOT, '.scratch'), { recursive: true });
  const dir = mkdtempSync(join(ROOT, '.scratch', 'readme-examples-'));
  const fromDir = (path: string) => relative(dir, join(ROOT, path));
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify(
      {
        extends: fromDir('tsconfig.json'),
        compilerOptions: {
          noEmit: true,
          // A block without imports is a module all the same: no block sees another's names.
          moduleDetection: 'force',
        },
        include: ['*.ts'],
      },
      null,
      2,
    ),
  );
  const modules = new Map<Block, string>();
  blocks
    .filter((block) => block.mode !== 'fragment')
    .forEach((block, index) => {
      const name = moduleName(block, index);
      writeFileSync(join(dir, name), block.code);
      modules.set(block, name);
    });
  return { dir, modules, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The file the compiler resolves `specifier` to from the workspace, as it compiles the examples (undefined: none). */
export function resolveFromWorkspace(workspace: Workspace, specifier: string): string | undefined {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    join(workspace.dir, 'tsconfig.json'),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined },
  );
  if (!parsed) throw new Error(`cannot read ${join(workspace.dir, 'tsconfig.json')}`);
  return ts.resolveModuleName(specifier, join(workspace.dir, 'example.ts'), parsed.options, ts.sys).resolvedModule?.resolvedFileName;
}

/** Compiles every module of the workspace as one program; the errors of each block (none: no entry). */
export function compileWorkspace(workspace: Workspace): Map<Block | undefined, string[]> {
  const names = [...workspace.modules.values()];
  const errors = compile(workspace.dir, names);
  const byBlock = new Map<Block | undefined, string[]>();
  for (const [block, name] of workspace.modules) {
    const found = errors.get(name);
    if (found) byBlock.set(block, found);
  }
  // Errors that belong to no file (a bad option): they concern every block.
  if (errors.has('')) byBlock.set(undefined, errors.get('')!);
  return byBlock;
}

/** Runs one block's module; a description of what went wrong, or undefined when it exited 0 by itself in time. */
export function runBlock(workspace: Workspace, block: Block, timeoutMs = 60_000): Promise<string | undefined> {
  const name = workspace.modules.get(block);
  if (name === undefined) throw new Error(`${block.file}:${block.line} is a fragment: nothing to run`);
  return run(workspace.dir, name, timeoutMs);
}

/** Compiles every block that is not a fragment, runs every `run` block, and returns what failed. */
export async function checkBlocks(blocks: readonly Block[], options: CheckOptions = {}): Promise<Failure[]> {
  const workspace = writeWorkspace(blocks);
  try {
    const failures: Failure[] = [];
    const errors = compileWorkspace(workspace);
    for (const message of errors.get(undefined) ?? []) failures.push({ block: blocks[0]!, stage: 'compile', message });
    for (const block of workspace.modules.keys()) {
      const compileErrors = errors.get(block);
      if (compileErrors) {
        failures.push({ block, stage: 'compile', message: compileErrors.join('\n') });
        continue;
      }
      if (block.mode !== 'run') continue;
      // One at a time: runs start servers and informers, and the machine is shared.
      const problem = await runBlock(workspace, block, options.runTimeoutMs);
      if (problem) failures.push({ block, stage: 'run', message: problem });
    }
    return failures;
  } finally {
    if (!options.keep) workspace.dispose();
  }
}

export function describeFailure(failure: Failure): string {
  return `${failure.block.file}:${failure.block.line} (${failure.stage}): ${failure.message.trim()}`;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const files = process.argv.slice(2).filter((arg) => arg !== '--keep');
  const blocks = blocksOf(files.length > 0 ? files : documentationFiles());
  const failures = await checkBlocks(blocks, { keep: process.argv.includes('--keep') });
  const counted = (mode: BlockMode) => blocks.filter((block) => block.mode === mode).length;
  console.log(
    `${blocks.length} blocks: ${counted('run')} compiled and run, ${counted('no-run')} compiled only, ${counted('fragment')} fragments`,
  );
  for (const failure of failures) console.error(describeFailure(failure));
  process.exitCode = failures.length > 0 ? 1 : 0;
}
