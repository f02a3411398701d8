import { describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import {
  handlerFamilies,
  healthFamilies,
  informerFamilies,
  promClientMetrics,
  toPrometheusText,
  workqueueFamilies,
  type InformerMetrics,
  type MetricFamily,
} from '../../src/metrics/index.ts';
import { MAX_READYZ_BYTES, readyzLines } from '../../src/metrics/serve.ts';
import { MAX_LABEL_VALUE_CHARS } from '../../src/metrics/prometheus.ts';
import type { InformerHealth } from '../../src/metrics/index.ts';
import { parseExposition } from './exposition.ts';

const metrics = (name: string, over: Partial<InformerMetrics> = {}): InformerMetrics => ({
  name,
  eventsTotal: { added: 1, updated: 2, deleted: 3 },
  listsTotal: 1,
  watchesTotal: 2,
  shortWatchesTotal: 0,
  errorsTotal: { NetworkError: 1 },
  storeObjects: 5,
  storeBytes: 500,
  lastResourceVersion: '10',
  syncDurationSeconds: 0.5,
  ...over,
});

const health = (name: string, over: Partial<InformerHealth> = {}): InformerHealth => ({
  name,
  watching: true,
  since: 0,
  synced: true,
  lastEventAt: 1_000,
  lastBookmarkAt: undefined,
  eventAgeMs: 1_000,
  bookmarkAgeMs: undefined,
  silentMs: 1_000,
  consecutiveFailures: 0,
  failingSince: undefined,
  lastFailure: undefined,
  resourceVersion: '10',
  at: 2_000,
  ...over,
});

describe('the strict exposition parser (the test kit)', () => {
  const ok = '# HELP a_total A.\n# TYPE a_total counter\na_total{x="1"} 1\na_total{x="2"} 2\n# TYPE b gauge\nb 1.5e3\n';

  it('reads well-formed text', () => {
    expect(parseExposition(ok)).toEqual([
      {
        name: 'a_total',
        help: 'A.',
        type: 'counter',
        samples: [
          { name: 'a_total', labels: { x: '1' }, value: 1 },
          { name: 'a_total', labels: { x: '2' }, value: 2 },
        ],
      },
      { name: 'b', type: 'gauge', samples: [{ name: 'b', labels: {}, value: 1500 }] },
    ]);
    expect(parseExposition('# TYPE s summary\ns_sum{a="x\\ny\\\\\\""} 1\ns_count{a="x\\ny\\\\\\""} 2\n')[0]!.samples[0]!.labels).toEqual({
      a: 'x\ny\\"',
    });
  });

  it.each([
    ['a repeated series', '# TYPE a gauge\na{x="1"} 1\na{x="1"} 2\n', /a second sample of the series a\{x="1"\}/],
    ['the same labels in another order', '# TYPE a gauge\na{x="1",y="2"} 1\na{y="2",x="1"} 2\n', /a second sample/],
    ['HELP twice', '# HELP a A.\n# HELP a A.\na 1\n', /a second # HELP/],
    ['TYPE twice', '# TYPE a gauge\n# TYPE a gauge\na 1\n', /a second # TYPE/],
    ['TYPE after samples', 'a 1\n# TYPE a gauge\n', /after its samples/],
    ['a family interleaved', '# TYPE a gauge\na 1\n# TYPE b gauge\nb 1\na{x="1"} 2\n', /appears again/],
    ['HELP of a family that has ended', 'a 1\nb 1\n# HELP a again\n', /appears again/],
    ['an unknown escape in a label value', 'a{x="\\t"} 1\n', /bad escape/],
    ['an unknown escape in help', '# HELP a tab\\there\na 1\n', /bad escape/],
    ['a raw quote in a label value', 'a{x="a"b"} 1\n', /expected , or \}/],
    ['a label twice', 'a{x="1",x="2"} 1\n', /label x twice/],
    ['a reserved label name', 'a{__name__="1"} 1\n', /reserved/],
    ['a bad value', 'a 1,5\n', /bad value/],
    ['no final line feed', 'a 1', /does not end with a line feed/],
    ['a trailing comma', 'a{x="1",} 1\n', /trailing comma/],
  ])('rejects %s', (_, text, message) => {
    expect(() => parseExposition(text)).toThrow(message);
  });
});

describe('toPrometheusText: one entry per series, HELP and TYPE once, everything escaped', () => {
  it('joins families of one name and leaves out a repeated series, saying so in a comment', () => {
    const a: MetricFamily = { name: 'x_total', help: 'X.', type: 'counter', samples: [{ labels: { name: 'pods' }, value: 1 }] };
    const b: MetricFamily = {
      ...a,
      samples: [
        { labels: { name: 'pods' }, value: 2 },
        { labels: { name: 'nodes' }, value: 3 },
      ],
    };
    const text = toPrometheusText([a, b, { name: 'x_total', help: 'X.', type: 'gauge', samples: [] }]);
    expect(parseExposition(text)).toEqual([
      {
        name: 'x_total',
        help: 'X.',
        type: 'counter',
        samples: [
          { name: 'x_total', labels: { name: 'pods' }, value: 1 },
          { name: 'x_total', labels: { name: 'nodes' }, value: 3 },
        ],
      },
    ]);
    expect(text).toContain('# left out 1 repeated series of x_total\n');
    expect(text).toContain('# left out a second family x_total of type gauge (it is a counter)\n');
  });

  it('escapes help and label values (a newline forges no line) and leaves out names the format does not allow', () => {
    const hostile = 'a"b\\c\nd{e="f"} 1\n# TYPE';
    const text = toPrometheusText([
      { name: 'ok', help: `line one\nforged 1 \\`, type: 'gauge', samples: [{ labels: { name: hostile }, value: 1 }] },
      { name: 'bad name\nforged', help: 'h', type: 'gauge', samples: [{ labels: {}, value: 1 }] },
      { name: 'labels', help: 'h', type: 'gauge', samples: [{ labels: { 'bad-label': 'x' }, value: 1 }] },
    ]);
    const families = parseExposition(text);
    expect(families.map((f) => f.name)).toEqual(['ok', 'labels']);
    expect(families[0]).toMatchObject({ help: 'line one\nforged 1 \\', samples: [{ labels: { name: hostile }, value: 1 }] });
    expect(families[1]!.samples).toEqual([]);
    expect(text).toContain('# left out a family named "bad name\\nforged": not a metric name\n');
  });

  it('writes a carriage return in a label value or help as the two characters \\r: no raw CR (a parser that splits on it lost the line; audit39)', () => {
    const text = toPrometheusText([
      { name: 'ok', help: 'one\rtwo', type: 'gauge', samples: [{ labels: { name: 'pods\r.evil' }, value: 1 }] },
    ]);
    expect(text).not.toContain('\r');
    expect(text).toContain('ok{name="pods\\\\r.evil"} 1\n');
    // Each line parsed alone, as a scraper that splits on any line break reads them.
    expect(parseExposition(text.split(/\r\n|\r|\n/).join('\n'))[0]).toMatchObject({
      help: 'one\\rtwo',
      samples: [{ labels: { name: 'pods\\r.evil' }, value: 1 }],
    });
  });

  it('informer, handler and health families: one series per resource name (namespace informers together)', () => {
    const now = 10_000;
    const families = [
      ...informerFamilies([
        metrics('configmaps'),
        metrics('configmaps', { lastResourceVersion: '12', storeObjects: 7, syncDurationSeconds: 2 }),
        metrics('pods'),
      ]),
      ...handlerFamilies([
        { name: 'configmaps', depth: 1, durationSeconds: { count: 2, sumSeconds: 0.5 } },
        { name: 'configmaps', depth: 2, durationSeconds: { count: 3, sumSeconds: 1 } },
      ]),
      ...healthFamilies(
        [
          health('configmaps'),
          health('configmaps', {
            watching: false,
            since: 1_500,
            consecutiveFailures: 3,
            failingSince: 1_200,
            lastFailure: 'ServerError',
            silentMs: 5_000,
          }),
          health('pods'),
        ],
        now,
      ),
    ];
    const parsed = parseExposition(toPrometheusText(families));
    const value = (family: string, labels: Record<string, string> = { name: 'configmaps' }, name = family) =>
      parsed.find((f) => f.name === family)!.samples.filter((s) => s.name === name && JSON.stringify(s.labels) === JSON.stringify(labels));
    expect(value('informer_store_objects')).toEqual([{ name: 'informer_store_objects', labels: { name: 'configmaps' }, value: 12 }]);
    expect(value('reflector_lists_total')[0]!.value).toBe(2);
    expect(value('informer_events_total', { name: 'configmaps', type: 'updated' })[0]!.value).toBe(4);
    expect(value('informer_errors_total', { name: 'configmaps', reason: 'NetworkError' })[0]!.value).toBe(2);
    expect(value('reflector_last_resource_version')[0]!.value).toBe(12);
    expect(value('informer_sync_duration_seconds')[0]!.value).toBe(2);
    expect(value('informer_handler_queue_depth')[0]!.value).toBe(3);
    expect(value('informer_handler_duration_seconds', { name: 'configmaps' }, 'informer_handler_duration_seconds_count')[0]!.value).toBe(5);
    // Health: the worst of them.
    expect(value('informer_watching')[0]!.value).toBe(0);
    expect(value('informer_synced')[0]!.value).toBe(1);
    expect(value('informer_consecutive_failures')[0]!.value).toBe(3);
    expect(value('informer_silent_seconds')[0]!.value).toBe(13);
    expect(value('informer_watching_changed_seconds')[0]!.value).toBe(8.5);
    expect(value('informer_watching', { name: 'pods' })[0]!.value).toBe(1);
    // Not yet synced in one namespace: no sync duration for the resource.
    expect(
      informerFamilies([metrics('a'), metrics('a', { syncDurationSeconds: undefined })]).find(
        (f) => f.name === 'informer_sync_duration_seconds',
      )!.samples,
    ).toEqual([]);
  });

  it('joins a prom-client registry without a repeated name or series (prom-client checks names as it registers)', async () => {
    const registry = new Registry();
    const collect = () => [
      ...informerFamilies([metrics('configmaps'), metrics('configmaps'), metrics('pods')]),
      ...healthFamilies([health('configmaps'), health('configmaps'), health('pods')], 5_000),
    ];
    for (const metric of promClientMetrics(collect)) registry.registerMetric(metric as never);
    const parsed = parseExposition(await registry.metrics());
    expect(parsed.find((f) => f.name === 'informer_store_objects')!.samples).toEqual([
      { name: 'informer_store_objects', labels: { name: 'configmaps' }, value: 10 },
      { name: 'informer_store_objects', labels: { name: 'pods' }, value: 5 },
    ]);
  });
});

describe('promClientMetrics in a prom-client registry (audit39)', () => {
  const queue = {
    name: 'q',
    depth: 0,
    depthByPriority: [],
    addsTotal: 1,
    queueDurationSeconds: { count: 1, sumSeconds: 0.5 },
    workDurationSeconds: { count: 0, sumSeconds: 0 },
    unfinishedWorkSeconds: 0,
    longestRunningProcessorSeconds: 0,
    retriesTotal: 0,
  };

  it('OpenMetrics: a counter is printed once with _total (prom-client renames the metric; it printed workqueue_adds_total_total)', async () => {
    const registry = new Registry();
    registry.setContentType(Registry.OPENMETRICS_CONTENT_TYPE as never);
    for (const metric of promClientMetrics(() => workqueueFamilies([queue]))) registry.registerMetric(metric as never);
    const text = await registry.metrics();
    expect(text).not.toContain('_total_total');
    expect(text).toContain('# TYPE workqueue_adds counter\n');
    expect(text).toContain('workqueue_adds_total{name="q"} 1\n');
    expect(text).toContain('workqueue_queue_duration_seconds_sum{name="q"} 0.5\n');
  });

  it('one scrape collects once (it collected once per family: 7 times for a work queue), the next scrape afresh', async () => {
    let calls = 0;
    let adds = 1;
    const registry = new Registry();
    for (const metric of promClientMetrics(() => (calls++, workqueueFamilies([{ ...queue, addsTotal: adds }]))))
      registry.registerMetric(metric as never);
    calls = 0;
    expect(await registry.metrics()).toContain('workqueue_adds_total{name="q"} 1\n');
    expect(calls).toBe(1);
    adds = 2;
    expect(await registry.metrics()).toContain('workqueue_adds_total{name="q"} 2\n');
    expect(calls).toBe(2);
  });
});

describe("/readyz's lines", () => {
  it('one per resource name (ready when every informer of it is), escaped to one line each', () => {
    const { ready, lines } = readyzLines(
      [health('configmaps'), health('configmaps', { synced: false }), health('pods'), health('evil\n[+]forged ok\\')],
      5_000,
      {},
    );
    expect(ready).toBe(false);
    expect(lines).toEqual(['[-]configmaps: not synced', '[+]pods ok', '[+]evil\\n[+]forged ok\\\\ ok']);
    expect(readyzLines([health('x\r\u0000\u2028')], 0, {}).lines).toEqual(['[+]x\\u000d\\u0000\\u2028 ok']);
  });

  it('a long name or reason is cut as a /metrics label is (1,024 characters, a hash of the whole): two stay two', () => {
    const long = 'w'.repeat(1024 * 1024);
    const { lines } = readyzLines(
      [health(`${long}a`), health(`${long}b`), { ...health('pods', { synced: false }), stopped: `Unknown: ${'\n'.repeat(100_000)}` }],
      5_000,
      {},
    );
    expect(lines.map((l) => l.length)).toEqual([MAX_LABEL_VALUE_CHARS, MAX_LABEL_VALUE_CHARS, MAX_LABEL_VALUE_CHARS]);
    expect(lines[0]).toMatch(/^\[\+\]w+…#[0-9a-f]{8}$/);
    expect(lines[0]).not.toBe(lines[1]);
    // The reason's 100,000 line feeds escaped first, then cut: none raw, and the line says what it is about.
    expect(lines[2]).toMatch(/^\[-\]pods: stopped: Unknown: (\\n)+/);
    expect(lines.join('')).not.toMatch(/[\r\n]/);
  });

  it(`at most MAX_READYZ_BYTES (${MAX_READYZ_BYTES}) of lines: what is not ready first, the rest counted in one line`, () => {
    // 20,000 resources (the dynamic factory's CRDs) of 100-character names: ~2 MB of lines uncapped.
    const name = (i: number) => `${String(i).padStart(5, '0')}.${'g'.repeat(94)}`;
    const healths = Array.from({ length: 20_000 }, (_, i) => health(name(i), { synced: i !== 19_999 }));
    const { ready, lines } = readyzLines(healths, 5_000, {});
    expect(ready).toBe(false);
    const body = `${[...lines, 'not ready'].join('\n')}\n`;
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(MAX_READYZ_BYTES + 200);
    expect(lines).toContain(`[-]${name(19_999)}: not synced`);
    expect(lines[0]).toBe(`[+]${name(0)} ok`);
    const shown = lines.length - 1;
    expect(lines.at(-1)).toBe(
      `[+]${20_000 - shown} more resources not shown (0 of them not ready): /readyz is at most ${MAX_READYZ_BYTES} bytes`,
    );
    // Under the budget nothing is left out, in order.
    expect(readyzLines(healths.slice(0, 100), 5_000, {}).lines).toEqual(healths.slice(0, 100).map((h) => `[+]${h.name} ok`));
  });
});
