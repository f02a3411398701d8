/** src/ has no import circles, and the check run by `npm run lint` finds one when it is planted. */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findCycles, importsOf, sourcesUnder } from '../../scripts/importCycles.ts';
import { ROOT } from '../../scripts/readmeExamples.ts';

describe('the import graph', () => {
  it('of src/ has no circles', () => {
    expect(findCycles(sourcesUnder(join(ROOT, 'src')))).toEqual([]);
  });

  it('reports a planted circle, through type-only imports and re-exports too', () => {
    const sources = new Map([
      ['/p/a.ts', "import { b } from './b.ts';\nexport const a = b;"],
      ['/p/b.ts', "import type { C } from './sub/c.ts';\nexport const b = 1;"],
      ['/p/sub/c.ts', "export { a } from '../a.ts';\nexport type C = 1;"],
      ['/p/d.ts', "import { a } from './a.ts';\nimport { z } from 'rxjs';"],
      ['/p/self.ts', "export const s = () => import('./self.ts');"],
    ]);
    expect(findCycles(sources)).toEqual([['/p/a.ts', '/p/b.ts', '/p/sub/c.ts'], ['/p/self.ts']]);
    sources.set('/p/sub/c.ts', 'export type C = 1;');
    expect(findCycles(sources)).toEqual([['/p/self.ts']]);
  });

  it('reads every form of relative import', () => {
    const text =
      "import a from './a.ts';\nimport type { B } from '../b.ts';\nexport * from './c.ts';\ntype D = import('./d.ts').D;\nconst e = import('./e.ts');\nimport 'rxjs';";
    expect(importsOf('x.ts', text)).toEqual(['./a.ts', '../b.ts', './c.ts', './d.ts', './e.ts']);
  });
});
