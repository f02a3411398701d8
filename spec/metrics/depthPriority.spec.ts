import { describe, expect, it } from 'vitest';
import { LOW_PRIORITY, createRateLimitingQueue } from '../../src/workqueue/index.ts';
import { toPrometheusText, workqueueFamilies } from '../../src/metrics/index.ts';
import { MAX_DEPTH_PRIORITIES } from '../../src/metrics/prometheus.ts';

const depthLines = (text: string) => text.split('\n').filter((line) => line.startsWith('workqueue_depth'));

describe('workqueue_depth: one sample per priority, as controller-runtime labels it ({name, priority})', () => {
  it('the split that depthByPriority reports, highest first; the samples sum to the depth', () => {
    const queue = createRateLimitingQueue<string>({ name: 'q' });
    queue.add('a', LOW_PRIORITY);
    queue.add('b', LOW_PRIORITY);
    queue.add('c');
    queue.add('d', 10);
    const metrics = queue.metrics();
    expect(depthLines(toPrometheusText(workqueueFamilies([metrics])))).toEqual([
      'workqueue_depth{name="q",priority="10"} 1',
      'workqueue_depth{name="q",priority="0"} 1',
      'workqueue_depth{name="q",priority="-100"} 2',
    ]);
    expect(metrics.depth).toBe(4);
    queue.shutDown();
  });

  it('an idle queue keeps its series: priority 0 at 0', () => {
    const queue = createRateLimitingQueue<string>({ name: 'idle' });
    expect(depthLines(toPrometheusText(workqueueFamilies([queue.metrics()])))).toEqual(['workqueue_depth{name="idle",priority="0"} 0']);
    queue.shutDown();
  });

  it('priority 0 is there at 0 when only other priorities are queued', () => {
    const queue = createRateLimitingQueue<string>({ name: 'low' });
    queue.add('a', LOW_PRIORITY);
    expect(depthLines(toPrometheusText(workqueueFamilies([queue.metrics()])))).toEqual([
      'workqueue_depth{name="low",priority="0"} 0',
      'workqueue_depth{name="low",priority="-100"} 1',
    ]);
    queue.shutDown();
  });

  it(`past ${MAX_DEPTH_PRIORITIES} priorities the lowest are summed under exceeded_cardinality_limit (bounded series)`, () => {
    const queue = createRateLimitingQueue<string>({ name: 'many' });
    for (let p = 1; p <= 40; p++) queue.add(`k${p}`, p); // 40 priorities, and 0 at 0
    const lines = depthLines(toPrometheusText(workqueueFamilies([queue.metrics()])));
    expect(lines).toHaveLength(MAX_DEPTH_PRIORITIES);
    expect(lines[0]).toBe('workqueue_depth{name="many",priority="40"} 1');
    expect(lines[MAX_DEPTH_PRIORITIES - 2]).toBe('workqueue_depth{name="many",priority="17"} 1');
    expect(lines[MAX_DEPTH_PRIORITIES - 1]).toBe('workqueue_depth{name="many",priority="exceeded_cardinality_limit"} 16');
    queue.shutDown();
  });
});
