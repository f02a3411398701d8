/**
 * Hostile traces, each with the line a reader must name and what it must say: the library's reader
 * (spec/1-transport/trace/format.spec.ts) and the emulator's replay over HTTP (spec/emulator/replayStrict.spec.ts)
 * refuse every one, at the same line.
 */
import { TRACE_FORMAT_VERSION, type TraceHeader } from '../../../src/1-transport/trace/format.ts';

export const header: TraceHeader = {
  type: 'header',
  format: 'rx-informer-trace',
  version: TRACE_FORMAT_VERSION,
  startedAt: '2026-01-01T00:00:00.000Z',
  resources: ['pods'],
  redacted: true,
};
export const lines = (...records: readonly unknown[]) => records.map((r) => `${JSON.stringify(r)}\n`).join('');
export const list = { type: 'list', at: 0, id: 0, options: { resourceVersion: '0', limit: 1 } };
export const page = { type: 'page', at: 5, id: 0, resourceVersion: '10', continue: 'c1', items: [{ metadata: { name: 'a' } }] };
export const end = (at: number, id = 0) => ({ type: 'end', at, id, how: 'complete' });

/** [what is wrong, the trace, the line to name, what to say]. */
export const HOSTILE_TRACES: readonly (readonly [string, string, number, RegExp])[] = [
  ['empty', '', 1, /empty/],
  ['truncated: the last line cut', lines(header, list).slice(0, -8), 2, /truncated/],
  ['another format version', lines({ ...header, version: 2 }, list), 1, /format version 2; this reader reads version 1/],
  ['not a trace', lines({ hello: 1 }), 1, /not an rx-informer-trace header/],
  ['not JSON', `${lines(header)}{"type":\n`, 2, /not JSON/],
  ['a line of no known type', lines(header, { type: 'gossip', at: 0, id: 0 }), 2, /type/],
  ['a field of the wrong type', lines(header, { ...list, at: 'soon' }), 2, /at/],
  ['times going backwards', lines(header, { ...list, at: 9 }, { ...page, at: 3 }), 3, /time goes backwards \(3 ms after 9 ms\)/],
  ['a page of no open request', lines(header, page), 2, /not open/],
  ['a request id used twice', lines(header, list, page, end(6), { ...list, at: 7 }), 5, /used twice/],
  [
    'pages that do not chain',
    lines(header, list, page, end(6), { type: 'list', at: 8, id: 1, options: { continue: 'other' } }),
    5,
    /pages do not chain: a list continues from "other", the last page gave "c1"/,
  ],
  ['a line after the stop line', lines(header, { type: 'stop', at: 1, why: 'maxBytes' }, list), 3, /after the `stop` line/],
  ['a start that is no date', lines({ ...header, startedAt: 'yesterday' }, list), 1, /startedAt: Invalid ISO datetime/],
  ['a start without its offset', lines({ ...header, startedAt: '2026-01-01T10:00:00' }, list), 1, /startedAt: Invalid ISO datetime/],
  ['a start on no day', lines({ ...header, startedAt: '2026-02-31T10:00:00Z' }, list), 1, /startedAt: Invalid ISO datetime/],
  ['a time no date holds', lines(header, { ...list, at: 1e300 }), 2, /at: Too big/],
  // What a reader keeps of a request line is bounded: its options are the writer's fixed set, the line short.
  ['an option no request has', lines(header, { ...list, options: { limit: 1, pad: 'x' } }), 2, /options: Unrecognized key: "pad"/],
  [
    'a request line over 64 KiB',
    lines(header, { ...list, options: { continue: 'x'.repeat(70_000) } }),
    2,
    /a list request line longer than 65536 bytes/,
  ],
  // Writing such a line again (trim, the emulator) or copying it would overflow the stack.
  [
    'a line nested 200,000 levels deep',
    `${lines(header, list)}{"type":"page","at":1,"id":0,"resourceVersion":"1","items":[${'['.repeat(200_000)}${']'.repeat(200_000)}]}\n`,
    3,
    /nested deeper than 1000 levels/,
  ],
  // The header too (its `options` are free-form): `trim` writing it again overflowed the stack, naming no line (audit24).
  [
    'a header nested 200,000 levels deep',
    `{"type":"header","format":"rx-informer-trace","version":1,"startedAt":"2026-01-01T00:00:00Z","resources":["pods"],"redacted":true,"options":{"x":${'['.repeat(200_000)}${']'.repeat(200_000)}}}\n${lines(list)}`,
    1,
    /nested deeper than 1000 levels/,
  ],
  // A replay runs an informer for each resource the header lists (audit24: 2,000 took 23 s for nothing).
  [
    'a header of 1,001 resources',
    lines({ ...header, resources: Array.from({ length: 1001 }, (_, i) => `r${i}`) }, list),
    1,
    /a header of 1001 resources; a reader takes at most 1000/,
  ],
  // Parsing makes an object of each: 20 million `{}` in one page cost gigabytes (audit24). Counted before the parse.
  [
    'a page of 4,000,001 objects',
    `${lines(header, list)}{"type":"page","at":1,"id":0,"resourceVersion":"1","items":[${'{},'.repeat(4_000_000)}{}]}\n`,
    3,
    /more than 4000000 arrays and objects/,
  ],
  // A request for a resource the header does not list would be replayed by nothing, silently.
  [
    'a request for a resource the header does not list',
    lines({ ...header, resources: [] }, { ...list, resource: 'secrets' }),
    2,
    /a list request for secrets the header does not list \(it lists none\)/,
  ],
  [
    'a request naming no resource, the header none',
    lines({ ...header, resources: [] }, list),
    2,
    /a list request for a resource the header/,
  ],
  [
    'a request for another resource',
    lines(header, { ...list, resource: 'secrets' }),
    2,
    /for secrets the header does not list \(it lists pods\)/,
  ],
];
