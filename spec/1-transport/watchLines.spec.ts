/**
 * `httpListWatch(…).watchLines`: each frame with its line's text only when the line is the event exactly,
 * against a scripted server on 127.0.0.1 sending lines a serializer of the parsed event would write otherwise.
 */
import { firstValueFrom, take, toArray } from 'rxjs';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigMap, metadataOnly, type KubeObject, type Resource } from '../../src/index.ts';
import { httpListWatch } from '../../src/1-transport/httpTransport.ts';
import { InformerError } from '../../src/0-model/errors.ts';
import type { LinedFrame } from '../../src/1-transport/listWatch.ts';
import { smallServer } from '../integration/smallServer.ts';

let server: Awaited<ReturnType<typeof smallServer>> | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const object = (name: string, rv: string, extra = '') =>
  `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"${name}","namespace":"default","resourceVersion":"${rv}"}${extra}}`;

/** Lines a JSON.stringify of the parsed event would not reproduce byte for byte, and lines that are not the event. */
const LINES = [
  // Go's escapes of <, > and &, spaces, a number written long: written as they came.
  `{"type":"ADDED","object":${object('a', '2', ',"data":{"v":"\\u003cb\\u003e \\u0026"}')}}`,
  `{ "type" : "MODIFIED" , "object" : ${object('b', '3', ',"data":{"n":"żółw 🐢","x":"1.50"}')} }`,
  // A member beyond type and object: the event leaves it out, so the line is not written as it came.
  `{"type":"MODIFIED","object":${object('c', '4')},"extra":1}`,
  'not json',
  `{"type":"DELETED","object":${object('a', '5')}}`,
];

async function watchLinesOf(
  options: Parameters<typeof httpListWatch>[2],
  resource: Resource<KubeObject> = ConfigMap as Resource<KubeObject>,
) {
  server = await smallServer((_request, response) => {
    response.writeHead(200, { 'Content-Type': 'application/json' });
    // Split mid-line and mid-character: the line and its byte count come out whole.
    const text = Buffer.from(LINES.join('\n') + '\n');
    response.write(text.subarray(0, 200));
    response.write(text.subarray(200));
  });
  const listWatch = httpListWatch(server.kc, { resource }, options);
  return firstValueFrom(listWatch.watchLines!({}).pipe(take(LINES.length), toArray()));
}

describe('httpListWatch(…).watchLines', () => {
  it.each([false, true])(
    'gives the line (and its UTF-8 bytes) exactly for the events that are their line (lazyDecode %s)',
    async (lazyDecode) => {
      const frames: readonly LinedFrame[] = await watchLinesOf({ lazyDecode });
      expect(frames.map((f) => f.line)).toEqual([LINES[0], LINES[1], undefined, undefined, LINES[4]]);
      const bytes = (i: number) => Buffer.byteLength(LINES[i]!);
      expect(frames.map((f) => f.bytes)).toEqual([bytes(0), bytes(1), undefined, undefined, bytes(4)]);
      // The frames are those of `watch`: the third event without its extra member, the fourth an error frame.
      expect(frames[2]!.frame).toMatchObject({ type: 'MODIFIED', object: { metadata: { name: 'c' } } });
      expect(frames[3]!.frame).toBeInstanceOf(InformerError);
      expect(JSON.parse(JSON.stringify((frames[1]!.frame as { object: unknown }).object))).toEqual(JSON.parse(LINES[1]!).object);
    },
  );

  it('gives no line for an object the lazy reader skipped (its skeleton is not the line)', async () => {
    const frames = await watchLinesOf({ lazyDecode: true, keepObject: ({ metadata }) => metadata['name'] !== 'a' });
    expect(frames.map((f) => f.line)).toEqual([undefined, LINES[1], undefined, undefined, undefined]);
  });

  it('gives no line for a full object cut down to its metadata (metadataOnly, the server sending full objects)', async () => {
    const frames = await watchLinesOf({}, metadataOnly(ConfigMap) as unknown as Resource<KubeObject>);
    expect(frames.map((f) => f.line)).toEqual([undefined, undefined, undefined, undefined, undefined]);
    expect(frames[0]!.frame).toMatchObject({ type: 'ADDED', object: { kind: 'PartialObjectMetadata' } });
  });
});
