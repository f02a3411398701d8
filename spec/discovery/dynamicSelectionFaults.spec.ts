/**
 * A watch's selection predicate is user code and may throw (house rule: report it and go on). Before, the throw left
 * the discovery handler of `dynamicWatch`: rxjs reported it as an unhandled error (thrown on a timer: a process without
 * an `uncaughtException` handler ended), and the resources after it in that discovery were never considered.
 */
import { type Subscription } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { dynamicInformerFactory } from '../../src/discovery/index.ts';
import type { InformerError } from '../../src/index.ts';
import { resourceName } from '../../src/pipeline.ts';
import { startApiServer, type ApiServer } from 'rx-informer-emulator';
import { until } from '../support/until.ts';

let api: ApiServer | undefined;
const subscriptions: Subscription[] = [];
afterEach(async () => {
  for (const s of subscriptions.splice(0)) s.unsubscribe();
  await api?.close();
  api = undefined;
});

describe('dynamic watch: a selection predicate that throws', () => {
  it('is reported on errors$ as a HandlerError naming the resource; the others start and the watch goes on', async () => {
    api = await startApiServer();
    const dynamic = dynamicInformerFactory(api.kubeConfig, { debounceMs: 20 });
    const errors: InformerError[] = [];
    subscriptions.push(dynamic.errors$.subscribe((e) => errors.push(e)));
    const events: string[] = [];
    const selection = (r: { plural: string }) => {
      if (r.plural === 'configmaps') throw new Error('no configmaps today');
      return r.plural === 'pods' || r.plural === 'services';
    };
    subscriptions.push(
      dynamic.watch(selection).subscribe((e) => events.push(`${e.type} ${'resource' in e ? resourceName(e.resource) : e.name}`)),
    );
    await until(() => errors.length > 0 && events.length >= 2, 'the fault and both informers');
    expect(errors.map((e) => [e.reason, e.phase, e.message])).toEqual([
      ['HandlerError', 'handler', "the watch's selection threw for configmaps: no configmaps today"],
    ]);
    expect(events.sort()).toEqual(['started pods', 'started services']);
  });
});
