/**
 * approximateBytes measures a cached object without decoding it: a lazily decoded object keeps its
 * unparsed members (so serving /metrics does not undo lazyDecode's memory saving), and the figure is
 * close to the one for the same object decoded eagerly.
 */
import { describe, expect, it } from 'vitest';
import { hasUnparsedMembers, lazyParseObject } from '../../src/1-transport/lazyJson.ts';
import { approximateBytes } from '../../src/metrics/index.ts';

const pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web-1', namespace: 'shop', resourceVersion: '42', labels: { app: 'web' } },
  spec: { nodeName: 'node-1', containers: [{ name: 'web', image: 'nginx:1.27', ports: [{ containerPort: 80 }] }] },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
};

describe('approximateBytes', () => {
  it('leaves a lazily decoded object unparsed', () => {
    const lazy = lazyParseObject(JSON.stringify(pod));
    expect(hasUnparsedMembers(lazy)).toBe(true);
    approximateBytes(lazy);
    expect(hasUnparsedMembers(lazy)).toBe(true);
  });

  it('gives about the same figure for the lazy and the eager object', () => {
    const eager = approximateBytes(JSON.parse(JSON.stringify(pod)));
    const lazy = approximateBytes(lazyParseObject(JSON.stringify(pod)));
    expect(Math.abs(lazy - eager) / eager).toBeLessThan(0.25);
  });

  it('counts a member once it was read, as the eager object would', () => {
    const lazy = lazyParseObject(JSON.stringify(pod));
    void (lazy as typeof pod).spec.containers;
    void (lazy as typeof pod).status.phase;
    expect(approximateBytes(lazy)).toBe(approximateBytes(JSON.parse(JSON.stringify(pod))));
  });
});
