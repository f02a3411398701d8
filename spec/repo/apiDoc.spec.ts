/**
 * docs/api.md says where each name it lists is imported from (the tables with a `from` column); each of them must
 * be exported by the entry it is listed under, so `import { where } from 'rx-informer'` cannot be documented again
 * (it is in rx-informer/controller). The other way round, every name an entry exports is named (in a code span) in
 * docs/api.md or on the page of the entry's concern (PAGES), so a new export comes with its documentation.
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

/** The pages that document each entry, besides docs/api.md. */
export const PAGES: Readonly<Record<string, readonly string[]>> = {
  'rx-informer': ['docs/semantics.md'],
  'rx-informer/discovery': ['docs/dynamic-and-metadata.md'],
  'rx-informer/diff': ['docs/operations.md'],
  'rx-informer/controller': ['docs/controllers.md'],
  'rx-informer/workqueue': ['src/workqueue/README.md', 'docs/controllers.md'],
  'rx-informer/metrics': ['docs/operations.md', 'docs/controllers.md'],
  'rx-informer/leaderelection': ['docs/replicas.md'],
  'rx-informer/pipeline': [
    'docs/architecture.md',
    'docs/transport.md',
    'docs/semantics.md',
    'docs/testing.md',
    'docs/dynamic-and-metadata.md',
  ],
  'rx-informer/testing': ['docs/testing.md', 'docs/replicas.md'],
};

/** Is `name` named in a code span of `markdown` (`name`, `name(…)`, `x.name`), as a whole identifier? */
export function names(markdown: string, name: string): boolean {
  const escaped = name.replace(/[$]/g, '\\$');
  return new RegExp('`[^`\\n]*(?<![\\w$])' + escaped + '(?![\\w$])[^`\\n]*`').test(markdown);
}

/** `entry: name` for each name `exported` by an entry that neither docs/api.md nor the entry's pages name. */
export function undocumented(exported: Readonly<Record<string, Iterable<string>>>, read: (page: string) => string): string[] {
  const api = read('docs/api.md');
  return Object.entries(exported).flatMap(([entry, all]) => {
    const pages = [api, ...(PAGES[entry] ?? []).map(read)];
    return [...all].filter((name) => !pages.some((page) => names(page, name))).map((name) => `${entry}: ${name}`);
  });
}

describe('docs: every exported name is documented', () => {
  const read = (page: string) => readFileSync(join(ROOT, page), 'utf8');
  const exported = Object.fromEntries(
    Object.keys(PAGES).map((entry) => [entry, [...exportsOf(join(ROOT, PACKAGE_ENTRIES[entry]!))].sort()] as const),
  );

  it('each entry of the package has its pages, and they exist', () => {
    expect(Object.keys(PAGES).sort()).toEqual(
      Object.keys(PACKAGE_ENTRIES)
        .filter((e) => e !== 'rx-informer-emulator')
        .sort(),
    );
    for (const page of Object.values(PAGES).flat()) expect(read(page).length, page).toBeGreaterThan(0);
  });

  it("docs/api.md or the entry's pages name every exported name", () => {
    expect(undocumented(exported, read)).toEqual([]);
  });

  it('the check fails on an exported name no page names (it can fail)', () => {
    const page = (text: string) => (path: string) => (path === 'docs/api.md' ? text : '');
    expect(undocumented({ 'rx-informer/x': ['cacheSynced$', 'fnv1a', 'Store'] }, page('`cacheSynced$(f)` and `Store.get()`'))).toEqual([
      'rx-informer/x: fnv1a',
    ]);
    expect(names('`shardOfKey(k)` and fnv1a in prose', 'shardOf')).toBe(false);
    expect(names('`shardOfKey(k)` and fnv1a in prose', 'fnv1a')).toBe(false);
  });
});

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
