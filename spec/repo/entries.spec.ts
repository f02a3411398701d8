/** package.json's exports, the documentation checker's entries and the sources agree. */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ENTRIES } from '../../scripts/packageEntries.ts';
import { ROOT } from '../../scripts/readmeExamples.ts';

const pkg = JSON.parse(readFileSync(`${ROOT}/package.json`, 'utf8')) as {
  exports: Record<string, { types: string; default: string } | string>;
};

describe('package entry points', () => {
  it('every export is a built source the examples can import by name, and the other way round', () => {
    const fromPackage = Object.entries(pkg.exports)
      .filter(([, target]) => typeof target !== 'string')
      .map(
        ([subpath, target]) =>
          [subpath === '.' ? 'rx-informer' : `rx-informer/${subpath.slice(2)}`, (target as { default: string }).default] as const,
      );
    const fromSources = Object.entries(PACKAGE_ENTRIES).map(
      ([name, source]) => [name, source.replace(/^src\//, './dist/').replace(/\.ts$/, '.js')] as const,
    );
    expect(Object.fromEntries(fromPackage)).toEqual(Object.fromEntries(fromSources));
    for (const source of Object.values(PACKAGE_ENTRIES)) expect(existsSync(`${ROOT}/${source}`), source).toBe(true);
  });
});
