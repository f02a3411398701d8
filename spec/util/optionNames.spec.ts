/**
 * Every entry point that takes an options object refuses a name it does not read, with the nearest known one (review
 * audit49, item 6): `serve(f, { prot: 9090 })` served on a free port instead, `discover(kc, { maxResource: 5 })`
 * had no cap, a `leaseDuration: 30000` left the default 15 s. The informers' own entries are in
 * spec/5-informer/optionNames.spec.ts. Nothing here subscribes: the check is made where the options enter.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { Pod } from '../../src/index.ts';
import { httpListWatch, listAndWatch } from '../../src/pipeline.ts';
import { fakeListWatch } from '../../src/testing/index.ts';
import { discover, dynamicInformerFactory } from '../../src/discovery/index.ts';
import { serve } from '../../src/metrics/index.ts';
import { bucketRateLimiter, createDelayingQueue, createRateLimitingQueue, createWorkQueue } from '../../src/workqueue/index.ts';
import { httpLeaseClients, leaderElection, sharding, type HttpLeaseOptions } from '../../src/leaderelection/index.ts';
import { checkOptionNames } from '../../src/util/optionNames.ts';

/** A KubeConfig with a cluster nothing listens on: nothing here subscribes, so no request is made. */
function offlineKc(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromClusterAndUser({ name: 'c', server: 'http://127.0.0.1:9', skipTLSVerify: true }, { name: 'u' });
  return kc;
}

/** Each entry point called with one misspelt option (a cast: from JavaScript, or an options object in a variable). */
const CASES: readonly { readonly entry: string; readonly call: () => unknown; readonly message: RegExp }[] = [
  {
    entry: 'serve',
    call: () => serve([], { prot: 9090 } as never),
    message: /^serve: unknown option `prot` \(a number \(9090\)\); did you mean `port`\?$/,
  },
  {
    entry: 'discover',
    call: () => discover(offlineKc(), { maxResource: 5 } as never),
    message: /^discover: unknown option `maxResource` .*did you mean `maxResources`\?$/,
  },
  {
    entry: 'discover (its http2)',
    call: () => discover(offlineKc(), { http2: { readIdle: 5 } } as never),
    message: /^discover: unknown option `http2\.readIdle` .*did you mean `http2\.readIdleMs`\?$/,
  },
  {
    entry: 'dynamicInformerFactory',
    call: () => dynamicInformerFactory(offlineKc(), { debounceMS: 5, reportUnobservedErrors: false } as never),
    message: /^dynamicInformerFactory: unknown option `debounceMS` .*did you mean `debounceMs`\?$/,
  },
  {
    entry: 'dynamicInformerFactory (its discovery)',
    call: () => dynamicInformerFactory(offlineKc(), { discovery: { maxTotalByte: 5 }, reportUnobservedErrors: false } as never),
    message: /^dynamicInformerFactory: unknown option `discovery\.maxTotalByte` .*did you mean `discovery\.maxTotalBytes`\?$/,
  },
  {
    entry: 'httpListWatch (its target)',
    call: () => httpListWatch(offlineKc(), { resource: Pod, labelselector: 'app=web' } as never),
    message: /^httpListWatch: unknown option `labelselector` \("app=web"\); did you mean `labelSelector`\?$/,
  },
  {
    entry: 'httpListWatch (its options)',
    call: () => httpListWatch(offlineKc(), { resource: Pod }, { maxListByte: 5 } as never),
    message: /^httpListWatch: unknown option `maxListByte` .*did you mean `maxListBytes`\?$/,
  },
  {
    entry: 'httpListWatch (its http2)',
    call: () => httpListWatch(offlineKc(), { resource: Pod }, { http2: { pingTimeout: 5 } } as never),
    message: /^httpListWatch: unknown option `http2\.pingTimeout` .*did you mean `http2\.pingTimeoutMs`\?$/,
  },
  {
    // audit54: `pagesize` listed unpaged, at the defaults.
    entry: 'listAndWatch',
    call: () => listAndWatch(fakeListWatch(), { decode: (raw: unknown) => raw, pagesize: 5 } as never),
    message: /^listAndWatch: unknown option `pagesize` \(a number \(5\)\); did you mean `pageSize`\?$/,
  },
  {
    entry: 'listAndWatch (its backoff)',
    call: () => listAndWatch(fakeListWatch(), { decode: (raw: unknown) => raw, backoff: { maxMS: 5 } } as never),
    message: /^listAndWatch: unknown option `backoff\.maxMS` .*did you mean `backoff\.maxMs`\?$/,
  },
  {
    entry: 'createWorkQueue',
    call: () => createWorkQueue({ nmae: 'pods' } as never),
    message: /^createWorkQueue: unknown option `nmae` \("pods"\); did you mean `name`\?$/,
  },
  {
    entry: 'createDelayingQueue',
    call: () => createDelayingQueue({ schedular: undefined, nmae: 'pods' } as never),
    message: /^createDelayingQueue: unknown option `nmae` .*did you mean `name`\?$/,
  },
  {
    entry: 'createRateLimitingQueue',
    call: () => createRateLimitingQueue({ ratelimiter: bucketRateLimiter() } as never),
    message: /^createRateLimitingQueue: unknown option `ratelimiter` .*did you mean `rateLimiter`\?$/,
  },
  {
    entry: 'bucketRateLimiter',
    call: () => bucketRateLimiter({ qsp: 5 } as never),
    message: /^bucketRateLimiter: unknown option `qsp` \(a number \(5\)\); did you mean `qps`\?$/,
  },
  {
    entry: 'leaderElection',
    call: () => leaderElection(offlineKc(), { name: 'lead', identity: 'a', leaseDuration: 30_000 } as never),
    message: /^leaderElection: unknown option `leaseDuration` \(a number \(30000\)\); did you mean `leaseDurationMs`\?$/,
  },
  {
    entry: 'httpLeaseClients',
    call: () => httpLeaseClients(offlineKc(), { namespace: 'ops', maxBodyByte: 1_024 } as never),
    message: /^httpLeaseClients: unknown option `maxBodyByte` \(a number \(1024\)\); did you mean `maxBodyBytes`\?$/,
  },
  {
    entry: 'sharding',
    call: () => sharding(httpLeaseClients(offlineKc()), { name: 'web', shards: 2, identity: 'a', retryPeriod: 1_000 } as never),
    message: /^sharding: unknown option `retryPeriod` .*did you mean `retryPeriodMs`\?$/,
  },
];

describe('an unknown option name is refused where the options enter', () => {
  for (const { entry, call, message } of CASES)
    it(`${entry}: a TypeError naming it and the nearest known name`, () => {
      expect(call).toThrow(TypeError);
      expect(call).toThrow(message);
    });

  it('an option whose value is undefined asks for nothing and is let be (a spread of optional settings)', () => {
    expect(() => createWorkQueue({ nmae: undefined } as never)).not.toThrow();
    expect(() => bucketRateLimiter({ qps: 5, burst: 10 })).not.toThrow();
    const every: Required<HttpLeaseOptions> = {
      namespace: 'ops',
      requestTimeoutMs: 1_000,
      userAgent: 'me',
      maxBodyBytes: 1_024,
      maxListTotalBytes: 4_096,
      protocol: 'http1',
    };
    expect(() => httpLeaseClients(offlineKc(), every)).not.toThrow();
  });

  it('with no name near, the known names are listed', () => {
    expect(() => checkOptionNames('f', { zzzzzz: 1 }, ['port', 'host'], 'o.')).toThrow(
      /^f: unknown option `o\.zzzzzz` \(a number \(1\)\); known: `o\.port`, `o\.host`$/,
    );
  });
});
