/**
 * `record` writes a lazily decoded list page without parsing its items (issue #35): a lazy object's unread members are
 * written as the text they were read from (`jsonText`), and the trace is the one written before, when every item was
 * serialized by `JSON.stringify`: byte for byte when the server's text is JSON.stringify's spelling, the same lines once
 * parsed when it is not (Go's escapes, other number forms, whitespace and line breaks between tokens). Redaction is
 * unchanged: Secrets by kind, kind-less Secret-shaped items, `secret: false`.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { defer, of, VirtualTimeScheduler } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { jsonText, lazyParseWatchLine, unparsedText } from '../../../src/1-transport/lazyJson.ts';
import { lazyParseList } from '../../../src/1-transport/lazyList.ts';
import type { ListPage, ListWatch, RawWatchEvent } from '../../../src/1-transport/listWatch.ts';
import { record, type RecordOptions } from '../../../src/1-transport/trace/record.ts';
import { traceWriter } from '../../../src/1-transport/trace/writer.ts';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * `value` as a server might spell it: `<`, `>`, `&` and every non-ASCII unit escaped (Go's encoder escapes the first
 * three), some integers as `1.0` or `1e0`, and `space()` between tokens (spaces, tabs, line breaks).
 */
function spelled(value: Json, space: () => string, rng: () => number): string {
  const s = space;
  if (typeof value === 'string')
    return JSON.stringify(value).replace(/[<>&\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  if (typeof value === 'number' && Number.isInteger(value) && Math.abs(value) < 1e15 && !Object.is(value, -0)) {
    const form = rng();
    return form < 0.2 ? `${value}.0` : form < 0.4 ? `${value}e0` : `${value}`;
  }
  if (Array.isArray(value)) return `[${s()}${value.map((v) => spelled(v, space, rng)).join(`${s()},${s()}`)}${s()}]`;
  if (typeof value === 'object' && value !== null)
    return `{${s()}${Object.keys(value)
      .map((k) => `${spelled(k, space, rng)}${s()}:${s()}${spelled(value[k]!, space, rng)}`)
      .join(`${s()},${s()}`)}${s()}}`;
  return JSON.stringify(value);
}

const tricky = [
  '<b>&amp;</b>',
  'quote " and \\ backslash',
  'tab\tnew\nline',
  'żółw 🐢 \u2028\u2029',
  '\ud800 lone',
  '\u0000\u001f',
  '1e3',
  '-0',
];
const text = fc.oneof(fc.string({ unit: 'binary', maxLength: 12 }), fc.constantFrom(...tricky));
/** Long enough to stay lazy (members under 24 bytes are parsed at once). */
const bulky = fc
  .dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ stringUnit: 'binary', maxDepth: 2 }), { minKeys: 2, maxKeys: 5 })
  .map((value) => ({ ...value, padding: 'x'.repeat(24) }) as Json);

const metadata = fc.record(
  {
    name: text,
    namespace: fc.constantFrom('default', 'kube-system'),
    resourceVersion: fc.nat().map(String),
    annotations: fc.dictionary(fc.constantFrom('a', 'kubectl.kubernetes.io/last-applied-configuration'), text),
    managedFields: fc.array(bulky, { minLength: 1, maxLength: 2 }),
  },
  { requiredKeys: ['name', 'namespace', 'resourceVersion'] },
);
const values = fc.dictionary(fc.string({ maxLength: 5 }), text, { minKeys: 1, maxKeys: 3 });

/** List items (no kind, as listed) of several shapes: pods, kind-less Secret-shaped items, ConfigMaps, Secrets with a kind. */
const item = fc.oneof(
  fc.record({ metadata, spec: bulky, status: bulky }),
  fc.record({ metadata, type: fc.constantFrom('Opaque', 'kubernetes.io/tls'), data: values }, { requiredKeys: ['metadata', 'type'] }),
  fc.record({ metadata, type: fc.constant('Opaque'), stringData: values }),
  fc.record({ metadata, data: values, binaryData: bulky }),
  fc.record({ kind: fc.constant('Secret'), metadata, data: values }),
  fc.record({ kind: fc.constant('Pod'), metadata, spec: bulky, extra: text }),
) as fc.Arbitrary<Json>;

/** What is done to an item before it is recorded: its lazy members never read, all read, or some read, set, frozen. */
type Handling = 'never' | 'all' | { read: readonly number[]; assign: boolean; redefine: boolean; freeze: boolean };
const handling: fc.Arbitrary<Handling> = fc.oneof(
  fc.constant('never' as const),
  fc.constant('all' as const),
  fc.record({ read: fc.array(fc.nat(6), { maxLength: 3 }), assign: fc.boolean(), redefine: fc.boolean(), freeze: fc.boolean() }),
);

function handle(object: Record<string, unknown>, how: Handling): void {
  const keys = Object.keys(object);
  if (how === 'never') return;
  if (how === 'all') {
    void JSON.stringify(object);
    return;
  }
  if (how.assign && keys.includes('spec')) object.spec = { assigned: true };
  if (how.redefine && keys.includes('status')) Object.defineProperty(object, 'status', { value: 'redefined', enumerable: true });
  if (how.freeze) Object.freeze(object);
  for (const i of how.read) {
    const member = object[keys[i % keys.length]!];
    // A member read, then changed in place (a frozen object's too: it keeps the value it read).
    if (how.assign && typeof member === 'object' && member !== null && !Array.isArray(member) && !Object.isFrozen(member))
      (member as Record<string, unknown>).changed = true;
  }
  const meta = object.metadata as Record<string, unknown> | undefined;
  if (meta && how.read.length > 1) void meta.managedFields;
}

const page = fc.record({
  items: fc.array(fc.tuple(item, handling), { maxLength: 6 }),
  resourceVersion: fc.nat().map(String),
  continue: fc.option(fc.constant('c1'), { nil: undefined }),
  remainingItemCount: fc.option(fc.nat(), { nil: undefined }),
});
type Page = typeof page extends fc.Arbitrary<infer T> ? T : never;

/** The page's list body, spelled as JSON.stringify does (`space` undefined) or as a server might. */
function body(p: Page, space?: () => string, rng = Math.random): string {
  const list = {
    kind: 'PodList',
    apiVersion: 'v1',
    metadata: { resourceVersion: p.resourceVersion, ...(p.continue ? { continue: p.continue } : {}) },
    items: p.items.map(([i]) => i),
  } as Json;
  return space ? spelled(list, space, rng) : JSON.stringify(list);
}

/** Records one list request answered by the page read from `listBody` (lazily, or by JSON.parse): the trace's lines. */
function recorded(p: Page, listBody: string, lazy: boolean, options: RecordOptions = {}) {
  const decoded = (lazy ? lazyParseList(listBody) : JSON.parse(listBody)) as { items: Record<string, unknown>[] };
  decoded.items.forEach((object, i) => handle(object, p.items[i]![1]));
  const listed: ListPage = {
    items: decoded.items,
    resourceVersion: p.resourceVersion,
    ...(p.continue === undefined ? {} : { continue: p.continue }),
    ...(p.remainingItemCount === undefined ? {} : { remainingItemCount: p.remainingItemCount }),
  };
  const source: ListWatch = { list: () => defer(() => of(listed)), watch: () => of() };
  let text = '';
  const writer = traceWriter({ write: (line) => (text += line), resources: ['pods'], scheduler: new VirtualTimeScheduler() });
  record(source, writer, options)
    .list({ limit: 6 })
    .subscribe(() => {});
  writer.close();
  // The header's start time aside; a redacted value's hash is keyed per recorder.
  const lines = text
    .split('\n')
    .slice(1)
    .join('\n')
    .replace(/<redacted:[0-9a-f]{12}>/g, '<redacted>');
  return { lines, items: decoded.items };
}

const spaces = ['', '', '', ' ', '\t', '\n', '\r\n', ' \n  '];
const recorders = fc.constantFrom<RecordOptions>({}, { resource: 'secrets' }, { secret: true }, { secret: false }, { redact: false });

/** Whether `record` redacts `object` (so copies it, parsing it whole, as before): the rules of record.ts, restated. */
function redacted(object: Json, options: RecordOptions): boolean {
  const { kind, type, data, stringData } = object as Record<string, Json | undefined>;
  const values = (v: Json | undefined) => typeof v === 'object' && v !== null;
  const shaped = kind === undefined && typeof type === 'string' && (values(data) || values(stringData));
  return (
    options.redact !== false &&
    ((options.secret ?? options.resource === 'secrets') || kind === 'Secret' || (options.secret === undefined && shaped))
  );
}

/** The members of `object` (and of its metadata) still unparsed. */
function unparsed(object: object): string[] {
  const metadata = (object as { metadata?: object }).metadata ?? {};
  return [
    ...Object.keys(object).filter((key) => unparsedText(object, key) !== undefined),
    ...Object.keys(metadata)
      .filter((key) => unparsedText(metadata, key) !== undefined)
      .map((key) => `metadata.${key}`),
  ];
}

describe('record writes a lazily decoded list page from its members’ texts (issue #35)', () => {
  it('the same trace as from the parsed items, byte for byte; an item not redacted stays as it was, unread members unparsed', () => {
    fc.assert(
      fc.property(page, recorders, (p, options) => {
        const text = body(p);
        const lazy = recorded(p, text, true, options);
        expect(lazy.lines).toBe(recorded(p, text, false, options).lines);
        const fresh = (lazyParseList(text) as { items: object[] }).items;
        lazy.items.forEach((object, i) => {
          const [value, how] = p.items[i]!;
          if (how === 'never' && !redacted(value, options)) expect(unparsed(object)).toEqual(unparsed(fresh[i]!));
        });
      }),
      { numRuns: 150 },
    );
  });

  it('a server’s spelling (escapes, number forms, whitespace and line breaks): the same lines once parsed, each one line', () => {
    fc.assert(
      fc.property(page, recorders, fc.array(fc.constantFrom(...spaces), { minLength: 1 }), fc.nat(), (p, options, gaps, seed) => {
        let n = seed;
        const rng = () => (n = (n * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
        const text = body(p, () => gaps[n++ % gaps.length]!, rng);
        const lazy = recorded(p, text, true, options).lines;
        const eager = recorded(p, body(p), false, options).lines;
        const lines = (t: string) =>
          t
            .split('\n')
            .filter((l) => l !== '')
            .map((l) => JSON.parse(l) as unknown);
        expect(lines(lazy)).toEqual(lines(eager));
        expect(lazy.includes('\r')).toBe(false);
        expect(lazy.split('\n')).toHaveLength(eager.split('\n').length);
      }),
      { numRuns: 150 },
    );
  });
});

describe('jsonText', () => {
  const lazy = () =>
    lazyParseWatchLine(
      '{"type":"ADDED","object":{"metadata":{"name":"a","managedFields":[{"manager":"kubectl","operation":"Apply"}]},"spec":{"containers":[{"name":"c"}]},"status":{"phase":"Running","podIP":"10.0.0.1"}}}',
    ).object as Record<string, unknown>;

  it('is JSON.stringify of anything not lazily decoded', () => {
    for (const value of [undefined, null, 1, 'x', [1, { a: undefined }], { a: 1, b: () => 0 }, new Date(0), { toJSON: () => 'mine' }])
      expect(jsonText(value)).toBe(JSON.stringify(value));
  });

  it('splices unread members and leaves them unread; a member set to undefined or a function is left out, as JSON.stringify does', () => {
    const object = lazy();
    const before = JSON.stringify(lazy());
    expect(jsonText(object)).toBe(before);
    expect(unparsedText(object, 'spec')).toBeDefined();
    expect(unparsedText(object.metadata as object, 'managedFields')).toBeDefined();
    object.status = undefined;
    object.extra = () => 0;
    expect(jsonText(object)).toBe(JSON.stringify({ ...JSON.parse(before), status: undefined }));
    expect(unparsedText(object, 'spec')).toBeDefined();
  });

  it('a lazy object with a toJSON of its own, or a cycle, is JSON.stringify’s (which names the cycle)', () => {
    const own = lazy();
    own.toJSON = () => 'own';
    expect(jsonText(own)).toBe('"own"');
    const cyclic = lazy();
    (cyclic.metadata as Record<string, unknown>).self = cyclic;
    expect(() => jsonText(cyclic)).toThrow(/circular/i);
  });
});

describe('record writes a lazily decoded watch event it must serialize (a watch without lines) from its members’ texts', () => {
  it('the same event line as from the parsed event, the object left unread', () => {
    const line =
      '{"type":"MODIFIED","object":{"kind":"Pod","metadata":{"name":"a","managedFields":[{"manager":"kubectl","operation":"Apply"}]},"spec":{"nodeName":"n1","containers":[]}}}';
    const run = (event: RawWatchEvent) => {
      let text = '';
      const writer = traceWriter({ write: (l) => (text += l), resources: ['pods'], scheduler: new VirtualTimeScheduler() });
      record({ list: () => of(), watch: () => of(event) }, writer)
        .watch({})
        .subscribe(() => {});
      return text.split('\n').slice(1).join('\n');
    };
    const lazyEvent = lazyParseWatchLine(line) as RawWatchEvent;
    expect(run(lazyEvent)).toBe(run(JSON.parse(line) as RawWatchEvent));
    expect(unparsedText(lazyEvent.object as object, 'spec')).toBeDefined();
  });
});

describe('record writes a real kube-apiserver v1.20 list page lazily as it did eagerly', () => {
  const fixtures = new URL('../../fixtures/kube-apiserver-v1.20/', import.meta.url);
  it.each(['02c-list-configmaps.json', '02d-list-configmaps-limit2-page1.json', '03a-list-before-watch.json'])('%s', (name) => {
    const { body } = (JSON.parse(readFileSync(new URL(name, fixtures), 'utf8')) as { response: { body: { items: Json[] } } }).response;
    // The server's body is JSON.stringify's spelling (`bodyIsExactlyJSONStringifyPlusNewline`): the same bytes either way.
    const p: Page = {
      items: body.items.map((i) => [i, 'never']),
      resourceVersion: '693',
      continue: undefined,
      remainingItemCount: undefined,
    };
    const text = JSON.stringify(body);
    const lazy = recorded(p, text, true);
    expect(lazy.lines).toBe(recorded(p, text, false).lines);
    expect(lazy.items.length).toBeGreaterThan(1);
    // Their managedFields at least were left unparsed.
    for (const item of lazy.items) expect(unparsed(item)).toContain('metadata.managedFields');
  });
});
