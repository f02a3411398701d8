/**
 * Writes src/1-transport/protobuf/schema.generated.ts and its twin packages/emulator/src/protobuf/schema.generated.ts: the protobuf field numbers and the JSON shape of every struct of
 * k8s.io/api core/v1, apps/v1 and coordination/v1 and k8s.io/apimachinery meta/v1, read from the Go struct tags of their `types.go` (the tags
 * carry the field number, the JSON name and `omitempty`; the Go type says pointer, slice, map or struct, which decides
 * what encoding/json emits for an absent or zero value), and the kinds of each API group version (`KINDS`: a struct
 * `X` whose package has an `XList` of `items []X`).
 *
 * Messages are named by their Go struct name, qualified when two packages define it (`core_v1_Preconditions`
 * beside meta/v1's `Preconditions`); a kind (with its list) must stay unqualified, since the decoders find its
 * message by the kind an envelope names, and the script stops if one would not.
 *
 *   node bench/protobuf/generateSchema.ts <kubernetes/api checkout or git dir> <kubernetes/apimachinery ...> [tag=v0.20.2]
 *
 * A message's rows are in its Go struct's order (not by field number): the order kube-apiserver's JSON writes its fields
 * in, which the library's decoder gives a decoded object's keys (schema.ts's `order`); do not sort them.
 *
 * A git directory is read at the tag with `git show`. One field is added by hand: ManagedFieldsEntry.subresource
 * (field 8, added in v1.22), because the bench workload's pods carry it; it is omitempty, so v1.20 objects decode the same.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { format, resolveConfig } from 'prettier';

const [apiDir, machineryDir, tag = 'v0.20.2'] = process.argv.slice(2);
if (!apiDir || !machineryDir) throw new Error('usage: generateSchema.ts <api git dir> <apimachinery git dir> [tag]');
const show = (dir: string, path: string) => execFileSync('git', ['-C', dir, 'show', `${tag}:${path}`], { encoding: 'utf8' });

/** The packages read, and the apiVersion of the kinds each serves (meta/v1 serves none: its messages are parts). */
const packages = [
  { name: 'core/v1', apiVersion: 'v1', source: show(apiDir, 'core/v1/types.go') },
  { name: 'apps/v1', apiVersion: 'apps/v1', source: show(apiDir, 'apps/v1/types.go') },
  { name: 'coordination/v1', apiVersion: 'coordination.k8s.io/v1', source: show(apiDir, 'coordination/v1/types.go') },
  { name: 'meta/v1', apiVersion: undefined, source: show(machineryDir, 'pkg/apis/meta/v1/types.go') },
];
const sources = packages.map((p) => p.source);

/** Go types that are strings on the wire and in JSON. */
const strings = new Set(['string', 'types.UID', 'UID']);
/** Named map types. */
const namedMaps = new Map<string, string>();
for (const source of sources) {
  for (const m of source.matchAll(/^type (\w+) string$/gm)) strings.add(m[1]!);
  for (const m of source.matchAll(/^type (\w+) (map\[.*)$/gm)) namedMaps.set(m[1]!, m[2]!);
}
// Named slices of strings (e.g. Verbs) and the other special types.
const special: Record<string, string> = {
  'metav1.Time': 'time',
  Time: 'time',
  'metav1.MicroTime': 'microTime',
  MicroTime: 'microTime',
  'resource.Quantity': 'quantity',
  'intstr.IntOrString': 'intOrString',
  'metav1.Duration': 'duration',
  Duration: 'duration',
  'runtime.RawExtension': 'raw',
  FieldsV1: 'fieldsV1',
  'metav1.FieldsV1': 'fieldsV1',
  int32: 'int32',
  int64: 'int64',
  int: 'int64',
  bool: 'bool',
  float64: 'double',
  '[]byte': 'bytes',
};

/** [number, json name, kind, presence, repeated/map, message or map value kind, inline] */
type Row = [number, string, string, 'ptr' | 'omit' | 'always', '' | 'rep' | 'map', string, boolean];

/** The struct names each package defines, and the names two packages define (qualified, see messageName). */
const structs = new Map(packages.map((p) => [p.name, new Set([...p.source.matchAll(/^type (\w+) struct \{$/gm)].map((m) => m[1]!))]));
const defined = new Map<string, number>();
for (const names of structs.values()) for (const name of names) defined.set(name, (defined.get(name) ?? 0) + 1);

/**
 * A struct's message name: its Go name, or, when another package defines the same name, `<package>_<name>`
 * (`core_v1_Preconditions`); meta/v1's, which every package uses, keep their plain names.
 */
function messageName(packageName: string, name: string): string {
  if ((defined.get(name) ?? 0) < 2 || packageName === 'meta/v1') return name;
  return `${packageName.replace('/', '_')}_${name}`;
}

/** A Go type as written in `packageName` (apps/v1 names core/v1 `v1.`; every package names meta/v1 `metav1.`). */
function kindOf(goType: string, packageName: string): { kind: string; msg: string } {
  const s = special[goType];
  if (s) return { kind: s, msg: '' };
  const prefix = /^(metav1|v1)\./.exec(goType)?.[1];
  const local = prefix === undefined ? goType : goType.slice(prefix.length + 1);
  if (strings.has(local)) return { kind: 'string', msg: '' };
  const from = prefix === 'metav1' ? 'meta/v1' : prefix === 'v1' ? 'core/v1' : packageName;
  if (!structs.get(from)!.has(local)) throw new Error(`${packageName}: ${goType} is no struct of ${from}`);
  return { kind: 'msg', msg: messageName(from, local) };
}

const messages: Record<string, Row[]> = {};
/** Kind -> apiVersion: the kinds each package serves (a struct `X` with an `XList` of `items []X` beside it). */
const kinds: Record<string, string> = {};
const fieldLine = /^\s*(\w+)?\s+([*\w.[\]]+)\s+`json:"([^"]*)"(?:[^`]*?\sprotobuf:"([^"]*)")?/;
for (const { name: packageName, source } of packages) {
  for (const m of source.matchAll(/^type (\w+) struct \{\n([\s\S]*?)^\}/gm)) {
    const rows: Row[] = [];
    for (const line of m[2]!.split('\n')) {
      const f = fieldLine.exec(line);
      if (!f || !f[4]) continue;
      const [jsonName = '', ...opts] = f[3]!.split(',');
      const omitempty = opts.includes('omitempty');
      const inline = opts.includes('inline');
      const number = Number(f[4].split(',')[1]);
      let goType = f[2]!;
      // An embedded field (`VolumeSource \`json:",inline" ...\``, `ListMeta \`json:"metadata" ...\``) has its type where the name would be.
      const pointer = goType.startsWith('*');
      if (pointer) goType = goType.slice(1);
      if (namedMaps.has(goType)) goType = namedMaps.get(goType)!;
      if (goType === 'Verbs') goType = '[]string';
      let shape: '' | 'rep' | 'map' = '';
      let element = goType;
      if (goType.startsWith('[]') && goType !== '[]byte') {
        shape = 'rep';
        element = goType.slice(2);
      } else if (goType.startsWith('map[')) {
        shape = 'map';
        element = goType.slice(goType.indexOf(']') + 1);
      }
      const { kind, msg } = kindOf(element, packageName);
      const scalar = ['string', 'int32', 'int64', 'bool', 'double', 'bytes'].includes(kind);
      const presence = pointer ? 'ptr' : shape !== '' || scalar ? (omitempty ? 'omit' : 'always') : 'always';
      rows.push([number, jsonName, kind, presence, shape, msg, inline]);
    }
    if (rows.length > 0) messages[messageName(packageName, m[1]!)] = rows;
  }
}
for (const { name: packageName, apiVersion } of packages) {
  if (apiVersion === undefined) continue;
  for (const name of structs.get(packageName)!) {
    const items = messages[`${name}List`]?.find((r) => r[1] === 'items');
    if (!structs.get(packageName)!.has(`${name}List`) || items?.[4] !== 'rep' || items[5] !== name) continue;
    // The decoders find a kind's message by the kind named in the envelope: a kind's name must be its message's.
    if (messageName(packageName, name) !== name || kinds[name] !== undefined)
      throw new Error(`kind ${name}: another package defines the name too`);
    kinds[name] = apiVersion;
  }
}
messages['ManagedFieldsEntry']!.push([8, 'subresource', 'string', 'omit', '', '', false]);
messages['WatchEvent'] = [
  [1, 'type', 'string', 'always', '', '', false],
  [2, 'object', 'raw', 'always', '', '', false],
];

const out = [
  '// Generated by bench/protobuf/generateSchema.ts from k8s.io/api ' +
    tag +
    ' (' +
    packages
      .filter((p) => p.apiVersion !== undefined)
      .map((p) => p.name)
      .join(', ') +
    ') and k8s.io/apimachinery ' +
    tag +
    ' (meta/v1),',
  '// read from their types.go struct tags:',
  '// node bench/protobuf/generateSchema.ts <kubernetes/api git dir> <kubernetes/apimachinery git dir> ' +
    tag +
    ' (git dirs from `fetch`).',
  '// Do not edit. Row: [field number, JSON name, kind, presence, "" | "rep" | "map", message (or map value message), inline].',
  "export type SchemaRow = readonly [number, string, string, 'ptr' | 'omit' | 'always', '' | 'rep' | 'map', string, boolean];",
  'export const KUBERNETES_VERSION = ' + JSON.stringify(tag) + ';',
  'export const MESSAGES: Record<string, readonly SchemaRow[]> = {',
  ...Object.entries(messages)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, rows]) => `  ${name}: [\n${rows.map((r) => '    ' + JSON.stringify(r) + ',').join('\n')}\n  ],`),
  '};',
  '/** The kinds the schema decodes, objects and lists, with the apiVersion that serves them. */',
  'export const KINDS: Record<string, string> = {',
  ...Object.entries(kinds)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([kind, apiVersion]) => `  ${kind}: ${JSON.stringify(apiVersion)},`),
  '};',
  '',
];
// The library's decoder and the emulator's encoder read the same schema; the two packages import nothing of each other.
for (const dir of ['../../src/1-transport/protobuf', '../../packages/emulator/src/protobuf']) {
  const file = join(import.meta.dirname, dir, 'schema.generated.ts');
  writeFileSync(file, await format(out.join('\n'), { ...(await resolveConfig(file)), filepath: file }));
}
console.log(`${Object.keys(messages).length} messages, ${Object.keys(kinds).length} kinds`);
