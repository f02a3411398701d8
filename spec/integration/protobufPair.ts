/**
 * The set-up protobufSharded.spec.ts and protobufShardedDeployment.spec.ts share: a sharded informer reading JSON and
 * one reading protobuf against the same emulator, on fixed shards, and their caches as plain JSON to compare.
 */
import { afterEach } from 'vitest';
import { EMPTY, from, of, Subscription } from 'rxjs';
import type { ApiServer } from 'rx-informer-emulator';
import { type KubeObject, type Resource, type Store } from '../../src/index.ts';
import { shardedInformer } from '../../src/leaderelection/index.ts';
import type { Encoding, ShardSource } from '../../src/pipeline.ts';
import { shardOf } from '../../src/leaderelection/hash.ts';

/** `shards` shards, of which `held` are this replica's, never changing. */
export function staticShards(shards: number, held: ReadonlySet<number>): ShardSource {
  return {
    shards,
    shardOf: (key) => shardOf(key, shards),
    held$: of(held),
    owns: (key) => held.has(shardOf(key, shards)),
    gate: (key, work) => (held.has(shardOf(key, shards)) ? from(work()) : EMPTY),
  };
}

/** Polls `check` until it holds (the assertion is the condition; the deadline only ends a hung test). */
export async function until(check: () => boolean, what: string, deadlineMs = 20_000): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > deadlineMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

/** A cache as plain JSON by key. */
export function snapshot<T>(store: Store<T> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of store?.keys() ?? []) out[key] = plain(store!.get(key));
  return out;
}

/**
 * Per test: the emulator it starts (`pair.api`) and the informers it follows, unsubscribed and closed after it.
 * `follow` starts a sharded informer of `resource` over `encoding` (HTTP/2 when the server speaks it, gzipped).
 */
export function protobufPair(shards: ShardSource) {
  const pair = {
    api: undefined as ApiServer | undefined,
    running: new Subscription(),
    follow<T extends KubeObject>(resource: Resource<T>, encoding: Encoding, server: ApiServer): { store: () => Store<T> | undefined } {
      let store: Store<T> | undefined;
      const informer = shardedInformer(server.kubeConfig, resource, shards, {
        http: { encoding, protocol: server.http2 ? 'h2' : 'http1', compression: 'gzip' },
      });
      pair.running.add(informer.store$.subscribe((s) => (store = s)));
      return { store: () => store };
    },
  };
  afterEach(async () => {
    pair.running.unsubscribe();
    pair.running = new Subscription();
    await pair.api?.close();
    pair.api = undefined;
  });
  return pair;
}
