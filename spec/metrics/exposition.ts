/**
 * A strict parser of the Prometheus text exposition format 0.0.4 (as Prometheus' own `textparse` and the
 * OpenMetrics rules read it, minus what nobody sends): it throws, naming the line, on anything a strict
 * scraper would reject or silently collapse.
 *
 * - `# HELP` and `# TYPE` at most once per family, before its first sample; help text escapes only `\\` and `\n`.
 * - A family's samples come together: a family seen again after another one began is an error.
 * - One sample per series: the same name and label set twice is an error (Prometheus keeps one of them).
 * - Metric and label names by the format's grammar, no label twice in a sample, no `__` label names;
 *   label values escape only `\\`, `\"` and `\n`; values are floats (or NaN, +Inf, -Inf), with an optional
 *   integer timestamp.
 * - `_sum`, `_count` (summary and histogram), `_bucket` (histogram) samples belong to their family.
 */
export interface ParsedSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface ParsedFamily {
  readonly name: string;
  help?: string;
  type?: string;
  readonly samples: ParsedSample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/;
const TYPES = new Set(['counter', 'gauge', 'summary', 'histogram', 'untyped']);
const VALUE = /^(?:[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|NaN|[+-]Inf)$/;

export function parseExposition(text: string): ParsedFamily[] {
  if (text.length > 0 && !text.endsWith('\n')) throw new Error('the text does not end with a line feed');
  const families = new Map<string, ParsedFamily>();
  const closed = new Set<string>();
  const series = new Set<string>();
  let current: ParsedFamily | undefined;
  const lines = text.split('\n').slice(0, -1);

  const open = (name: string, n: number): ParsedFamily => {
    if (current?.name === name) return current;
    if (current) closed.add(current.name);
    if (closed.has(name)) throw new Error(`line ${n}: family ${name} appears again after another family began`);
    const family: ParsedFamily = families.get(name) ?? { name, samples: [] };
    families.set(name, family);
    current = family;
    return family;
  };

  lines.forEach((line, i) => {
    const n = i + 1;
    if (line === '') return;
    if (line.startsWith('#')) {
      const meta = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(line);
      if (!meta) return; // a comment
      const [, keyword, name, rest = ''] = meta;
      if (!METRIC_NAME.test(name!) || METRIC_NAME.exec(name!)![0] !== name) throw new Error(`line ${n}: bad metric name ${name}`);
      const family = open(name!, n);
      if (family.samples.length > 0) throw new Error(`line ${n}: # ${keyword} ${name} after its samples`);
      if (keyword === 'HELP') {
        if (family.help !== undefined) throw new Error(`line ${n}: a second # HELP for ${name}`);
        family.help = unescape(rest, false, n);
      } else {
        if (family.type !== undefined) throw new Error(`line ${n}: a second # TYPE for ${name}`);
        if (!TYPES.has(rest)) throw new Error(`line ${n}: unknown type ${JSON.stringify(rest)}`);
        family.type = rest;
      }
      return;
    }
    const sample = parseSample(line, n);
    const familyName = familyOf(sample.name, current);
    const family = open(familyName, n);
    const key = JSON.stringify([sample.name, Object.entries(sample.labels).sort(([a], [b]) => (a < b ? -1 : 1))]);
    if (series.has(key)) throw new Error(`line ${n}: a second sample of the series ${line.slice(0, line.lastIndexOf(' '))}`);
    series.add(key);
    family.samples.push(sample);
  });
  return [...families.values()];
}

/** `x_sum` of a summary `x` is in `x`'s family; any other name is its own family. */
function familyOf(name: string, current: ParsedFamily | undefined): string {
  if (!current || current.name === name) return name;
  const suffixes = current.type === 'summary' ? ['_sum', '_count'] : current.type === 'histogram' ? ['_sum', '_count', '_bucket'] : [];
  return suffixes.some((s) => name === current.name + s) ? current.name : name;
}

function parseSample(line: string, n: number): ParsedSample {
  const name = METRIC_NAME.exec(line)?.[0];
  if (!name) throw new Error(`line ${n}: no metric name: ${JSON.stringify(line)}`);
  let at = name.length;
  const labels: Record<string, string> = {};
  if (line[at] === '{') {
    at++;
    while (line[at] !== '}') {
      const label = LABEL_NAME.exec(line.slice(at))?.[0];
      if (!label) throw new Error(`line ${n}: bad label name at column ${at}`);
      if (label.startsWith('__')) throw new Error(`line ${n}: reserved label name ${label}`);
      if (label in labels) throw new Error(`line ${n}: label ${label} twice`);
      at += label.length;
      if (line.slice(at, at + 2) !== '="') throw new Error(`line ${n}: expected =" after ${label}`);
      at += 2;
      let value = '';
      for (;;) {
        const c = line[at];
        if (c === undefined) throw new Error(`line ${n}: unterminated label value`);
        if (c === '"') break;
        if (c === '\\') {
          const next = line[at + 1];
          if (next === '\\' || next === '"') value += next;
          else if (next === 'n') value += '\n';
          else throw new Error(`line ${n}: bad escape \\${next ?? ''} in a label value`);
          at += 2;
        } else {
          value += c;
          at++;
        }
      }
      labels[label] = value;
      at++;
      if (line[at] === ',') {
        at++;
        if (line[at] === '}') throw new Error(`line ${n}: a trailing comma in the labels`);
      } else if (line[at] !== '}') throw new Error(`line ${n}: expected , or } at column ${at}`);
    }
    at++;
  }
  if (line[at] !== ' ') throw new Error(`line ${n}: expected a space before the value`);
  const [value, timestamp, ...extra] = line.slice(at + 1).split(' ');
  if (value === undefined || !VALUE.test(value)) throw new Error(`line ${n}: bad value ${JSON.stringify(value)}`);
  if (timestamp !== undefined && !/^-?\d+$/.test(timestamp)) throw new Error(`line ${n}: bad timestamp ${JSON.stringify(timestamp)}`);
  if (extra.length > 0) throw new Error(`line ${n}: more after the value`);
  const parsed = value === 'NaN' ? NaN : value === '+Inf' ? Infinity : value === '-Inf' ? -Infinity : Number(value);
  return { name, labels, value: parsed };
}

function unescape(text: string, quotes: boolean, n: number): string {
  return text.replace(/\\(.?)/g, (_, c: string) => {
    if (c === '\\') return '\\';
    if (c === 'n') return '\n';
    if (quotes && c === '"') return '"';
    throw new Error(`line ${n}: bad escape \\${c} in help text`);
  });
}
