/**
 * docs/api.md says where each name it lists is imported from (the tables with a `from` column); each of them must
 * be exported by the entry it is listed under, so `import { where } from 'rx-informer'` cannot be documented again
 * (it is in rx-informer/controller).
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ENTRIES } from '../../scripts/packageEntries.ts';
import { ROOT } from '../../scripts/readmeExamples.ts';

/** The names a module exports, from its syntax, following `export * from` into the files it names. */
function exportsOf(file: string, seen = new Set<string>()): Set<string> {
  const names = new Set<string>();
  if (seen.has(file)) return names;
  seen.add(file);
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ESNext, true);
  for (const statement of source.statements) {
    if (ts.isExportDeclaration(statement)) {
      if (statement.exportClause && ts.isNamedExports(statement.exportClause)) {
        for (const element of statement.exportClause.elements) names.add(element.name.text);
      } else if (statement.moduleSpecifier && ts.isStringLiteral(statement.moduleSpecifier)) {
        for (const name of exportsOf(resolve(dirname(file), statement.moduleSpecifier.text), seen)) names.add(name);
      }
    } else if (ts.canHaveModifiers(statement) && ts.getModifiers(statement)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) {
      if (ts.isVariableStatement(statement)) for (const d of statement.declarationList.declarations) names.add(d.name.getText());
      else {
        const name = (statement as ts.DeclarationStatement).name;
        if (name) names.add(name.getText());
      }
    }
  }
  return names;
}

/** `[name, entry]` for every name in a markdown table with a `from` column (names: the first other column). */
export function listedImports(markdown: string): [name: string, entry: string][] {
  const found: [string, string][] = [];
  const cells = (line: string) =>
    line
      .trim()
      .replace(/^\||\|$/g, '')
      .split('|')
      .map((c) => c.trim());
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i]!.trim().startsWith('|') || !/^\|[-| :]+\|$/.test(lines[i + 1]?.trim() ?? '')) continue;
    const from = cells(lines[i]!).indexOf('from');
    if (from < 0) continue;
    const namesColumn = from === 0 ? 1 : 0;
    for (let j = i + 2; j < lines.length && lines[j]!.trim().startsWith('|'); j++) {
      const row = cells(lines[j]!);
      const entry = /^`([^`]+)`$/.exec(row[from] ?? '')?.[1] ?? `(no entry in: ${lines[j]})`;
      for (const [, code] of (row[namesColumn] ?? '').matchAll(/`([^`]+)`/g)) {
        const name = /^[A-Za-z_$][\w$]*/.exec(code!)?.[0];
        if (name) found.push([name, entry]);
      }
    }
  }
  return found;
}

/** The listed names their stated entry does not export (or whose entry does not exist). */
function misplaced(listed: [string, string][]): string[] {
  const cache = new Map<string, Set<string>>();
  return listed.flatMap(([name, entry]) => {
    const source = PACKAGE_ENTRIES[entry];
    if (source === undefined) return [`${name}: no entry ${entry}`];
    if (!cache.has(entry)) cache.set(entry, exportsOf(join(ROOT, source)));
    return cache.get(entry)!.has(name) ? [] : [`${name} is not exported by ${entry}`];
  });
}

describe('docs/api.md: where each name lives', () => {
  const listed = listedImports(readFileSync(join(ROOT, 'docs/api.md'), 'utf8'));

  it('every name listed under an entry is exported by it', () => {
    expect(listed.length).toBeGreaterThan(60);
    for (const entry of Object.keys(PACKAGE_ENTRIES).filter((e) => e !== 'rx-informer-emulator')) {
      expect(
        listed.some(([, e]) => e === entry),
        `an entry without a row: ${entry}`,
      ).toBe(true);
    }
    expect(misplaced(listed)).toEqual([]);
  });

  it('the check fails on a name listed under a wrong entry', () => {
    const wrong =
      '| operator | from | |\n|---|---|---|\n| `where(predicate)` | `rx-informer` | keeps |\n| `ofType()` | `rx-informer` | x |\n';
    expect(listedImports(wrong)).toEqual([
      ['where', 'rx-informer'],
      ['ofType', 'rx-informer'],
    ]);
    expect(misplaced(listedImports(wrong))).toEqual(['where is not exported by rx-informer']);
    expect(misplaced([['discover', 'rx-informer/nowhere']])).toEqual(['discover: no entry rx-informer/nowhere']);
  });
});
