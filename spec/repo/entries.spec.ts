/** Each package.json's exports, the documentation checker's entries and the sources agree. */
import { existsSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ENTRIES, PACKAGES } from '../../scripts/packageEntries.ts';
import { ROOT } from '../../scripts/readmeExamples.ts';

/** The condition under which in-repo code (tests, `npm start`) resolves a package to its TypeScript sources. */
const SOURCE_CONDITION = 'rx-informer-source';

type Target = { readonly types: string; readonly default: string; readonly [condition: string]: string } | string;

describe('package entry points', () => {
  for (const [name, { dir }] of Object.entries(PACKAGES)) {
    it(`${name}: every export is a built source the examples can import by name, and the other way round`, () => {
      const pkg = JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8')) as { name: string; exports: Record<string, Target> };
      expect(pkg.name).toBe(name);
      const fromPackage = Object.entries(pkg.exports)
        .filter((entry): entry is [string, Exclude<Target, string>] => typeof entry[1] !== 'string')
        .map(([subpath, target]) => [subpath === '.' ? name : `${name}/${subpath.slice(2)}`, target] as const);
      const ours = Object.entries(PACKAGE_ENTRIES).filter(([entry]) => entry === name || entry.startsWith(`${name}/`));
      /** `<dir>/src/x.ts` → `./dist/x.js`, relative to the package. */
      const built = (source: string) => `./${posix.relative(dir, source)}`.replace(/^\.\/src\//, './dist/').replace(/\.ts$/, '.js');
      expect(Object.fromEntries(fromPackage.map(([entry, target]) => [entry, target.default]))).toEqual(
        Object.fromEntries(ours.map(([entry, source]) => [entry, built(source)])),
      );
      for (const [entry, target] of fromPackage) {
        expect(target.types, entry).toBe(target.default.replace(/\.js$/, '.d.ts'));
        // In-repo code may read the sources instead of dist/, through the one condition, and only for the same entry.
        const source = ours.find(([e]) => e === entry)?.[1];
        if (target[SOURCE_CONDITION] !== undefined) expect(join(dir, target[SOURCE_CONDITION]), entry).toBe(source);
        expect(
          Object.keys(target).filter((c) => !['types', 'default', SOURCE_CONDITION].includes(c)),
          entry,
        ).toEqual([]);
      }
      for (const [, source] of ours) expect(existsSync(join(ROOT, source)), source).toBe(true);
    });
  }

  it('every entry belongs to a package', () => {
    const owners = Object.keys(PACKAGE_ENTRIES).map((entry) =>
      Object.keys(PACKAGES).find((name) => entry === name || entry.startsWith(`${name}/`)),
    );
    expect(owners).not.toContain(undefined);
  });
});
