/**
 * A label value is at most MAX_LABEL_VALUE_CHARS (1024) characters in the exposition (text and prom-client), a second
 * line of defence behind discovery's name checks (audit52: a 1 MiB resource name was 19.9 MB of /metrics, 200 such
 * series past V8's largest string). A longer one is cut with a hash of the whole, so two long values stay two series.
 */
import { describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { promClientMetrics, toPrometheusText, type MetricFamily } from '../../src/metrics/index.ts';
import { MAX_LABEL_VALUE_CHARS, cappedLabel } from '../../src/metrics/prometheus.ts';
import { parseExposition } from './exposition.ts';

const long = (c: string) => c.repeat(1024 * 1024);
const families = (): MetricFamily[] => [
  {
    name: 'x_objects',
    help: 'X.',
    type: 'gauge',
    samples: [
      { labels: { name: `${long('w')}a` }, value: 1 },
      { labels: { name: `${long('w')}b` }, value: 2 },
      { labels: { name: 'pods' }, value: 3 },
    ],
  },
];

describe('label values are capped', () => {
  it('cappedLabel: a value up to the cap unchanged; a longer one cut to the cap, ending in a hash of the whole', () => {
    expect(MAX_LABEL_VALUE_CHARS).toBe(1024);
    const at = 'a'.repeat(MAX_LABEL_VALUE_CHARS);
    expect(cappedLabel(at)).toBe(at);
    const a = cappedLabel(`${at}a`);
    const b = cappedLabel(`${at}b`);
    expect(a).toHaveLength(MAX_LABEL_VALUE_CHARS);
    expect(a).toMatch(/^a+…#[0-9a-f]{8}$/);
    expect(a).not.toBe(b);
    expect(cappedLabel(`${at}a`)).toBe(a);
  });

  it('toPrometheusText: a 1 MiB value is written capped; two such values stay two series', () => {
    const text = toPrometheusText(families());
    expect(text.length).toBeLessThan(4 * MAX_LABEL_VALUE_CHARS);
    const samples = parseExposition(text).find((f) => f.name === 'x_objects')?.samples ?? [];
    expect(samples.map((s) => s.labels['name']?.length)).toEqual([MAX_LABEL_VALUE_CHARS, MAX_LABEL_VALUE_CHARS, 4]);
    expect(new Set(samples.map((s) => s.labels['name'])).size).toBe(3);
  });

  it('promClientMetrics: the same cap', async () => {
    const registry = new Registry();
    for (const m of promClientMetrics(families)) registry.registerMetric(m as never);
    const text = await registry.metrics();
    expect(text.length).toBeLessThan(4 * MAX_LABEL_VALUE_CHARS);
    expect(text).toContain('x_objects{name="pods"} 3');
  });
});
