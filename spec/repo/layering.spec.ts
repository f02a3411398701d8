/**
 * The lint rule that keeps the pipeline's layering must be able to fail: an upward import in a stage, a library
 * import in src/util and an informer import in the work queue are each reported; a downward import is not. The
 * library and the API-server emulator package stay apart in both directions.
 */
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const eslint = new ESLint({ cwd: new URL('../..', import.meta.url).pathname });

const up = (n: number) => Array.from({ length: n }, () => '..');

async function problems(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? []).map((m) => `${m.ruleId}: ${m.message}`);
}

describe('the layering rule', () => {
  it('reports a stage importing a higher stage', async () => {
    const found = await problems(
      'src/0-model/probe.ts',
      "import { informer } from '../5-informer/informer.ts';\nexport const p = informer;\n",
    );
    expect(found).toEqual([expect.stringContaining('0-model is stage 0 of the pipeline')]);
  });

  it('reports a stage importing a room, the CLI or the root entry', async () => {
    for (const from of ['../controller/index.ts', '../cli/watch.ts', '../index.ts']) {
      const found = await problems('src/3-deltas/probe.ts', `import * as m from '${from}';\nexport const p = m;\n`);
      expect(found, from).toEqual([expect.stringContaining('no-restricted-imports')]);
    }
  });

  it('reports the work queue importing the pipeline and src/util importing the library', async () => {
    expect(await problems('src/workqueue/probe.ts', "import * as m from '../4-store/store.ts';\nexport const p = m;\n")).toHaveLength(1);
    expect(await problems('src/util/probe.ts', "import * as m from '../workqueue/index.ts';\nexport const p = m;\n")).toHaveLength(1);
  });

  it('lets only the CLI import the private src/internal.ts', async () => {
    for (const file of [
      'src/3-deltas/probe.ts',
      'src/controller/probe.ts',
      'src/metrics/probe.ts',
      'src/leaderelection/probe.ts',
      'src/testing/probe.ts',
    ]) {
      const found = await problems(file, "import * as m from '../internal.ts';\nexport const p = m;\n");
      expect(found, file).toEqual([expect.stringContaining('no-restricted-imports')]);
    }
    expect(await problems('src/cli/probe.ts', "import * as m from '../internal.ts';\nexport const p = m;\n")).toEqual([]);
  });

  it('lets a stage import a lower one', async () => {
    expect(await problems('src/5-informer/probe.ts', "import * as m from '../0-model/errors.ts';\nexport const p = m;\n")).toEqual([]);
  });

  it('reports the library importing the emulator package, by name or by path, from any folder of src/', async () => {
    for (const [file, from] of [
      ['src/cli/probe.ts', 'rx-informer-emulator'],
      ['src/testing/probe.ts', '../../packages/emulator/src/index.ts'],
      ['src/5-informer/probe.ts', 'rx-informer-emulator'],
      ['src/probe.ts', '../packages/emulator/src/server.ts'],
    ]) {
      const found = await problems(file!, `import * as m from '${from}';\nexport const p = m;\n`);
      expect(found, `${file} ← ${from}`).toEqual([expect.stringContaining('does not depend on the API-server emulator')]);
    }
  });

  it('reports the emulator importing the library, by name or by a path out of its src/; its own files are fine', async () => {
    for (const [file, from] of [
      ['packages/emulator/src/probe.ts', 'rx-informer'],
      ['packages/emulator/src/probe.ts', 'rx-informer/testing'],
      // Spelled out so the self-containment check does not take the probes for paths out of the repository.
      ['packages/emulator/src/probe.ts', [...up(3), 'src/0-model/keys.ts'].join('/')],
      ['packages/emulator/src/http/probe.ts', [...up(4), 'src/index.ts'].join('/')],
    ]) {
      const found = await problems(file!, `import * as m from '${from}';\nexport const p = m;\n`);
      expect(found, `${file} ← ${from}`).toEqual([expect.stringContaining('a package of its own')]);
    }
    expect(await problems('packages/emulator/src/http/probe.ts', "import * as m from '../faults.ts';\nexport const p = m;\n")).toEqual([]);
    expect(
      await problems('packages/emulator/src/probe.ts', "import * as m from '@kubernetes/client-node';\nexport const p = m;\n"),
    ).toEqual([]);
  });
});
