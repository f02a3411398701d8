/**
 * record() of a metadata-only ListWatch of Secrets (PartialObjectMetadata: no kind Secret, no Secret's shape): the
 * last-applied annotation, which holds the Secret's data in clear, is hidden whatever `resource` says (audit43: it
 * was written in clear unless `resource: 'secrets'` was passed exactly), on the list page, on a watch event given as
 * an object, and on one given as the line it was read from (which must then not be written as it came).
 */
import { describe, expect, it } from 'vitest';
import { lastValueFrom, of, toArray } from 'rxjs';
import { LAST_APPLIED } from '../../../src/0-model/redact.ts';
import type { ListWatch, LinedFrame } from '../../../src/1-transport/listWatch.ts';
import { record } from '../../../src/1-transport/trace/record.ts';
import { traceWriter } from '../../../src/1-transport/trace/writer.ts';

const PW = 'PWrecordMetadata0hunter2';
const secretApplied = JSON.stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db' }, stringData: { password: PW } });
const partial = (rv: string, applied = secretApplied) => ({
  apiVersion: 'meta.k8s.io/v1',
  kind: 'PartialObjectMetadata',
  metadata: { name: 'db', namespace: 'shop', resourceVersion: rv, annotations: { [LAST_APPLIED]: applied, team: 'shop' } },
});

/** The trace's lines after the header, parsed, of a list and a watch through `record(lw)` with `options`. */
async function recorded(lw: ListWatch, options: Parameters<typeof record>[2]): Promise<{ text: string; lines: Record<string, unknown>[] }> {
  const out: string[] = [];
  const writer = traceWriter({ write: (l) => void out.push(l), resources: ['x'] });
  const r = record(lw, writer, options);
  await lastValueFrom(r.list({}).pipe(toArray()));
  await lastValueFrom(r.watch({ resourceVersion: '5' }).pipe(toArray()));
  const text = out.join('');
  return {
    text,
    lines: text
      .trimEnd()
      .split('\n')
      .slice(1)
      .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

const annotationsOf = (object: unknown) => (object as { metadata: { annotations: Record<string, string> } }).metadata.annotations;

describe('record of metadata-only Secrets', () => {
  for (const resource of [undefined, 'secrets-metadata', 'secrets'])
    for (const lined of [false, true])
      it(`resource ${resource}, watch ${lined ? 'lines' : 'objects'}: the last-applied annotation is hashed, the rest kept`, async () => {
        const event = { type: 'MODIFIED', object: partial('6') };
        const lw: ListWatch = {
          list: () => of({ resourceVersion: '5', items: [partial('4')] }),
          watch: () => of(event),
          ...(lined ? { watchLines: () => of<LinedFrame>({ frame: event, line: JSON.stringify(event) }) } : {}),
        } as ListWatch;
        const { text, lines } = await recorded(lw, resource === undefined ? {} : { resource });
        expect(text).not.toContain(PW);
        const page = lines.find((l) => l['type'] === 'page') as { items: unknown[] };
        const watched = lines.find((l) => l['type'] === 'event') as { event: { object: unknown } };
        for (const object of [page.items[0], watched.event.object]) {
          expect(annotationsOf(object)[LAST_APPLIED]).toMatch(/^<redacted:[0-9a-f]{12}>$/);
          expect(annotationsOf(object)['team']).toBe('shop');
        }
      });

  it("another object's last-applied is written as it is; a Secret's with spaces about the colon is hidden", async () => {
    const configMap = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', data: { note: 'the "Secret" is elsewhere' } });
    const spaced = `{"apiVersion": "v1", "kind" : "Secret", "stringData": {"password": "${PW}"}}`;
    const lw: ListWatch = {
      list: () => of({ resourceVersion: '5', items: [partial('4', configMap)] }),
      watch: () => of({ type: 'MODIFIED', object: partial('6', spaced) }),
    } as ListWatch;
    const { text, lines } = await recorded(lw, {});
    expect(text).not.toContain(PW);
    const page = lines.find((l) => l['type'] === 'page') as { items: unknown[] };
    expect(annotationsOf(page.items[0])[LAST_APPLIED]).toBe(configMap);
  });

  it('redact: false writes it as it came (said explicitly)', async () => {
    const lw: ListWatch = {
      list: () => of({ resourceVersion: '5', items: [partial('4')] }),
      watch: () => of({ type: 'MODIFIED', object: partial('6') }),
    } as ListWatch;
    const { text } = await recorded(lw, { redact: false });
    expect(text).toContain(PW);
  });
});
