/** What the hostile-server specs share: limits of the test, and small helpers. */
import { lastValueFrom, type Observable, type Subscription } from 'rxjs';
import { afterEach } from 'vitest';
import { ConfigMap, type ErrorReason, type InformerError } from '../../../src/index.ts';
import { type HttpTransportOptions } from '../../../src/pipeline.ts';
import { httpListWatch, type WatchFrame } from '../../../src/pipeline.ts';
import { MiB } from './memory.ts';
import { behave, hostileServer, type Behaviour, type HostileServer, type RequestKind } from './server.ts';

export const target = { resource: ConfigMap, namespace: 'default' } as const;
/** What may sit in socket buffers (both ends) and in flight when the client stops reading. */
export const IN_FLIGHT = 24 * MiB;
/** Retained memory growth allowed while a pathological response is read: far below what it sends. */
export const BUDGET = 16 * MiB;

/**
 * Per test: the servers `serve` (or `start`, one request kind's behaviour) makes and the subscriptions pushed
 * on `subscriptions`; after each test the subscriptions end, then the servers close.
 */
export function perTest() {
  const subscriptions: Subscription[] = [];
  const servers: HostileServer[] = [];
  afterEach(async () => {
    for (const s of subscriptions.splice(0)) s.unsubscribe();
    for (const s of servers.splice(0)) await s.close();
  });
  const serve = async (behaviours: Parameters<typeof hostileServer>[0]): Promise<HostileServer> => {
    const server = await hostileServer(behaviours);
    servers.push(server);
    return server;
  };
  return { subscriptions, serve, start: (kind: RequestKind, behaviour: Behaviour) => serve({ [kind]: behaviour }) };
}

/** The error a cold Observable ends with (fails the test if it completes). */
export async function failure(observable: Observable<unknown>): Promise<InformerError> {
  try {
    await lastValueFrom(observable);
  } catch (error) {
    return error as InformerError;
  }
  throw new Error('expected an error, got a completion');
}

/** A watch's frames and how it ended (its subscription goes into `subscriptions`). */
export function watchOf(s: HostileServer, subscriptions: Subscription[], http: HttpTransportOptions = {}) {
  const frames: WatchFrame[] = [];
  const end: { error?: InformerError; complete?: boolean } = {};
  subscriptions.push(
    httpListWatch(s.kc, target, http)
      .watch({ resourceVersion: '10' })
      .subscribe({ next: (f) => frames.push(f), error: (e: InformerError) => (end.error = e), complete: () => (end.complete = true) }),
  );
  const errors = () => frames.filter((f): f is InformerError => f instanceof Error);
  return { frames, end, errors };
}

export interface Case {
  readonly name: string;
  readonly kind: RequestKind;
  readonly behaviour: Behaviour;
  readonly http?: HttpTransportOptions;
  readonly reason: ErrorReason;
  readonly message: RegExp;
  readonly status?: number;
}

export const LIST_BODY_HEAD = '{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"10"},"items":[';

/** Discovery whose `path` answers with `behaviour`, the rest as a small well-behaved server. */
export function discoveryWith(path: string, behaviour: Behaviour): Behaviour {
  const good = behave.discovery();
  return (request, response) => (request.url.pathname === path ? behaviour(request, response) : good(request, response));
}

/** A 200 with this exact body. */
export const json =
  (body: string): Behaviour =>
  (_request, response) => {
    response.writeHead(200, { 'Content-Type': 'application/json' });
    response.end(body);
  };
