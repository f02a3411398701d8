/**
 * One home per concept (issue #32): each of these has one implementation in src/, and a second copy
 * written beside it later would drift from it (as `reasonOfStatus` did from `reasonForStatus`, mapping
 * 504 and 410 differently). Each check names the home and finds a second copy by its shape.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function* files(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* files(path);
    else if (name.endsWith('.ts')) yield path;
  }
}

const sources = [...files(join(root, 'src'))].map((file) => ({ path: relative(root, file), text: readFileSync(file, 'utf8') }));

/** `path:line: text` of every line of src/ (but `home`) that `pattern` matches. */
function copies(pattern: RegExp, home: string): string[] {
  const found: string[] = [];
  for (const { path, text } of sources) {
    if (path === home) continue;
    text.split('\n').forEach((line, i) => {
      if (pattern.test(line)) found.push(`${path}:${i + 1}: ${line.trim()}`);
    });
  }
  return found;
}

describe('one home per concept in src/', () => {
  it('the sources are there to be read', () => {
    expect(sources.length).toBeGreaterThan(100);
    expect(sources.some((s) => s.path === 'src/0-model/errors.ts')).toBe(true);
  });

  it('status → reason: only reasonForStatus (src/0-model/errors.ts) maps an HTTP status to a reason', () => {
    const REASON = `'(?:BadRequest|Unauthorized|Forbidden|NotFound|Conflict|Expired|Gone|Invalid|TooManyRequests|ServerError|Timeout|Unknown)'`;
    // `status === 409) return 'Conflict'`, `409: 'Conflict'`, `case 504: return 'Timeout'`, a function named for it.
    const mapping = new RegExp(`\\b[45]\\d\\d\\b\\)?\\s*(?::|\\)|return)\\s*(?:return\\s*)?${REASON}|function\\s+reason\\w*Status`);
    expect(copies(mapping, 'src/0-model/errors.ts')).toEqual([]);
    // The check finds the copy this replaced.
    expect(mapping.test("  if (status === 504) return 'Timeout';")).toBe(true);
    expect(mapping.test('export function reasonOfStatus(status: number): ErrorReason {')).toBe(true);
  });

  it("what a user function's result runs as (isWork, isAsyncIterable: src/util/isWork.ts), for on() handlers and reconciles alike", () => {
    // The handlers' and the reconciles' rules differed (an async function* handler ran, a reconcile's never did).
    expect(copies(/\[Symbol\.asyncIterator\]\s*===\s*'function'/, 'src/util/isWork.ts')).toEqual([]);
    expect(copies(/\[object Generator\]/, 'src/util/isWork.ts')).toEqual([]);
  });

  it('a run held until its promises settle: one Holds (src/workqueue/holds.ts), for processItems and controller() alike', () => {
    // SettlingKeys (the controller's) and processItems' own rule were two; a bare queue ran a key twice at once.
    expect(copies(/^\s*afterSettled\(/, 'src/workqueue/holds.ts')).toEqual([]);
    expect(copies(/class \w*(Settling|Holds)\b/, 'src/workqueue/holds.ts')).toEqual([]);
  });

  it("diff noise: one list, DIFF_NOISE (src/5-informer/diff.ts); the CLI's diff uses it", () => {
    const noise = /['"]!?metadata\.(?:resourceVersion|managedFields)['"]/;
    expect(copies(noise, 'src/5-informer/diff.ts')).toEqual([]);
    expect(noise.test("export const NOISE: readonly string[] = ['metadata.resourceVersion', 'metadata.managedFields'];")).toBe(true);
  });

  it('message capping: one capper, capMessage (src/0-model/errors.ts), the only code that cuts around a surrogate pair', () => {
    const surrogateCut = /\\ud800-\\udbff/i;
    expect(copies(surrogateCut, 'src/0-model/errors.ts')).toEqual([]);
    expect(surrogateCut.test('const cut = /[\\ud800-\\udbff]/.test(text.charAt(MAX - 1)) ? MAX - 1 : MAX;')).toBe(true);
  });

  it('Retry-After: one parser, parseRetryAfter (src/0-model/retryAfter.ts); every header read goes through it', () => {
    const home = 'src/0-model/retryAfter.ts';
    // A read of the header (by its name in quotes) that does not hand it to the parser, as the sinks'
    // `Number(response.headers.get('retry-after'))` did.
    const reads = copies(/['"]retry-after['"]/i, home);
    expect(reads.length).toBeGreaterThanOrEqual(2); // the transport's and the sinks'
    expect(reads.filter((line) => !/parseRetryAfter\(|sinkRetryAfterMs\(/.test(line))).toEqual([]);
    // No second parser or clamp of it (recovery.ts had a local `clampRetryAfter` beside the imported one).
    const definition = /function\s+\w*(?:RetryAfter|retryAfter)\w*\s*\(/;
    const allowed = (line: string) => /src\/cli\/sink\.ts:\d+: export function sinkRetryAfterMs\(/.test(line);
    expect(copies(definition, home).filter((line) => !allowed(line))).toEqual([]);
    expect(definition.test('function clampRetryAfter(seconds: number | undefined): { retryAfterSeconds?: number } {')).toBe(true);
  });

  it("the reflector's backoff: one rule, REFLECTOR_BACKOFF (src/2-source/backoff.ts); discovery's retry uses it", () => {
    const rule = /initialMs:\s*800\b/;
    expect(copies(rule, 'src/2-source/backoff.ts')).toEqual([]);
    expect(sources.find((s) => s.path === 'src/2-source/backoff.ts')?.text).toMatch(rule);
    expect(sources.find((s) => s.path === 'src/discovery/discoveryRetry.ts')?.text).toMatch(/REFLECTOR_BACKOFF/);
    // The check finds the copy this replaced.
    expect(rule.test('export const DISCOVERY_RETRY: BackoffRule = { initialMs: 800, maxMs: 30_000, factor: 2, jitter: 1 };')).toBe(true);
  });

  it('keys: one builder of `namespace/name`, src/0-model/keys.ts; nothing else builds or splits a key', () => {
    const home = 'src/0-model/keys.ts';
    // `${r.namespace}/${r.name}`, `${object.metadata.namespace}/${ref.name}`
    const builds = /\$\{[^}]*namespace[^}]*\}\/\$\{/i;
    // key.indexOf('/'), key.split('/'): a key taken apart by hand
    const splits = /\bkey\w*\.(?:indexOf|lastIndexOf|split)\(['"]\/['"]\)/i;
    // a function of its own for it (shardedInformer.ts had a private keyOf, store.ts namespaceOf/nameOf)
    const helpers = /function\s+(?:keyOf|joinKey|splitKey|rawKey|namespaceOf\w*|nameOf\w*|nameIn\w*)\s*[(<]/;
    expect(copies(builds, home)).toEqual([]);
    expect(copies(splits, home)).toEqual([]);
    expect(copies(helpers, home)).toEqual([]);
    expect(builds.test('  const key = r.namespace ? `${r.namespace}/${r.name}` : r.name;')).toBe(true);
    expect(splits.test("  const slash = key.indexOf('/');")).toBe(true);
    expect(helpers.test('function keyOf(object: unknown): string | undefined {')).toBe(true);
  });

  it('HTTP requests to the API server: only the transport (src/1-transport) sends them; the Lease client goes through it', () => {
    // Sending a request, or applying a KubeConfig's credentials to one, outside the transport.
    const client = /\b(?:https?|http2)\.request\(|\bhttp2Get\(|\.applyToHTTPSOptions\(|from 'node:https'|from 'node:http2'/;
    const outside = sources.filter((s) => !s.path.startsWith('src/1-transport/'));
    const found = outside.flatMap(({ path, text }) => (client.test(text) ? [path] : []));
    expect(found).toEqual([]);
    expect(client.test('      await kc.applyToHTTPSOptions(options);')).toBe(true);
    expect(sources.find((s) => s.path === 'src/leaderelection/httpLeaseClient.ts')?.text).toMatch(/requestJson\(/);
  });

  it.each([
    // connectionTurns.ts had its own isInitialEventsEnd, the annotation spelled again (audit53).
    ['the initial-events-end annotation', 'src/1-transport/listWatch.ts', /['"]k8s\.io\/initial-events-end['"]/],
    // decode.ts spelled it twice (PROTOBUF_MEDIA_TYPE, PROTOBUF_TYPE), http/options.ts a third time (audit53).
    ["protobuf's media type", 'src/1-transport/protobuf/decode.ts', /['"]application\/vnd\.kubernetes\.protobuf/],
  ])('%s: spelled once, in %s (a constant, read everywhere else)', (_, home, literal) => {
    expect(copies(literal, home)).toEqual([]);
    expect(
      sources
        .find((s) => s.path === home)
        ?.text.split('\n')
        .filter((line) => literal.test(line)),
    ).toHaveLength(1);
  });
});

describe('twins across packages (the emulator imports nothing of the library, so it keeps a copy)', () => {
  const read = (path: string) => readFileSync(join(root, path), 'utf8');
  /** The text after the leading comment block, which says whose copy it is. */
  const body = (text: string) => text.slice(text.indexOf('*/') + 2);

  it('the protobuf schema: the generated file is the same in both, byte for byte', () => {
    expect(read('packages/emulator/src/protobuf/schema.generated.ts')).toBe(read('src/1-transport/protobuf/schema.generated.ts'));
  });

  it('the protobuf schema: its compiled form differs only in its leading comment', () => {
    const library = body(read('src/1-transport/protobuf/schema.ts'));
    expect(library.length).toBeGreaterThan(1000);
    expect(body(read('packages/emulator/src/protobuf/schema.ts'))).toBe(library);
  });
});
