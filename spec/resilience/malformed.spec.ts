/**
 * Malformed input on a live watch, through the emulator, each reported with its
 * reason. A line that cannot be decoded (not JSON, not an event, too long) may
 * have been a change: it ends the watch, which resumes at once from the last
 * resourceVersion processed, so the server sends the change again (no relist).
 * A decodable line with an invalid object or an unknown type is skipped and the
 * same watch goes on. The line splitter's bounded memory for oversize lines is
 * covered in spec/1-transport/lineSplitter.spec.ts; here an 8 MiB line goes through HTTP.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigMap, type ErrorReason } from '../../src/index.ts';
import { startApiServer, type ApiServer, type Fault } from 'rx-informer-emulator';
import { cm, converged, run, waitFor, type Running } from './harness/live.ts';

let api: ApiServer | undefined;
let live: Running<ConfigMap> | undefined;
afterEach(async () => {
  live?.stop();
  live = undefined;
  await api?.close();
  api = undefined;
});

const MiB = 1024 * 1024;
const line = (text: string): Fault => ({ type: 'malformedLine', line: text, afterEvents: 1 });

const cases: { name: string; fault: Fault; reason: ErrorReason; message: RegExp; resumes?: true }[] = [
  {
    name: 'invalid JSON',
    fault: line('{"type":"MODIFIED","object":{"kind":"'),
    reason: 'MalformedLine',
    message: /not JSON/,
    resumes: true,
  },
  { name: 'JSON that is not an event', fault: line('[1,2,3]'), reason: 'MalformedLine', message: /not an event/, resumes: true },
  {
    name: 'an event without a type',
    fault: line('{"object":{"metadata":{"name":"q"}}}'),
    reason: 'MalformedLine',
    message: /not an event/,
    resumes: true,
  },
  {
    name: 'an object without metadata',
    fault: line('{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","data":{"k":"v"}}}'),
    reason: 'ValidationFailed',
    message: /metadata/,
  },
  {
    name: 'an object with a __proto__ key',
    fault: line(
      '{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","__proto__":{"polluted":"yes"},"metadata":{"name":"evil","namespace":"default"}}}',
    ),
    reason: 'ValidationFailed',
    message: /__proto__/,
  },
  {
    name: 'an unknown event type',
    fault: line('{"type":"EXPLODED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"z","namespace":"default"}}}'),
    reason: 'UnknownEventType',
    message: /EXPLODED/,
  },
  {
    name: 'an 8 MiB line over the 1 MiB limit',
    fault: { type: 'oversizeLine', bytes: 8 * MiB, afterEvents: 1 },
    reason: 'MalformedLine',
    message: /passed the 1 MiB limit/,
    resumes: true,
  },
];

// Eager and lazy decoding read lines on different paths (text, bytes): both must report the same.
describe.each([false, true])('malformed watch lines (lazyDecode: %s)', (lazyDecode) => {
  it.each(cases)('$name: reported as $reason (resumes from the last rv: $resumes)', async ({ fault, reason, message, resumes }) => {
    api = await startApiServer();
    api.faults.add({ match: { watch: true }, fault });
    live = run(api, ConfigMap, { http: { maxLineBytes: MiB, lazyDecode } });
    await waitFor('the initial list', live.synced);
    api.create('configmaps', cm('x')); // the bad line follows x …
    api.create('configmaps', cm('y')); // … and y follows it, on the same watch
    await converged(api, live, 'configmaps');

    expect(live.errors).toHaveLength(1);
    expect(live.errors[0]).toMatchObject({ reason, phase: 'watch' });
    expect(live.errors[0]?.message).toMatch(message);
    expect(live.store()?.keys()).toEqual(['default/x', 'default/y']);
    if (resumes) {
      // The first watch ended at the bad line; the second resumed at once from x's resourceVersion.
      expect(live.requests().map((r) => (r.watch ? 'watch' : 'list'))).toEqual(['list', 'watch', 'watch']);
      expect(live.watches()[0]?.ended).toBeDefined();
      expect(live.watches()[1]?.query.resourceVersion).toBe(api.get('configmaps', 'default', 'x')?.metadata?.resourceVersion);
    } else {
      expect(live.requests().map((r) => (r.watch ? 'watch' : 'list'))).toEqual(['list', 'watch']);
      expect(live.watches()[0]?.ended).toBeUndefined(); // still open
    }
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
  });
});
