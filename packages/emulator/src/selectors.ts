/**
 * Label and field selectors, parsed like k8s.io/apimachinery (same grammar,
 * same error messages for the common mistakes).
 */
import { badRequest } from './status.ts';

export type LabelOperator = '=' | '==' | '!=' | 'in' | 'notin' | 'exists' | '!' | 'gt' | 'lt';

export interface LabelRequirement {
  key: string;
  op: LabelOperator;
  values: string[];
}

export type LabelSelector = LabelRequirement[];

type Tok = 'ident' | 'eos' | 'comma' | 'open' | 'close' | 'eq' | 'deq' | 'neq' | 'not' | 'in' | 'notin' | 'gt' | 'lt' | 'error';

interface Token {
  tok: Tok;
  lit: string;
}

const SPECIAL: Record<string, Tok> = {
  '!': 'not',
  '!=': 'neq',
  '(': 'open',
  ')': 'close',
  ',': 'comma',
  '=': 'eq',
  '==': 'deq',
  '>': 'gt',
  '<': 'lt',
};
const isSpecial = (c: string): boolean => '=!(),><'.includes(c);
const isSpace = (c: string): boolean => c === ' ' || c === '\t' || c === '\r' || c === '\n';

function lex(input: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (true) {
    while (i < input.length && isSpace(input[i]!)) i++;
    if (i >= input.length) {
      out.push({ tok: 'eos', lit: '' });
      return out;
    }
    const c = input[i]!;
    if (isSpecial(c)) {
      let buf = '';
      let last: Token | undefined;
      while (i < input.length && isSpecial(input[i]!)) {
        const next = buf + input[i];
        const t = SPECIAL[next];
        if (t) {
          buf = next;
          last = { tok: t, lit: next };
          i++;
        } else if (last) break;
        else {
          buf = next;
          i++;
        }
      }
      out.push(last ?? { tok: 'error', lit: `error expected: keyword found '${buf}'` });
      if (!last) return [...out, { tok: 'eos', lit: '' }];
    } else {
      let j = i;
      while (j < input.length && !isSpace(input[j]!) && !isSpecial(input[j]!)) j++;
      const word = input.slice(i, j);
      i = j;
      out.push({ tok: word === 'in' ? 'in' : word === 'notin' ? 'notin' : 'ident', lit: word });
    }
  }
}

class Parser {
  private pos = 0;
  private readonly toks: Token[];
  constructor(input: string) {
    this.toks = lex(input);
  }
  /** In the Values context, keywords are identifiers. */
  private look(values: boolean): Token {
    const t = this.toks[Math.min(this.pos, this.toks.length - 1)]!;
    if (values && (t.tok === 'in' || t.tok === 'notin')) return { tok: 'ident', lit: t.lit };
    return t;
  }
  private take(values: boolean): Token {
    const t = this.look(values);
    if (this.pos < this.toks.length - 1) this.pos++;
    return t;
  }

  parse(): LabelSelector {
    const reqs: LabelRequirement[] = [];
    for (;;) {
      const { tok, lit } = this.look(true);
      if (tok === 'ident' || tok === 'not') {
        let r: LabelRequirement;
        try {
          r = this.requirement();
        } catch (e) {
          throw new Error(`unable to parse requirement: ${(e as Error).message}`);
        }
        reqs.push(r);
        const t = this.take(true);
        if (t.tok === 'eos') return reqs;
        if (t.tok === 'comma') {
          const t2 = this.look(true);
          if (t2.tok !== 'ident' && t2.tok !== 'not') {
            throw new Error(`found '${t2.lit}', expected: identifier after ','`);
          }
        } else throw new Error(`found '${t.lit}', expected: ',' or 'end of string'`);
      } else if (tok === 'eos') return reqs;
      else throw new Error(`found '${lit}', expected: !, identifier, or 'end of string'`);
    }
  }

  private requirement(): LabelRequirement {
    let op: LabelOperator | undefined;
    let t = this.take(true);
    if (t.tok === 'not') {
      op = '!';
      t = this.take(true);
    }
    if (t.tok !== 'ident') throw new Error(`found '${t.lit}', expected: identifier`);
    const key = t.lit;
    validateLabelKey(key);
    if (op === '!') return { key, op, values: [] };
    const next = this.look(true).tok;
    if (next === 'eos' || next === 'comma') return { key, op: 'exists', values: [] };
    const o = this.take(false);
    let values: string[];
    switch (o.tok) {
      case 'in':
      case 'notin':
        op = o.tok;
        values = this.valueSet();
        if (values.length === 0) throw new Error("for 'in', 'notin' operators, values set can't be empty");
        break;
      case 'eq':
      case 'deq':
      case 'neq':
      case 'gt':
      case 'lt': {
        op = o.tok === 'eq' ? '=' : o.tok === 'deq' ? '==' : o.tok === 'neq' ? '!=' : o.tok;
        const v = this.look(true);
        if (v.tok === 'eos' || v.tok === 'comma') values = [''];
        else {
          const vv = this.take(true);
          if (vv.tok !== 'ident') throw new Error(`found '${vv.lit}', expected: identifier`);
          values = [vv.lit];
        }
        if ((op === 'gt' || op === 'lt') && !/^-?\d+$/.test(values[0]!)) {
          throw new Error(`for 'Gt', 'Lt' operators, the value must be an integer`);
        }
        break;
      }
      default:
        throw new Error(`found '${o.lit}', expected: in, notin, =, ==, !=, gt, lt`);
    }
    for (const v of values) validateLabelValue(v);
    return { key, op, values };
  }

  private valueSet(): string[] {
    const t = this.take(true);
    if (t.tok !== 'open') throw new Error(`found '${t.lit}' expected: '('`);
    const la = this.look(true);
    if (la.tok === 'close') {
      this.take(true);
      return [''];
    }
    if (la.tok !== 'ident' && la.tok !== 'comma') {
      throw new Error(`found '${la.lit}', expected: ',', ')' or identifier`);
    }
    const set = new Set<string>();
    for (;;) {
      const v = this.take(true);
      if (v.tok === 'ident') {
        set.add(v.lit);
        const n = this.look(true);
        if (n.tok === 'comma') {
          this.take(true);
          const n2 = this.look(true);
          if (n2.tok === 'close') {
            set.add('');
            this.take(true);
            break;
          }
          continue;
        }
        if (n.tok === 'close') {
          this.take(true);
          break;
        }
        throw new Error(`found '${n.lit}', expected: ',' or ')'`);
      } else if (v.tok === 'comma') {
        set.add('');
        const n = this.look(true);
        if (n.tok === 'close') {
          this.take(true);
          break;
        }
      } else throw new Error(`found '${v.lit}', expected: ',', or identifier`);
    }
    return [...set].sort();
  }
}

const QUALIFIED_NAME = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function validateLabelKey(key: string): void {
  const slash = key.indexOf('/');
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const bad =
    name.length === 0 ||
    name.length > 63 ||
    !QUALIFIED_NAME.test(name) ||
    (prefix !== undefined && (prefix.length === 0 || prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix)));
  if (bad) {
    throw new Error(
      `key: Invalid value: ${JSON.stringify(key)}: name part must consist of alphanumeric characters, '-', ` +
        `'_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or ` +
        `'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
    );
  }
}

function validateLabelValue(value: string): void {
  if (value.length > 63 || !LABEL_VALUE.test(value)) {
    throw new Error(
      `values[0][key]: Invalid value: ${JSON.stringify(value)}: a valid label must be an empty string or ` +
        `consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric ` +
        `character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')`,
    );
  }
}

/** Parses a label selector; throws a 400 BadRequest ApiError when malformed (06h). */
export function parseLabelSelector(input: string): LabelSelector {
  try {
    return new Parser(input).parse();
  } catch (e) {
    throw badRequest((e as Error).message);
  }
}

export function matchesLabels(sel: LabelSelector, labels: Record<string, string> | undefined): boolean {
  for (const r of sel) {
    const has = labels !== undefined && Object.prototype.hasOwnProperty.call(labels, r.key);
    const v = has ? labels![r.key]! : undefined;
    switch (r.op) {
      case '=':
      case '==':
      case 'in':
        if (!has || !r.values.includes(v!)) return false;
        break;
      case '!=':
      case 'notin':
        if (has && r.values.includes(v!)) return false;
        break;
      case 'exists':
        if (!has) return false;
        break;
      case '!':
        if (has) return false;
        break;
      case 'gt':
      case 'lt': {
        if (!has || !/^-?\d+$/.test(v!)) return false;
        const n = Number(v);
        const bound = Number(r.values[0]);
        if (r.op === 'gt' ? !(n > bound) : !(n < bound)) return false;
        break;
      }
    }
  }
  return true;
}

export interface FieldRequirement {
  field: string;
  op: '=' | '!=';
  value: string;
}

export type FieldSelector = FieldRequirement[];

function splitUnescaped(s: string, sep: string): string[] {
  const parts: string[] = [];
  let cur = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '\\' && i + 1 < s.length) {
      cur += c + s[i + 1];
      i++;
    } else if (c === sep) {
      parts.push(cur);
      cur = '';
    } else cur += c;
  }
  parts.push(cur);
  return parts;
}

function unescapeFieldValue(v: string): string {
  let out = '';
  for (let i = 0; i < v.length; i++) {
    const c = v[i]!;
    if (c === '\\') {
      const n = v[i + 1];
      if (n === '\\' || n === ',' || n === '=') {
        out += n;
        i++;
        continue;
      }
      throw badRequest(`invalid field selector: invalid escape sequence: \\${n ?? ''}`);
    }
    if (c === ',' || c === '=') throw badRequest(`invalid field selector: unescaped ${c} in value`);
    out += c;
  }
  return out;
}

/** Parses a field selector (`a=b,c!=d`, `==` allowed); throws 400 when malformed. */
export function parseFieldSelector(input: string): FieldSelector {
  if (input.trim() === '') return [];
  const out: FieldRequirement[] = [];
  for (const term of splitUnescaped(input, ',')) {
    let m: RegExpMatchArray | null;
    if ((m = /^([^=!]*)!=(.*)$/s.exec(term))) out.push({ field: m[1]!.trim(), op: '!=', value: unescapeFieldValue(m[2]!) });
    else if ((m = /^([^=!]*)==(.*)$/s.exec(term))) out.push({ field: m[1]!.trim(), op: '=', value: unescapeFieldValue(m[2]!) });
    else if ((m = /^([^=!]*)=(.*)$/s.exec(term))) out.push({ field: m[1]!.trim(), op: '=', value: unescapeFieldValue(m[2]!) });
    else throw badRequest(`invalid selector: '${input}'; can't understand '${term}'`);
  }
  return out;
}

export function matchesFields(sel: FieldSelector, fields: Record<string, string>): boolean {
  for (const r of sel) {
    const v = fields[r.field] ?? '';
    if (r.op === '=' ? v !== r.value : v === r.value) return false;
  }
  return true;
}
