/**
 * A sync's list pages decoded whole (as before issue #22's change) against decoded in pieces as they arrive
 * (src/1-transport/http/listBody.ts), in-process: P pods in pages of S, each page fed as 64 KiB chunks (what
 * a socket hands over), every decoded item kept in a Map (a cache). CPU time of the decoding and caching
 * (all threads) and the collector's runs.
 *
 *   node bench/micro/listPages.ts eager-whole|eager-pieces|lazy-whole|lazy-pieces|drop-whole|drop-pieces [pods] [pageSize] [full|meta]
 */
import { countCollections } from './gcCounts.ts';
import { listBodyDecoder } from '../../src/1-transport/http/listBody.ts';
import { lazyParseList } from '../../src/1-transport/lazyList.ts';
import { makePod } from '../workload/pods.ts';

const [variant = 'eager-pieces', podsArg = '50000', sizeArg = '500', shape = 'full'] = process.argv.slice(2);
const PODS = Number(podsArg);
const SIZE = Number(sizeArg);

/** ~4.7 KB pods as list items (or ~2.1 KB PartialObjectMetadata), 2,000 distinct texts reused with a page number in the name. */
const texts = Array.from({ length: 2000 }, (_, i) => {
  const pod = makePod({ index: i, resourceVersion: i + 1, revision: 0 });
  if (shape === 'meta') return `{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/v1","metadata":${JSON.stringify(pod.metadata)}}`;
  const { kind: _kind, apiVersion: _apiVersion, ...item } = pod;
  return JSON.stringify(item);
});
function pageChunks(page: number): Buffer[] {
  const items = Array.from({ length: SIZE }, (_, k) => texts[(page * SIZE + k) % texts.length]!.replace('"name":"', `"name":"p${page}-`));
  const bytes = Buffer.from(`{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[${items.join(',')}]}`);
  const chunks: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += 65536) chunks.push(Buffer.from(bytes.subarray(at, at + 65536)));
  return chunks;
}

const keep = variant.startsWith('drop') ? () => false : undefined;
const decode: (chunks: Buffer[]) => { items: unknown[] } = variant.endsWith('whole')
  ? variant.startsWith('eager')
    ? (chunks) => JSON.parse(Buffer.concat(chunks).toString('utf8')) as { items: unknown[] }
    : (chunks) => lazyParseList(Buffer.concat(chunks), keep) as { items: unknown[] }
  : (chunks) => {
      const decoder = listBodyDecoder(!variant.startsWith('eager'), keep);
      for (const chunk of chunks) decoder.chunk(chunk);
      decoder.end();
      return decoder.value() as { items: unknown[] };
    };

const gcCounts = countCollections();

const cache = new Map<string, unknown>();
let cpuUs = 0;
for (let page = 0; page * SIZE < PODS; page++) {
  const chunks = pageChunks(page);
  const before = process.cpuUsage();
  const { items } = decode(chunks);
  for (let k = 0; k < items.length; k++) cache.set(`${page}/${k}`, items[k]);
  const used = process.cpuUsage(before);
  cpuUs += used.user + used.system;
}
setTimeout(() => {
  console.log(
    `${variant} ${shape} ${PODS} pods, pages of ${SIZE}: decode and cache ${(cpuUs / 1000).toFixed(0)} ms of CPU ` +
      `(${(cpuUs / PODS).toFixed(1)} µs a pod), ${gcCounts.markCompacts} mark-compacts, ${gcCounts.scavenges} scavenges, ${cache.size} cached`,
  );
}, 100);
