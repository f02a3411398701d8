/**
 * Discovery's requests honour the transport options informers' requests do (src/discovery/discovery.ts,
 * `DiscoveryOptions`, `discoveryRequestOptions`): `http1IdleTimeoutMs` among them (in virtual time: vi fake timers
 * drive the client's timers, sockets stay real), and the dynamic factory's discovery takes the request options of
 * `factoryOptions.http`. One `HttpTransportOptions` object handed to the informers and discovery is accepted, the
 * options discovery does not read included (audit54: `discover(kc, http)` threw "unknown option `maxListBytes`").
 */
import { firstValueFrom, type Subscription } from 'rxjs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { KubeConfig } from '@kubernetes/client-node';
import { discover, dynamicInformerFactory } from '../../src/discovery/index.ts';
import { discoveryRequestOptions } from '../../src/discovery/discovery.ts';
import type { HttpTransportOptions } from '../../src/pipeline.ts';
import { HTTP_OPTION_NAMES } from '../../src/1-transport/http/optionNames.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { io, waitReal } from '../support/realIo.ts';

let api: ApiServer | undefined;
const subscriptions: Subscription[] = [];
afterEach(async () => {
  for (const s of subscriptions.splice(0)) s.unsubscribe();
  vi.useRealTimers();
  await api?.close();
  api = undefined;
});

function kubeConfigOf(server: ApiServer): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(server.kubeConfig.exportConfig());
  return kc;
}

describe('discovery and the transport options', () => {
  it('http1IdleTimeoutMs: the idle keep-alive connection of discovery is closed after it, not after the default 90 s', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'] });
    api = await startApiServer({ keepAliveTimeoutMs: 0 });
    const server = api;
    let found = false;
    void firstValueFrom(discover(kubeConfigOf(server), { http1IdleTimeoutMs: 10_000 })).then(() => (found = true));
    await waitReal('discovery', () => found);
    await io();
    expect(server.openConnections).toBeGreaterThan(0);
    await vi.advanceTimersByTimeAsync(9_999);
    await io();
    expect(server.openConnections).toBeGreaterThan(0);
    await vi.advanceTimersByTimeAsync(1); // 10 s: not the default 90 s
    await waitReal('the server to see every connection closed', () => server.openConnections === 0);
  });

  it('discoveryRequestOptions takes every request option of an informer’s transport options, and no other', () => {
    const http2 = { idleTimeoutMs: 5 };
    expect(
      discoveryRequestOptions({
        userAgent: 'ua/1',
        requestTimeoutMs: 1,
        tlsHandshakeTimeoutMs: 8,
        listIdleTimeoutMs: 2,
        minBodyBytesPerSecond: 3,
        maxDocumentBytes: 4,
        maxErrorBodyBytes: 5,
        protocol: 'http1',
        http2,
        http1IdleTimeoutMs: 6,
        compression: 'none',
        maxListBytes: 7,
        lazyDecode: true,
        encoding: 'protobuf',
        reachability: false,
      }),
    ).toEqual({
      userAgent: 'ua/1',
      requestTimeoutMs: 1,
      tlsHandshakeTimeoutMs: 8,
      listIdleTimeoutMs: 2,
      minBodyBytesPerSecond: 3,
      maxDocumentBytes: 4,
      maxErrorBodyBytes: 5,
      protocol: 'http1',
      http2,
      http1IdleTimeoutMs: 6,
      compression: 'none',
    });
    expect(discoveryRequestOptions(undefined)).toEqual({});
  });

  it("the dynamic factory's discovery asks as the default factory's informers do (factoryOptions.http); its own options win", async () => {
    api = await startApiServer();
    const server = api;
    const uaOf = (path: string) => server.requests.filter((r) => r.path === path).map((r) => r.userAgent);
    const dynamic = dynamicInformerFactory(kubeConfigOf(server), { factoryOptions: { http: { userAgent: 'informers/1' } } });
    await firstValueFrom(dynamic.discovery$);
    expect([...new Set([...uaOf('/api'), ...uaOf('/apis'), ...uaOf('/api/v1')])]).toEqual(['informers/1']);

    const before = server.requests.length;
    const own = dynamicInformerFactory(kubeConfigOf(server), {
      factoryOptions: { http: { userAgent: 'informers/1' } },
      discovery: { userAgent: 'discovery/1' },
    });
    await firstValueFrom(own.discovery$);
    const later = server.requests.slice(before).filter((r) => r.path === '/api' || r.path === '/apis');
    expect([...new Set(later.map((r) => r.userAgent))]).toEqual(['discovery/1']);
  });
});

describe('one HttpTransportOptions object for the informers and discovery', () => {
  /** A cluster nothing listens on: nothing here subscribes, so no request is made. */
  const offline = () => {
    const kc = new KubeConfig();
    kc.loadFromClusterAndUser({ name: 'c', server: 'https://127.0.0.1:9', skipTLSVerify: true }, { name: 'u' });
    return kc;
  };
  // A variable: TypeScript checks no excess member of it, and every transport option is here.
  const http: HttpTransportOptions = { requestTimeoutMs: 10_000, maxListBytes: 64 * 1024 * 1024 };
  const every = Object.fromEntries(
    HTTP_OPTION_NAMES.map((name) => [name, name === 'http2' ? { readIdleMs: 1 } : 1]),
  ) as HttpTransportOptions;

  it('discover(kc, http) accepts every transport option name, read or not', () => {
    expect(HTTP_OPTION_NAMES).toContain('maxListBytes');
    expect(() => discover(offline(), http)).not.toThrow();
    expect(() => discover(offline(), every)).not.toThrow();
  });

  it("dynamicInformerFactory's discovery accepts them too", () => {
    const kc = offline();
    expect(() => dynamicInformerFactory(kc, { factoryOptions: { http }, discovery: http, reportUnobservedErrors: false })).not.toThrow();
    expect(() => dynamicInformerFactory(kc, { discovery: every, reportUnobservedErrors: false })).not.toThrow();
  });

  it('a misspelt name is still refused, with the nearest', () => {
    expect(() => discover(offline(), { maxListByte: 5 } as never)).toThrow(
      /^discover: unknown option `maxListByte` .*did you mean `maxListBytes`\?$/,
    );
    expect(() => dynamicInformerFactory(offline(), { discovery: { requestTimeoutMS: 5 }, reportUnobservedErrors: false } as never)).toThrow(
      /^dynamicInformerFactory: unknown option `discovery\.requestTimeoutMS` .*did you mean `discovery\.requestTimeoutMs`\?$/,
    );
  });
});
