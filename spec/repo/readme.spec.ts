/**
 * The documentation's code works: every ```ts block of README.md and
 * docs/*.md compiles under the repository's strict options and, unless marked
 * `no-run`, runs to a clean exit by itself (scripts/readmeExamples.ts).
 *
 * They are compiled and run as a newcomer would in a clone (no dist/): the
 * repository's tsconfig, `node --conditions=rx-informer-source`.
 *
 * A few probe blocks share the compiled program with the real ones, to show
 * that each kind of breakage is caught: a type error, the narrowing that
 * `ofType` must keep, an exception, an example that never ends.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ROOT,
  blocksOf,
  compileWorkspace,
  documentationFiles,
  extractBlocks,
  resolveFromWorkspace,
  runBlock,
  writeWorkspace,
  type Block,
  type Workspace,
} from '../../scripts/readmeExamples.ts';
import { PACKAGE_ENTRIES } from '../../scripts/packageEntries.ts';

/** Generous: a run takes a few seconds (loading the sources), and a hang is what this bounds, not speed. */
const RUN_TIMEOUT_MS = 90_000;

const documented = blocksOf(documentationFiles());

const probe = (code: string): Block => ({ file: 'probe.md', line: 1, mode: 'run', code });
const probes = {
  typeError: probe(`const n: number = 'one';\nconsole.log(n);\n`),
  lostNarrowing: probe(
    [
      `import { EMPTY } from 'rxjs';`,
      `import { ofType, skipResync, type InformerEvent, type Pod } from 'rx-informer';`,
      `const events$ = EMPTY as import('rxjs').Observable<InformerEvent<Pod>>;`,
      `events$.pipe(ofType('added'), skipResync()).subscribe((e) => console.log(e.oldObject));`,
      ``,
    ].join('\n'),
  ),
  throws: probe(`throw new Error('an example that fails');\n`),
  neverEnds: probe(`setInterval(() => {}, 1_000);\n`),
  // Node resolves every entry to its sources (not to dist/, which a clone has not built).
  entries: probe(
    [
      `const sources: Record<string, string> = ${JSON.stringify(PACKAGE_ENTRIES)};`,
      `for (const [name, source] of Object.entries(sources)) {`,
      `  const url = import.meta.resolve(name);`,
      `  if (!url.endsWith('/' + source)) throw new Error(name + ' resolves to ' + url);`,
      `}`,
      ``,
    ].join('\n'),
  ),
};

let workspace: Workspace;
let compileErrors: Map<Block | undefined, string[]>;

beforeAll(() => {
  workspace = writeWorkspace([...documented, ...Object.values(probes)]);
  compileErrors = compileWorkspace(workspace);
}, 300_000);

afterAll(() => workspace?.dispose());

describe('the documentation', () => {
  it('has TypeScript examples, almost all of them run (fragments are few)', () => {
    expect(documented.filter((block) => block.file === 'README.md' && block.mode === 'run').length).toBeGreaterThanOrEqual(4);
    expect(documented.filter((block) => block.mode === 'fragment').length).toBeLessThanOrEqual(3);
  });

  it('README.md is a doorway: at most 25 KB', () => {
    expect(statSync(join(ROOT, 'README.md')).size).toBeLessThanOrEqual(25 * 1024);
  });

  it('resolves each entry to its sources in a clone, for the compiler and for node --conditions=rx-informer-source', async () => {
    for (const [name, source] of Object.entries(PACKAGE_ENTRIES))
      expect(resolveFromWorkspace(workspace, name), name).toBe(join(ROOT, source));
    expect(compileErrors.get(probes.entries) ?? []).toEqual([]);
    expect(await runBlock(workspace, probes.entries, RUN_TIMEOUT_MS)).toBeUndefined();
  });

  it('compiler options are sound (no error outside the examples)', () => {
    expect(compileErrors.get(undefined) ?? []).toEqual([]);
  });

  for (const block of documented.filter((b) => b.mode !== 'fragment')) {
    const title = `${block.file}:${block.line} compiles${block.mode === 'run' ? ' and runs to a clean exit' : ''}`;
    it(
      title,
      async () => {
        expect(compileErrors.get(block) ?? []).toEqual([]);
        if (block.mode === 'run') expect(await runBlock(workspace, block, RUN_TIMEOUT_MS)).toBeUndefined();
      },
      RUN_TIMEOUT_MS + 10_000,
    );
  }
});

describe('the check can fail', () => {
  it('reports a type error', () => {
    expect(compileErrors.get(probes.typeError)?.join('\n')).toMatch(/TS2322/);
  });

  it('reports an operator chain that lost its narrowing (no oldObject on an added event)', () => {
    expect(compileErrors.get(probes.lostNarrowing)?.join('\n')).toMatch(/TS2551: Property 'oldObject' does not exist/);
  });

  it(
    'reports an example that throws',
    async () => {
      expect(await runBlock(workspace, probes.throws, RUN_TIMEOUT_MS)).toMatch(/exited with 1[\s\S]*an example that fails/);
    },
    RUN_TIMEOUT_MS + 10_000,
  );

  it('reports an example that never ends by itself', async () => {
    // The probe keeps a timer forever, so it outlives any limit; a short one keeps the test short.
    expect(await runBlock(workspace, probes.neverEnds, 2_000)).toMatch(/still running after 2000 ms/);
  });
});

describe('extracting blocks', () => {
  const markdown = [
    '# T',
    '```ts',
    'run();',
    '```',
    'Inline ```` ```ts ```` is not a fence.',
    '```ts no-run',
    'compileOnly();',
    '```',
    '~~~typescript fragment',
    'sketch(a?, b?);',
    '~~~',
    '```sh',
    'npm test',
    '```',
  ].join('\n');

  it('finds ts blocks with their line and mode, and nothing else', () => {
    expect(extractBlocks(markdown, 'x.md')).toEqual([
      { file: 'x.md', line: 2, mode: 'run', code: 'run();\n' },
      { file: 'x.md', line: 6, mode: 'no-run', code: 'compileOnly();\n' },
      { file: 'x.md', line: 9, mode: 'fragment', code: 'sketch(a?, b?);\n' },
    ]);
  });

  it('refuses an unknown mode word and an unclosed block rather than skip them', () => {
    expect(() => extractBlocks('```ts skip\nx\n```\n', 'x.md')).toThrow(/unknown word/);
    expect(() => extractBlocks('```ts\nx\n', 'x.md')).toThrow(/never closed/);
  });
});
