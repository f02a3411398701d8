/**
 * A name deleted and created again while the watch is down, seen by the relist: in both delivery
 * modes, the old object's deletion (`finalStateUnknown`) and then the new object's `added`, never an
 * `updated` across two objects (issue #33.2; docs/semantics.md, "A name deleted and created again").
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigMap, type InformerEvent } from '../../src/index.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { cm, converged, run, waitFor, type Running } from '../resilience/harness/live.ts';

let api: ApiServer | undefined;
let live: Running<ConfigMap> | undefined;
afterEach(async () => {
  live?.stop();
  live = undefined;
  await api?.close();
  api = undefined;
});

const brief = (e: InformerEvent<ConfigMap>) =>
  `${e.type} ${e.object.metadata.name} ${e.object.metadata.uid?.slice(0, 8)}` +
  (e.type === 'deleted' && e.finalStateUnknown ? ' (missed)' : '') +
  (e.type === 'updated' ? ` (was ${e.oldObject.metadata.uid?.slice(0, 8)}${e.resync ? ', unchanged' : ''})` : '');

describe('a name deleted and created again while the watch is down, then a relist', () => {
  for (const delivery of ['delta-fifo', 'in-order'] as const) {
    it(`${delivery}: deleted (the old uid, missed), then added (the new uid); no update across two objects`, async () => {
      api = await startApiServer();
      const a = api.create('configmaps', cm('a'));
      const b = api.create('configmaps', cm('b'));
      const c = api.create('configmaps', cm('c'));
      live = run(api, ConfigMap, { namespace: 'default', delivery, backoff: { initialMs: 100, maxMs: 100 }, random: () => 0 });
      await waitFor('the initial list', live.synced);
      await waitFor('the watch', () => live!.watches().length === 1);

      // The watch is dropped and the next one refused (503): meanwhile a is deleted and created again, c deleted,
      // and the history compacted, so the watch that follows gets 410 and the informer relists.
      api.faults.add({ match: { watch: true }, fault: { type: 'status', code: 503 } });
      api.faults.add({ live: true, match: { watch: true }, fault: { type: 'dropWatch' } });
      await waitFor('the watch to be dropped', () => live!.watches()[0]?.ended === 'fault');
      api.delete('configmaps', 'default', 'a');
      const a2 = api.create('configmaps', cm('a'));
      api.delete('configmaps', 'default', 'c');
      api.compact();
      await converged(api, live, 'configmaps');
      await waitFor('the relist', () => live!.lists().length === 2);

      expect(a2.metadata.uid).not.toBe(a.metadata.uid);
      expect(live.watches().map((w) => w.status)).toEqual(expect.arrayContaining([200, 503]));
      expect(live.errors.map((e) => e.reason)).toEqual(expect.arrayContaining(['ServerError', 'Expired']));
      const uid = (o: { metadata: { uid?: string } }) => o.metadata.uid?.slice(0, 8);
      const after = live.events.filter((e) => !e.isInInitialList).map(brief);
      const recreated = [`deleted a ${uid(a)} (missed)`, `added a ${uid(a2)}`];
      const unchanged = `updated b ${uid(b)} (was ${uid(b)}, unchanged)`;
      const missed = `deleted c ${uid(c)} (missed)`;
      expect(after).toEqual(
        delivery === 'in-order'
          ? // Deletions of names the list lacks first, then the listed objects in list order, a's two events at its place.
            [missed, ...recreated, unchanged]
          : // The listed objects in list order (a's two events together), then the deletions of names the list lacks.
            [...recreated, unchanged, missed],
      );
      expect(live.events.some((e) => e.type === 'updated' && e.oldObject.metadata.uid !== e.object.metadata.uid)).toBe(false);
      expect(live.store()?.get('default/a')?.metadata.uid).toBe(a2.metadata.uid);
    });
  }
});
