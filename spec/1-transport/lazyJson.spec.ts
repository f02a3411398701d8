import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { isDeepStrictEqual } from 'node:util';
import { hasUnparsedMembers, isSkipped, lazyParseObject, lazyParseWatchLine } from '../../src/1-transport/lazyJson.ts';
import { LazyListReader, lazyParseList } from '../../src/1-transport/lazyList.ts';
import { parseWatchLine, parseWatchLineLazily } from '../../src/1-transport/httpTransport.ts';
import { KubeObject } from '../../src/index.ts';
import { decoder } from '../../src/pipeline.ts';

/** Objects shaped like Kubernetes objects, with arbitrary JSON in every member (escapes, unicode, nesting). */
const kubeLike = fc.record(
  {
    apiVersion: fc.string(),
    kind: fc.string(),
    metadata: fc.record(
      {
        name: fc.string({ minLength: 1 }),
        namespace: fc.string(),
        labels: fc.dictionary(fc.string(), fc.string()),
        managedFields: fc.array(fc.jsonValue(), { maxLength: 4 }),
        extra: fc.jsonValue(),
      },
      { requiredKeys: ['name'] },
    ),
    spec: fc.jsonValue(),
    status: fc.jsonValue(),
    'key with "quotes" \\ and \u00e9': fc.jsonValue(),
    __proto__: fc.jsonValue(),
  },
  { requiredKeys: [] },
);

/** The same JSON written compactly or with indentation. */
const texts = (value: unknown) => [JSON.stringify(value), JSON.stringify(value, null, 2), ` ${JSON.stringify(value, null, '\t')}\n`];

describe('lazy decoding', () => {
  it('gives what JSON.parse gives, read member by member, spread, stringified or cloned', () => {
    fc.assert(
      fc.property(kubeLike, fc.integer({ min: 0, max: 2 }), (value, style) => {
        const text = texts(value)[style]!;
        const expected = JSON.parse(text) as Record<string, unknown>;
        expect(JSON.stringify(lazyParseObject(text))).toBe(JSON.stringify(expected));
        expect(structuredClone(lazyParseObject(text))).toEqual(structuredClone(expected));
        expect({ ...lazyParseObject(text) }).toEqual({ ...expected });
        const lazy = lazyParseObject(text);
        expect(Object.keys(lazy)).toEqual(Object.keys(expected));
        for (const key of Object.keys(expected)) expect(lazy[key]).toEqual(expected[key]);
        expect(hasUnparsedMembers(lazy)).toBe(false);
      }),
    );
  });

  it('parses apiVersion, kind and metadata at once, managedFields and the rest on first read', () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web-1', namespace: 'default', managedFields: [{ manager: 'kubectl', fieldsV1: { 'f:spec': {} } }], uid: 'u-1' },
      spec: { containers: [{ name: 'app', image: 'nginx:1.27', env: [{ name: 'A', value: '}]"{[' }] }] },
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
    };
    const lazy = lazyParseObject(JSON.stringify(pod)) as typeof pod;
    const own = (o: object, k: string) => Object.getOwnPropertyDescriptor(o, k)!;
    expect(own(lazy, 'metadata').value).toBeDefined();
    expect(own(lazy, 'spec').get).toBeTypeOf('function');
    expect(own(lazy.metadata, 'managedFields').get).toBeTypeOf('function');
    // Key order is the server's, managedFields included.
    expect(Object.keys(lazy.metadata)).toEqual(['name', 'namespace', 'managedFields', 'uid']);
    expect(hasUnparsedMembers(lazy)).toBe(true);
    expect(lazy.spec.containers[0]!.env[0]!.value).toBe('}]"{[');
    // Read once, then a plain data property with a stable identity.
    expect(own(lazy, 'spec').value).toBe(lazy.spec);
    expect(lazy.status.phase).toBe('Running');
    expect(hasUnparsedMembers(lazy)).toBe(false);
    expect(lazy.metadata.managedFields[0]!.manager).toBe('kubectl');
    expect(hasUnparsedMembers(lazy.metadata)).toBe(false);
  });

  it('property: short keys and values decoded one after another are never mixed up (the decoder keeps recent ones)', () => {
    // Short ASCII texts of equal length, many of them sharing a slot of the decoder's cache of recent texts.
    const short = fc.string({ unit: fc.constantFrom('a', 'b', 'A', '1', '-', '/', '\u00e9', '"'), minLength: 0, maxLength: 6 });
    fc.assert(
      fc.property(fc.array(fc.tuple(short, short, short), { minLength: 1, maxLength: 40 }), (members) => {
        for (const [key, kind, type] of members) {
          const line = JSON.stringify({ type, object: { kind, metadata: { name: 'n' }, [key]: kind } });
          const event = lazyParseWatchLine(line) as { type: unknown; object: Record<string, unknown> };
          expect(event.type).toBe(type);
          expect(event.object).toEqual(JSON.parse(line).object);
          expect(Object.keys(event.object)).toEqual(Object.keys(JSON.parse(line).object as object));
        }
      }),
    );
  });

  it('keeps what it has not parsed where no key, symbol, prototype or copy shows it', () => {
    const pod = {
      kind: 'Pod',
      metadata: { name: 'web-1', managedFields: [{ manager: 'kubectl', fieldsV1: { 'f:spec': {} } }] },
      spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] },
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
    };
    const lazy = lazyParseObject(JSON.stringify(pod)) as typeof pod;
    expect(hasUnparsedMembers(lazy)).toBe(true);
    expect(hasUnparsedMembers(lazy.metadata)).toBe(true);
    for (const object of [lazy, lazy.metadata]) {
      expect(Object.getPrototypeOf(object)).toBe(Object.prototype);
      expect(Object.getOwnPropertySymbols(object)).toEqual([]);
    }
    expect(Reflect.ownKeys(lazy)).toEqual(['kind', 'metadata', 'spec', 'status']);
    expect(Reflect.ownKeys(lazy.metadata)).toEqual(['name', 'managedFields']);
    // Copies hold parsed values only, nothing unparsed.
    for (const copy of [{ ...lazy }, structuredClone(lazy), Object.assign({}, lazy)]) expect(hasUnparsedMembers(copy)).toBe(false);
    expect(hasUnparsedMembers(lazy)).toBe(false);
    expect(hasUnparsedMembers(lazy.metadata)).toBe(false);
    expect(isDeepStrictEqual(lazy, pod)).toBe(true);
    expect(Reflect.ownKeys(lazy)).toEqual(['kind', 'metadata', 'spec', 'status']);
  });

  it('says so when a member is read on a copy of its property descriptors (which holds no text), and the original stays whole', () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'web-1' },
      spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] },
    };
    const original = lazyParseObject(JSON.stringify(pod)) as typeof pod;
    const copy = Object.defineProperties({}, Object.getOwnPropertyDescriptors(original)) as typeof pod;
    expect(() => copy.spec).toThrow(/member "spec" of a lazily decoded object read on a copy of its property descriptors/);
    expect(original.spec).toEqual(pod.spec);
    expect({ ...lazyParseObject(JSON.stringify(pod)) }).toEqual(pod);
  });

  it('takes assignment and deletion of an unread member', () => {
    const lazy = lazyParseObject(
      JSON.stringify({ metadata: { name: 'a' }, spec: { replicas: 3, selector: { app: 'web' } }, status: { ready: 2, observed: 'yes' } }),
    ) as Record<string, unknown>;
    lazy.spec = { replicas: 5 };
    expect(lazy.spec).toEqual({ replicas: 5 });
    delete lazy.status;
    expect(JSON.parse(JSON.stringify(lazy))).toEqual({ metadata: { name: 'a' }, spec: { replicas: 5 } });
  });

  it('reads a frozen object whose members were never read', () => {
    const lazy = Object.freeze(
      lazyParseObject(JSON.stringify({ metadata: { name: 'a' }, spec: { replicas: 3, selector: { app: 'web' } } })),
    ) as { spec: { replicas: number } };
    expect(lazy.spec.replicas).toBe(3);
    expect(lazy.spec).toBe(lazy.spec);
    expect(JSON.parse(JSON.stringify(lazy))).toEqual({ metadata: { name: 'a' }, spec: { replicas: 3, selector: { app: 'web' } } });
  });

  it('decodes watch lines and list pages', () => {
    const object = {
      kind: 'ConfigMap',
      apiVersion: 'v1',
      metadata: { name: 'c', resourceVersion: '7' },
      data: { k: 'a long enough value to stay lazy' },
    };
    const event = lazyParseWatchLine(JSON.stringify({ type: 'MODIFIED', object }));
    expect(event.type).toBe('MODIFIED');
    expect(JSON.parse(JSON.stringify(event.object))).toEqual(object);
    const list = {
      kind: 'ConfigMapList',
      apiVersion: 'v1',
      metadata: { resourceVersion: '9', continue: 'x' },
      items: [object, { ...object, metadata: { name: 'd' } }],
    };
    const lazy = lazyParseList(JSON.stringify(list, null, 1));
    expect(JSON.parse(JSON.stringify(lazy))).toEqual(list);
    expect(lazyParseList('{"items":[]}')).toEqual({ items: [] });
    // A "__proto__" member is plain data, as with JSON.parse, and does not become the list's prototype.
    const odd = lazyParseList('{"__proto__":{"polluted":true},"items":[]}');
    expect(Object.getPrototypeOf(odd)).toBe(Object.prototype);
    expect(Object.prototype.hasOwnProperty.call(odd, '__proto__')).toBe(true);
  });

  it('rejects truncated and malformed text at once', () => {
    const line = JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a' }, spec: { containers: [{ name: 'x' }] } } });
    fc.assert(
      fc.property(fc.integer({ min: 1, max: line.length - 1 }), (cut) => {
        expect(() => lazyParseWatchLine(line.slice(0, cut))).toThrow();
      }),
    );
    for (const bad of ['', '[1,2]', '{"a":1 "b":2}', '{"a":}', '{"a":1}x', '{"a":"unterminated}', '{a:1}', '{"a":[1,2}]}']) {
      // Structure errors are the scanner's; a short member is parsed at once, so JSON.parse may find it first.
      expect(() => lazyParseObject(bad), bad).toThrow(/position|JSON/);
    }
  });

  it('rejects a syntax error inside a member it would keep unparsed at once, as JSON.parse does (reading never throws later)', () => {
    const bad = [
      '{"metadata":{"name":"a"},"spec":{"replicas":3,"bad":tru3, "pad":"xxxxxxxx"}}',
      '{"metadata":{"name":"a"},"spec":{"replicas":3,"x": tru, "pad":"xxxxxxxxxxxxxxxx"}}',
      '{"metadata":{"name":"a"},"spec":{"replicas":01,"pad":"xxxxxxxxxxxxxxxxxxxxxxx"}}',
      '{"metadata":{"name":"a"},"spec":{"s":"bad \\q escape","pad":"xxxxxxxxxxxxxxxx"}}',
      '{"metadata":{"name":"a"},"spec":{"s":"tab\there is raw","pad":"xxxxxxxxxxxxxxxx"}}',
      '{"metadata":{"name":"a"},"spec":[1,2,],"pad":"xxxxxxxxxxxxxxxxxxxxxxxx"}',
      '{"metadata":{"name":"a"},"spec":{"a":1,}}',
      '{"metadata":{"name":"a"},"spec":{"a" 1, "b":"xxxxxxxxxxxxxxxxxxxxxxx"}}',
      '{"metadata":{"name":"a"},"spec":{"a":1]}',
      '{"metadata":{"name":"a","managedFields":[{"m":"xxxxxxxxxxxxxxxxxxxxxxxxxxx", "n": nul}]}}',
    ];
    for (const text of bad) {
      expect(() => JSON.parse(text), text).toThrow(SyntaxError);
      expect(() => lazyParseObject(text), text).toThrow();
      expect(parseWatchLineLazily(Buffer.from(`{"type":"ADDED","object":${text}}`))).toMatchObject({ reason: 'MalformedLine' });
    }
    const deep = `{"metadata":{"name":"a"},"spec":${'['.repeat(3000)}${']'.repeat(3000)}}`;
    expect(JSON.stringify(lazyParseObject(deep))).toBe(JSON.stringify(JSON.parse(deep)));
  });

  it('property: any line, valid or not, gives the same frame eagerly and lazily (same report, same JSON)', () => {
    const broken = fc.constantFrom(
      'tru',
      'nul',
      'fals',
      '01',
      '-',
      '1.',
      '1e',
      '.5',
      '"a\\q"',
      '"\\u12"',
      '"tab\t"',
      '[1,]',
      '{"a":1,}',
      '{"a" 1}',
      '[1}',
      '{1:2}',
      '"x',
      '1 2',
      '+1',
      'NaN',
      '"\\u00e9\\n"',
      '-0',
      '1E+9',
      '[[[]]]',
      '{"":{}}',
    );
    // Long enough to stay unparsed in a lazy object (a short member is parsed at once).
    const member = fc.oneof(
      fc.jsonValue().map((v) => JSON.stringify(v)),
      broken,
      broken.map((b) => `{"pad":"${'x'.repeat(24)}","v":[${b}]}`),
    );
    const line = fc
      .tuple(
        fc.string({ minLength: 1, maxLength: 8 }),
        fc.array(fc.tuple(fc.constantFrom('spec', 'status', 'data', 'x', '__proto__'), member), { maxLength: 4 }),
        member,
      )
      .map(([name, members, meta]) => {
        const body = members.map(([k, v]) => `,${JSON.stringify(k)}:${v}`).join('');
        return `{"type":"MODIFIED","object":{"metadata":{"name":${JSON.stringify(name)},"extra":${meta}}${body}}}`;
      });
    const frameJson = (frame: unknown) =>
      frame instanceof Error ? `error:${(frame as { reason?: string }).reason}:${frame.message}` : JSON.stringify(frame);
    fc.assert(
      fc.property(line, (text) => {
        const eager = parseWatchLine(text);
        const lazy = parseWatchLineLazily(Buffer.from(text));
        expect(frameJson(lazy)).toBe(frameJson(eager));
        // What would be cached: the decoder's verdict and the object's JSON.
        const decode = decoder(KubeObject);
        const cached = (frame: typeof eager) =>
          frame instanceof Error ? 'none' : frameJson(decode((frame as { object: unknown }).object, 'watch'));
        expect(cached(lazy)).toBe(cached(eager));
      }),
      { numRuns: 2000 },
    );
  });

  it('makes the same watch frames as the eager parser, errors included', () => {
    const lines = [
      JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a' }, spec: { x: 'a long enough value to stay lazy' } } }),
      '{"type":"ADDED","object":{"metadata":{"name":"a"}',
      '[1,2,3]',
      '{"object":{"metadata":{"name":"q"}}}',
      '{"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"12"}}}',
      // Escaped keys mean the same keys.
      '{"\\u0074ype":"ADDED","\\u006fbject":{"metadata":{"name":"a","\\u006danagedFields":[{"manager":"a long enough manager"}]}}}',
    ];
    for (const line of lines) {
      const eager = parseWatchLine(line);
      const lazy = parseWatchLineLazily(Buffer.from(line, 'utf8'));
      if (eager instanceof Error) expect(lazy, line).toMatchObject({ name: eager.name, reason: eager.reason, message: eager.message });
      else expect(JSON.parse(JSON.stringify(lazy))).toEqual(eager);
    }
  });
});

describe('skeletons of dropped objects', () => {
  it('are plain { metadata } objects, marked by nothing a user sees, and their copies are not skipped', () => {
    const line =
      '{"type":"ADDED","object":{"kind":"Pod","metadata":{"name":"a","namespace":"n","resourceVersion":"7","uid":"u"},"spec":{}}}';
    const { object } = lazyParseWatchLine(line, () => false);
    expect(isSkipped(object)).toBe(true);
    expect(Object.getPrototypeOf(object)).toBe(Object.prototype);
    expect(Reflect.ownKeys(object as object)).toEqual(['metadata']);
    expect(isDeepStrictEqual(object, { metadata: { name: 'a', namespace: 'n', resourceVersion: '7' } })).toBe(true);
    expect(isSkipped({ ...(object as object) })).toBe(false);
    expect(isSkipped(structuredClone(object))).toBe(false);
    expect(isSkipped({ metadata: { name: 'a' } })).toBe(false);
    expect([undefined, null, 'a', 1].map(isSkipped)).toEqual([false, false, false, false]);
  });
});

describe('lazy list pages read as they arrive (LazyListReader)', () => {
  /** The page's bytes cut at `cuts` (fractions of its length), pushed piece by piece, each piece a copy overwritten after the push. */
  const readInPieces = (bytes: Buffer, cuts: readonly number[], keep?: (skeleton: { metadata: Record<string, unknown> }) => boolean) => {
    const reader = new LazyListReader(keep);
    const at = [...new Set(cuts.map((f) => Math.floor(f * bytes.length)))].sort((a, b) => a - b);
    let from = 0;
    for (const to of [...at, bytes.length]) {
      const piece = Buffer.from(bytes.subarray(from, to));
      reader.push(piece);
      piece.fill(0x20); // the reader must not keep reading a pushed buffer
      from = to;
    }
    return reader.end();
  };
  const outcome = (f: () => unknown) => {
    try {
      const value = f();
      return `ok:${JSON.stringify(value)}:${JSON.stringify(((value as { items?: unknown[] }).items ?? []).map(isSkipped))}`;
    } catch {
      return 'throws';
    }
  };
  const pages = fc
    .tuple(
      fc.array(kubeLike, { maxLength: 5 }),
      fc.jsonValue(),
      fc.integer({ min: 0, max: 2 }),
      fc.option(fc.integer({ min: 0, max: 200 }), { nil: undefined }),
    )
    .map(([items, extra, style, damage]) => {
      const text = texts({ kind: 'PodList', apiVersion: 'v1', metadata: { resourceVersion: '9' }, extra, items, count: 12345 })[style]!;
      if (damage === undefined) return text;
      // A damaged page: cut short, or one character changed.
      const at = damage % text.length;
      return damage % 2 ? text.slice(0, at) : `${text.slice(0, at)}${'{}[],:"1a\\'[damage % 11]}${text.slice(at + 1)}`;
    });

  it('property: any page, cut anywhere, gives what the whole page gives (or fails as it does)', () => {
    fc.assert(
      fc.property(pages, fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 12 }), fc.boolean(), (text, cuts, dropSome) => {
        const bytes = Buffer.from(text);
        const keep = dropSome ? (s: { metadata: Record<string, unknown> }) => String(s.metadata.name).length % 2 === 0 : undefined;
        const whole = outcome(() => lazyParseList(bytes, keep));
        expect(outcome(() => readInPieces(bytes, cuts, keep))).toBe(whole);
        // And what JSON.parse gives: the same page, or no page where it throws or finds no object.
        if (dropSome) return;
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = undefined;
        }
        if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) expect(whole).toMatch(`ok:${JSON.stringify(parsed)}:`);
        else expect(whole).toBe('throws');
      }),
      { numRuns: 1000 },
    );
  });

  it('reads a page pushed one byte at a time, and a number cut by a chunk in full', () => {
    const list = {
      metadata: { resourceVersion: '12' },
      items: [{ metadata: { name: 'a' }, spec: { n: 1234567 } }, 42, null],
      total: 987654,
    };
    const bytes = Buffer.from(JSON.stringify(list));
    const reader = new LazyListReader();
    for (let i = 0; i < bytes.length; i++) reader.push(bytes.subarray(i, i + 1));
    expect(JSON.parse(JSON.stringify(reader.end()))).toEqual(list);
    for (let cut = 1; cut < bytes.length; cut++) {
      expect(JSON.parse(JSON.stringify(readInPieces(bytes, [cut / bytes.length])))).toEqual(list);
    }
  });

  it('tries an item that waits for more bytes again only once they have doubled (a long item in small chunks is not rescanned per chunk)', () => {
    const item = { metadata: { name: 'big' }, data: { blob: 'x'.repeat(200_000) } };
    const bytes = Buffer.from(JSON.stringify({ items: [item, { ...item, metadata: { name: 'next' } }] }));
    // The predicate sees an item's metadata once per try.
    const tries: string[] = [];
    const reader = new LazyListReader((s) => tries.push(String(s.metadata.name)) > 0);
    for (let i = 0; i < bytes.length; i += 100) reader.push(bytes.subarray(i, i + 100));
    expect(JSON.parse(JSON.stringify(reader.end()))).toEqual({ items: [item, { ...item, metadata: { name: 'next' } }] });
    // 2,000 chunks of 100 bytes for each item: tried at every chunk, that would be ~2,000 tries each. Doubling: log2(200 KB / 16 KB) + 1.
    expect(tries.filter((name) => name === 'big').length).toBeLessThanOrEqual(6);
    // The next item waits for twice the longest so far: tried once.
    expect(tries.filter((name) => name === 'next')).toEqual(['next']);
  });
});

describe('stripManagedFields on lazily decoded objects', () => {
  it('drops managedFields without parsing it or any other unread member', async () => {
    const { stripManagedFields } = await import('../../src/index.ts');
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'web-1',
        namespace: 'default',
        managedFields: [{ manager: 'kubectl', operation: 'Apply' }],
        labels: { app: 'web' },
      },
      spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] },
      status: { phase: 'Running', podIP: '10.0.0.1' },
    };
    const lazy = lazyParseObject(JSON.stringify(pod)) as unknown as typeof pod;
    const stripped = stripManagedFields(lazy);
    expect(Object.getOwnPropertyDescriptor(lazy.metadata, 'managedFields')!.get).toBeTypeOf('function');
    expect(Object.getOwnPropertyDescriptor(stripped, 'spec')!.get).toBeTypeOf('function');
    expect(hasUnparsedMembers(stripped)).toBe(true);
    const { managedFields: _, ...metadata } = pod.metadata;
    expect(JSON.parse(JSON.stringify(stripped))).toEqual({ ...pod, metadata });
    // The copy reads on its own: the original's members are still unread.
    expect(Object.getOwnPropertyDescriptor(lazy, 'spec')!.get).toBeTypeOf('function');
    expect(JSON.parse(JSON.stringify(lazy))).toEqual(pod);
  });
});

describe('lazy objects hold texts of their own', () => {
  it('never read the page or the line again: both may be reused once parsed', () => {
    const items = [
      {
        metadata: { name: 'a', managedFields: [{ manager: 'm', fieldsV1: { 'f:data': {} } }] },
        data: { k: 'a long enough value to stay lazy, é' },
      },
      { metadata: { name: 'b' }, data: { k: 'another long enough value to stay lazy' } },
      { metadata: { name: 'c' }, data: { k: 'x' } },
    ];
    const page = Buffer.from(JSON.stringify({ kind: 'List', metadata: { resourceVersion: '3' }, items }, null, 1), 'utf8');
    const list = lazyParseList(page) as { items: Array<Record<string, unknown>> };
    // The page's memory is reused (as a socket's may be): what was not read yet must not change.
    page.fill(0x20);
    expect(JSON.parse(JSON.stringify(list.items))).toEqual(items);

    const line = Buffer.from(JSON.stringify({ type: 'ADDED', object: items[0] }), 'utf8');
    const event = lazyParseWatchLine(line) as { object: Record<string, unknown> };
    line.fill(0x20);
    expect(hasUnparsedMembers(event.object)).toBe(true);
    expect(JSON.parse(JSON.stringify(event.object))).toEqual(items[0]);
  });
});

describe('hostile lines give what the eager decode gives, never another object (audit14)', () => {
  type Skeleton = { metadata: Record<string, unknown> };
  const keepNamespaceA = (s: Skeleton) => s.metadata.namespace === 'a';
  const objectOf = (frame: unknown) => (frame as { object: Record<string, unknown> }).object;
  const show = (frame: unknown) => (frame instanceof Error ? `error: ${(frame as { reason?: string }).reason}` : JSON.stringify(frame));

  it('"object" repeated: the last one wins, a last one that is no object is a MalformedLine (as eagerly)', () => {
    for (const last of ['null', '5', '"x"', '[]', '{"metadata":{"name":"last"}}']) {
      const line = `{"type":"ADDED","object":{"metadata":{"name":"first","namespace":"a"}},"object":${last}}`;
      for (const keep of [undefined, keepNamespaceA])
        expect(show(parseWatchLineLazily(Buffer.from(line), keep)), last).toBe(show(parseWatchLine(line)));
    }
  });

  it('keep sees ADDED, MODIFIED and DELETED objects only: an ERROR Status and a BOOKMARK are decoded whole, the type before or after the object', () => {
    const error = '"object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","reason":"Expired","code":410}';
    const bookmark =
      '"object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"12","annotations":{"k8s.io/initial-events-end":"true"}}}';
    for (const line of [
      `{"type":"ERROR",${error}}`,
      `{${error},"type":"ERROR"}`,
      `{"type":"ADDED",${error},"type":"ERROR"}`,
      `{"type":"BOOKMARK",${bookmark}}`,
      `{${bookmark},"type":"BOOKMARK"}`,
    ]) {
      const lazy = parseWatchLineLazily(Buffer.from(line), keepNamespaceA);
      expect(isSkipped(objectOf(lazy)), line).toBe(false);
      expect(JSON.stringify(objectOf(lazy)), line).toBe(JSON.stringify(objectOf(parseWatchLine(line))));
    }
    // A change event is dropped whichever comes first; a type that becomes a change after the object is dropped too.
    const added = '"object":{"metadata":{"name":"x","namespace":"b"},"spec":{"pad":"xxxxxxxxxxxxxxxxxxxxxxxx"}}';
    for (const line of [`{"type":"ADDED",${added}}`, `{${added},"type":"MODIFIED"}`, `{"type":"ERROR",${added},"type":"DELETED"}`])
      expect(isSkipped(objectOf(parseWatchLineLazily(Buffer.from(line), keepNamespaceA))), line).toBe(true);
  });

  it('"metadata" repeated: keep decides on the last one, the one JSON.parse keeps', () => {
    const keptAtLast = '{"metadata":{"name":"x","namespace":"b"},"spec":{},"metadata":{"name":"x","namespace":"a"}}';
    const kept = lazyParseWatchLine(`{"type":"ADDED","object":${keptAtLast}}`, keepNamespaceA).object;
    expect(isSkipped(kept)).toBe(false);
    expect(JSON.stringify(kept)).toBe(JSON.stringify(JSON.parse(keptAtLast)));
    const droppedAtLast = '{"metadata":{"name":"x","namespace":"a"},"spec":{},"metadata":{"name":"y","namespace":"b"},"status":{}}';
    const dropped = lazyParseWatchLine(`{"type":"ADDED","object":${droppedAtLast}}`, keepNamespaceA).object;
    expect(isSkipped(dropped)).toBe(true);
    expect(dropped).toEqual({ metadata: { name: 'y', namespace: 'b' } });
    // Three times, and a last one that is no object (kept: keep sees only an object's metadata).
    const third = '{"metadata":{"namespace":"b"},"metadata":{"namespace":"a"},"metadata":{"namespace":"b"}}';
    expect(isSkipped(lazyParseWatchLine(`{"type":"ADDED","object":${third}}`, keepNamespaceA).object)).toBe(true);
    const notObject = '{"metadata":{"namespace":"b"},"metadata":5}';
    expect(lazyParseWatchLine(`{"type":"ADDED","object":${notObject}}`, keepNamespaceA).object).toEqual({ metadata: 5 });
  });

  it('an identity member repeated: the last one counts, left out when it is no string', () => {
    const seen: Skeleton['metadata'][] = [];
    const keep = (s: Skeleton) => (seen.push(s.metadata), keepNamespaceA(s));
    const line =
      '{"type":"ADDED","object":{"metadata":{"name":"x","namespace":"a","namespace":["b"],"name":"y","resourceVersion":"1","resourceVersion":2}}}';
    const dropped = lazyParseWatchLine(line, keep).object;
    expect(seen).toEqual([{ name: 'y' }]);
    expect(isSkipped(dropped)).toBe(true);
    const eager = (JSON.parse(line) as { object: Skeleton }).object;
    expect(keepNamespaceA(eager)).toBe(false);
  });

  it('follows a dropped object for its structure only: a syntax error in it never reaches a user, the object is dropped (docs/transport.md)', () => {
    // Checking it would cost about a fifth of a dropped line (docs/transport.md, "Lazy decoding").
    for (const rest of ['"spec":{"a":tru}', '"spec":{"a":[1,2,]}', '"spec":{"a":01}']) {
      for (const metadata of ['{"name":"x","namespace":"b"}', '{"name":"x","namespace":"b","labels":{"a":tru}}']) {
        const line = `{"type":"ADDED","object":{"metadata":${metadata},${rest}}}`;
        expect(parseWatchLine(line), line).toBeInstanceOf(Error);
        const dropped = objectOf(parseWatchLineLazily(Buffer.from(line), keepNamespaceA));
        expect(isSkipped(dropped), line).toBe(true);
        expect(dropped, line).toEqual({ metadata: { name: 'x', namespace: 'b' } });
        // Kept, it is refused as eagerly.
        expect(parseWatchLineLazily(Buffer.from(line.replace('"namespace":"b"', '"namespace":"a"')), keepNamespaceA), line).toMatchObject({
          reason: 'MalformedLine',
        });
      }
    }
    // A string that does not end, brackets that do not close, a member's own scalar are refused dropped or not.
    for (const rest of ['"spec":{"a":"x}}', '"spec":{"a":[1}', '"spec":{"a":1},"x":nul']) {
      const line = `{"type":"ADDED","object":{"metadata":{"name":"x","namespace":"b"},${rest}}}`;
      expect(parseWatchLineLazily(Buffer.from(line), keepNamespaceA), line).toMatchObject({ reason: 'MalformedLine' });
    }
  });

  it('refuses nesting deeper than 10,000 containers in all, as Go (client-go) does, eagerly and lazily alike', () => {
    const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
    // The line's braces and the object's are two levels: spec may nest 9,998 deep.
    for (const [depth, ok] of [
      [9_998, true],
      [9_999, false],
      [1_000_000, false],
    ] as const) {
      for (const spec of [nested(depth), `{"a":${nested(depth - 1)}}`]) {
        const line = `{"type":"ADDED","object":{"metadata":{"name":"a"},"spec":${spec}}}`;
        const lazy = parseWatchLineLazily(Buffer.from(line));
        const dropped = parseWatchLineLazily(Buffer.from(line), () => false);
        const eager = parseWatchLine(line);
        // (Nothing that deep is printed: JSON.stringify itself runs out of stack near 10,000.)
        for (const frame of [lazy, dropped, eager]) {
          expect(frame instanceof Error, `${depth}`).toBe(!ok);
          if (!ok) expect((frame as Error).message).toMatch(/deeper than 10000/);
        }
        if (ok) expect(isSkipped(objectOf(dropped))).toBe(true);
      }
    }
    // In the metadata (parsed at once) and its managedFields (kept as text) too.
    for (const metadata of [`{"name":"a","labels":${nested(10_000)}}`, `{"name":"a","managedFields":${nested(10_000)}}`]) {
      const line = `{"type":"ADDED","object":{"metadata":${metadata}}}`;
      for (const keep of [undefined, () => false, () => true])
        expect(parseWatchLineLazily(Buffer.from(line), keep)).toMatchObject({ reason: 'MalformedLine' });
      expect(parseWatchLine(line)).toMatchObject({ reason: 'MalformedLine' });
    }
    // A list's items are three levels in.
    const page = (depth: number) => `{"kind":"PodList","items":[{"metadata":{"name":"a"},"spec":${nested(depth)}}]}`;
    expect(() => lazyParseList(page(9_997))).not.toThrow();
    expect(() => lazyParseList(page(9_998))).toThrow(/deeper than 10000/);
    // A string full of brackets is no nesting.
    const text = `{"type":"ADDED","object":{"metadata":{"name":"a"},"spec":{"s":"${'[{\\"'.repeat(20_000)}"}}}`;
    expect(parseWatchLine(text)).not.toBeInstanceOf(Error);
    expect(JSON.stringify(parseWatchLineLazily(Buffer.from(text)))).toBe(JSON.stringify(parseWatchLine(text)));
  });
});
