/**
 * `rx-informer replay` of a custom resource: its version is the recorded objects' own (`apiVersion`), not a guess,
 * so a resource served as `v1beta1` replays its changes instead of printing nothing (every object refused by the
 * resource's apiVersion check, silently).
 */
import { describe, expect, it } from 'vitest';
import { readTrace } from '../../src/pipeline.ts';
import { replayCommand } from '../../src/cli/replayCommand.ts';
import type { ReplayCommandOptions } from '../../src/cli/replayArgs.ts';

function traceOf(resource: string, apiVersion: string, kind: string): string {
  const lines = [
    {
      type: 'header',
      format: 'rx-informer-trace',
      version: 1,
      startedAt: '2026-11-27T20:01:14.646Z',
      resources: [resource],
      options: { namespace: 'shop' },
      redacted: true,
    },
    { type: 'list', at: 4, id: 0, resource, options: { limit: 500, resourceVersion: '0' } },
    {
      type: 'page',
      at: 19,
      id: 0,
      resourceVersion: '3',
      items: [{ metadata: { name: 'a', namespace: 'shop', uid: 'u-a', resourceVersion: '3' }, spec: { x: 1 } }],
    },
    { type: 'end', at: 19, id: 0, how: 'complete' },
    { type: 'watch', at: 23, id: 1, resource, options: { allowWatchBookmarks: true, resourceVersion: '3', timeoutSeconds: 599 } },
    {
      type: 'event',
      at: 33,
      id: 1,
      event: {
        type: 'ADDED',
        object: { kind, apiVersion, metadata: { name: 'b', namespace: 'shop', uid: 'u-b', resourceVersion: '4' }, spec: { x: 2 } },
      },
    },
    { type: 'end', at: 335, id: 1, how: 'unsubscribe' },
    { type: 'stop', at: 335, why: 'closed' },
  ];
  return lines.map((line) => JSON.stringify(line) + '\n').join('');
}

const options: ReplayCommandOptions = { file: 'trace.jsonl', output: 'json', utc: true };

async function replayedNames(text: string): Promise<{ names: string[]; mismatches: readonly string[] }> {
  const out: string[] = [];
  const mismatches = await replayCommand(readTrace(text), options, (line) => out.push(line));
  return { names: out.map((line) => (JSON.parse(line) as { name?: string }).name ?? line), mismatches };
}

describe('rx-informer replay of a custom resource', () => {
  it.each([
    ['widgets.example.com', 'example.com/v1beta1', 'Widget'],
    ['widgets.example.com', 'example.com/v1', 'Widget'],
    ['widgets.example.com', 'example.com/v2alpha1', 'Widget'],
    ['widgets', 'v1', 'Widget'],
  ])('%s served as %s: the recorded change is printed', async (resource, apiVersion, kind) => {
    const { names, mismatches } = await replayedNames(traceOf(resource, apiVersion, kind));
    expect(mismatches).toEqual([]);
    expect(names).toEqual(['b']);
  });
});
