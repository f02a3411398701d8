/**
 * The eager decoder specialised per message: at start-up, one JavaScript function per message of the schema, a
 * `switch` on the whole tag (field number and its expected wire type) with the JSON name of each field a constant
 * property, so each store has one shape to learn instead of the schema walker's one generic store for every field
 * of every message. Any other tag of a known field goes to the generic walker (packed lists, unexpected wire
 * types, which it rejects); an unknown field is skipped by wire type.
 */
import { K, type Field, type Message } from '../../src/1-transport/protobuf/schema.ts';

/** What the generated code calls: the decoder's readers over its current buffer and position. */
export interface Helpers {
  varint(end: number): number;
  int64(end: number): number;
  lengthEnd(end: number): number;
  skip(wireType: number, end: number): void;
  str(start: number, end: number): string;
  /** A length-delimited value of a kind other than a string or a message (bytes, times, quantities, …), pos at its first byte. */
  value(kind: number, end: number): unknown;
  getPos(): number;
  setPos(pos: number): void;
  /** The schema walker, for one field occurrence (tag read). */
  generic(target: Record<string, unknown>, messageName: string, tag: number, end: number): void;
}

export type MessageDecoder = (target: Record<string, unknown>, end: number) => void;

const id = (name: string) => `m_${name}`;

/** An expression reading one value of `f` whose tag was just read (pos after the tag). */
function valueCode(f: Field): { wireType: number; code: string } {
  const delimited = (inner: string) => ({ wireType: 2, code: `(e = h.lengthEnd(end), v = ${inner}, h.setPos(e), v)` });
  switch (f.kind) {
    case K.string:
      return delimited('h.str(h.getPos(), e)');
    case K.int32:
    case K.int64:
      return { wireType: 0, code: 'h.int64(end)' };
    case K.bool:
      return { wireType: 0, code: 'h.varint(end) !== 0' };
    case K.msg:
      return delimited(`(v = {}, ${id(f.msg!.name)}(v, e), v)`);
    case K.bytes:
    case K.time:
    case K.microTime:
    case K.quantity:
    case K.intOrString:
    case K.fieldsV1:
    case K.raw:
    case K.duration:
      return delimited(`h.value(${f.kind}, e)`);
    default:
      // double and anything else: the generic walker.
      return { wireType: -1, code: '' };
  }
}

function zeroTest(f: Field): string {
  return f.kind === K.string || f.kind === K.bytes ? `v !== ''` : f.kind === K.bool ? 'v' : 'v !== 0';
}

function defaultCode(f: Field): string {
  if (f.rep || f.map) return f.json === 'items' ? '[]' : 'null';
  switch (f.kind) {
    case K.string:
    case K.bytes:
      return "''";
    case K.int32:
    case K.int64:
    case K.double:
    case K.intOrString:
      return '0';
    case K.bool:
      return 'false';
    case K.msg:
      return `(v = {}, ${id(f.msg!.name)}(v, h.getPos()), v)`;
    case K.quantity:
      return "'0'";
    case K.duration:
      return "'0s'";
    default:
      return 'null';
  }
}

function caseCode(msg: Message, f: Field): string {
  const key = JSON.stringify(f.json);
  const { wireType, code } = valueCode(f);
  if (wireType < 0 || f.map) return '';
  const tag = (f.n << 3) | wireType;
  let body: string;
  if (f.inline) body = `e = h.lengthEnd(end); ${id(f.msg!.name)}(o, e); h.setPos(e);`;
  else if (f.rep) body = `v = ${code}; (o[${key}] ??= []).push(v);`;
  else if (f.presence === 'omit') body = `v = ${code}; if (${zeroTest(f)}) o[${key}] = v;`;
  else body = `o[${key}] = ${code};`;
  void msg;
  return `      case ${tag}: ${body} break;`;
}

function messageCode(msg: Message): string {
  const cases = msg.fields.map((f) => caseCode(msg, f)).filter(Boolean);
  const known = msg.fields.map((f) => f.n);
  const always = msg.always.map(
    (f) => `  if (o[${JSON.stringify(f.json)}] === undefined) o[${JSON.stringify(f.json)}] = ${defaultCode(f)};`,
  );
  const lists = msg.lists.map((k) => `  if (o[${JSON.stringify(k)}]) o[${JSON.stringify(k)}] = o[${JSON.stringify(k)}].slice();`);
  return [
    `function ${id(msg.name)}(o, end) {`,
    '  let e = 0, v;',
    '  while (h.getPos() < end) {',
    '    const tag = h.varint(end);',
    '    switch (tag) {',
    ...cases,
    known.length > 0
      ? `      default: if (KNOWN_${msg.name}.has(tag >>> 3)) h.generic(o, ${JSON.stringify(msg.name)}, tag, end); else h.skip(tag & 7, end);`
      : '      default: h.skip(tag & 7, end);',
    '    }',
    '  }',
    ...always,
    ...lists,
    '}',
    `const KNOWN_${msg.name} = new Set(${JSON.stringify(known)});`,
  ].join('\n');
}

/** One decoder per message, from the schema's messages. */
export function compileDecoders(messages: readonly Message[], helpers: Helpers): Map<string, MessageDecoder> {
  const source = [
    ...messages.map(messageCode),
    `return new Map([${messages.map((m) => `[${JSON.stringify(m.name)}, ${id(m.name)}]`).join(', ')}]);`,
  ].join('\n');
  // Generated from the schema at start-up, as protobufjs does: no input ever reaches the source text.
  return new Function('h', source)(helpers) as Map<string, MessageDecoder>;
}
