/**
 * Every type a public signature mentions can be named by a user: a type the compiler reaches from an entry's exports
 * (an option's type, a parameter, a return value, a union's variants, a property's type), if it is declared in this
 * repository, is exported by some entry. Otherwise a user can hold the value but cannot write its type down (a
 * `Pick<…>` of it, a variable, a wrapper's signature), and `tsc --declaration` of their own code fails with TS4058.
 * The walk follows the checker's types, not the syntax, so an inferred return type counts as much as a written one.
 */
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ENTRIES } from '../../scripts/packageEntries.ts';
import { ROOT } from '../../scripts/readmeExamples.ts';

/**
 * Types a public signature may mention without any entry exporting them, each with why. Keep it short: a name here
 * is a type users meet and cannot write.
 */
const UNNAMED: Readonly<Record<string, string>> = {};

/** The compiler options of the repository (tsconfig.json), for a program over the entries only. */
function compilerOptions(): ts.CompilerOptions {
  const file = join(ROOT, 'tsconfig.json');
  const config = ts.readConfigFile(file, (path) => ts.sys.readFile(path));
  return ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT, undefined, file).options;
}

/** Where each entry's source is, `rx-informer/x` → absolute path (the emulator is a package of its own: its own check). */
const ENTRIES = Object.entries(PACKAGE_ENTRIES)
  .filter(([entry]) => entry === 'rx-informer' || entry.startsWith('rx-informer/'))
  .map(([entry, source]) => [entry, join(ROOT, source)] as const);

/**
 * `Name (src/file.ts), reached from entry: ExportedName` for every type declared under one of `ours` that the exports of
 * `roots` reach and that none of them exports; `roots` are `[entry, file]`, all compiled in one program (`extra`: more
 * files, e.g. a broken entry written for the test).
 */
export function unnameable(roots: readonly (readonly [string, string])[], program: ts.Program): string[] {
  const checker = program.getTypeChecker();
  const isOurs = (declaration: ts.Declaration) => {
    const file = declaration.getSourceFile().fileName;
    return !file.includes('/node_modules/') && relative(ROOT, file).startsWith('src/');
  };
  const resolved = (symbol: ts.Symbol) => (symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol);

  const nameable = new Set<ts.Symbol>();
  const exported: [entry: string, symbol: ts.Symbol][] = [];
  for (const [entry, file] of roots) {
    const source = program.getSourceFile(file);
    const module = source && checker.getSymbolAtLocation(source);
    if (module === undefined) throw new Error(`no module for ${entry} (${file})`);
    for (const symbol of checker.getExportsOfModule(module)) {
      nameable.add(resolved(symbol));
      exported.push([entry, symbol]);
    }
  }

  const found = new Map<string, string>();
  const seen = new Set<ts.Type>();
  /** Is `symbol` one of ours that no entry exports? Then note it, reached from `from`. */
  const check = (symbol: ts.Symbol | undefined, from: string) => {
    if (symbol === undefined || symbol.flags & ts.SymbolFlags.TypeParameter) return;
    const declaration = symbol.declarations?.[0];
    if (declaration === undefined || !isOurs(declaration) || nameable.has(symbol) || symbol.name.startsWith('__')) return;
    const name = `${symbol.name} (${relative(ROOT, declaration.getSourceFile().fileName)})`;
    if (!found.has(name) && !(symbol.name in UNNAMED)) found.set(name, from);
  };
  const hidden = (d: ts.Declaration) =>
    (ts.getCombinedModifierFlags(d) & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) !== 0 ||
    ((ts.isPropertyDeclaration(d) || ts.isMethodDeclaration(d)) && ts.isPrivateIdentifier(d.name));
  /** A class's private and protected members (and `#` ones) are not part of its public signature. */
  const isPublic = (property: ts.Symbol) => !property.name.startsWith('__#') && !(property.declarations ?? []).some(hidden);
  const signature = (s: ts.Signature, from: string) => {
    if (s.declaration !== undefined && !ts.isJSDocSignature(s.declaration) && hidden(s.declaration)) return;
    for (const parameter of s.getParameters()) walk(checker.getTypeOfSymbol(parameter), from);
    for (const parameter of s.getTypeParameters() ?? []) {
      const constraint = checker.getBaseConstraintOfType(parameter);
      if (constraint) walk(constraint, from);
    }
    walk(s.getReturnType(), from);
  };
  /** Walks a type: its alias, its symbol, its type arguments, variants, properties and signatures (ours only). */
  const walk = (type: ts.Type, from: string): void => {
    if (seen.has(type)) return;
    seen.add(type);
    check(type.aliasSymbol, from);
    for (const argument of type.aliasTypeArguments ?? []) walk(argument, from);
    if (type.isUnionOrIntersection()) for (const variant of type.types) walk(variant, from);
    if (type.flags & ts.TypeFlags.Index) walk((type as ts.IndexType).type, from);
    if (type.flags & ts.TypeFlags.IndexedAccess) walk((type as ts.IndexedAccessType).objectType, from);
    if (type.flags & ts.TypeFlags.Conditional) {
      const conditional = type as ts.ConditionalType;
      walk(conditional.checkType, from);
      walk(conditional.extendsType, from);
    }
    if (!(type.flags & ts.TypeFlags.Object)) return;
    const object = type as ts.ObjectType;
    if (object.objectFlags & ts.ObjectFlags.Reference)
      for (const argument of checker.getTypeArguments(object as ts.TypeReference)) walk(argument, from);
    const symbol = type.getSymbol();
    const declaration = symbol?.declarations?.[0];
    // A type of rxjs, Node.js or client-node: its own package names it; only its type arguments are ours.
    if (declaration !== undefined && !isOurs(declaration)) return;
    if (
      symbol !== undefined &&
      !(symbol.flags & (ts.SymbolFlags.TypeLiteral | ts.SymbolFlags.ObjectLiteral | ts.SymbolFlags.Function | ts.SymbolFlags.Method))
    )
      check(symbol, from);
    for (const property of checker.getPropertiesOfType(type)) if (isPublic(property)) walk(checker.getTypeOfSymbol(property), from);
    for (const s of type.getCallSignatures()) signature(s, from);
    for (const s of type.getConstructSignatures()) signature(s, from);
    for (const info of checker.getIndexInfosOfType(type)) walk(info.type, from);
  };

  for (const [entry, alias] of exported) {
    const symbol = resolved(alias);
    const from = `${entry}: ${alias.name}`;
    if (symbol.flags & (ts.SymbolFlags.Type | ts.SymbolFlags.Class)) {
      const declared = checker.getDeclaredTypeOfSymbol(symbol);
      walk(declared, from);
      for (const base of declared.isClassOrInterface() ? checker.getBaseTypes(declared) : []) walk(base, from);
    }
    if (symbol.flags & ts.SymbolFlags.Value) walk(checker.getTypeOfSymbol(symbol), from);
  }
  return [...found].map(([name, from]) => `${name}, reached from ${from}`).sort();
}

describe('every type in a public signature can be named from an entry', () => {
  it('no entry reaches a type of ours that no entry exports', { timeout: 120_000 }, () => {
    const program = ts.createProgram(
      ENTRIES.map(([, file]) => file),
      compilerOptions(),
    );
    expect(unnameable(ENTRIES, program)).toEqual([]);
  });

  it(
    'the check finds an option type, a union variant and an inferred return type no entry exports (it can fail)',
    { timeout: 120_000 },
    () => {
      const files: Record<string, string> = {
        [join(ROOT, 'src/broken.ts')]: [
          'interface Hidden { readonly n: number }',
          'interface Variant { readonly kind: "b" }',
          'type Options = { readonly depth?: number };',
          'export type Either = { readonly kind: "a" } | Variant;',
          'export function make(options: Options): Either { return { kind: "a" }; }',
          'export function inferred() { const h: Hidden = { n: 1 }; return h; }',
          'class Secret { readonly s = 1 }',
          'export class Box { #own = new Secret(); private other = new Secret(); readonly size = 1; }',
        ].join('\n'),
      };
      const options = compilerOptions();
      const host = ts.createCompilerHost(options);
      const read = host.readFile.bind(host);
      const exists = host.fileExists.bind(host);
      host.readFile = (path) => files[path] ?? read(path);
      host.fileExists = (path) => path in files || exists(path);
      const getSourceFile = host.getSourceFile.bind(host);
      host.getSourceFile = (path, version, ...rest) =>
        path in files ? ts.createSourceFile(path, files[path]!, version) : getSourceFile(path, version, ...rest);
      const program = ts.createProgram(Object.keys(files), options, host);
      expect(unnameable([['rx-informer/broken', join(ROOT, 'src/broken.ts')]], program)).toEqual([
        'Hidden (src/broken.ts), reached from rx-informer/broken: inferred',
        'Options (src/broken.ts), reached from rx-informer/broken: make',
        'Variant (src/broken.ts), reached from rx-informer/broken: make',
      ]);
    },
  );
});
