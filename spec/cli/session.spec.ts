/**
 * The rules of a `rx-informer watch` session (src/cli/session.ts), row by row: each row gives the inputs that
 * lead up to it (`given`), one input, and the effects `step` must return for it, written compactly
 * (`err: …`, `status: …`, `attach 0 pods`, `detach 0`, `exclude 0 pods`, `synced`, `failed: …`).
 * Informers are strings here: the session only compares them. No clock, no I/O, no informer.
 */
import { describe, expect, it } from 'vitest';
import { DiscoveryError } from '../../src/discovery/index.ts';
import { InformerError, type ErrorReason } from '../../src/index.ts';
import { initialSession, step, type NewResource, type SessionEffect, type SessionInput, type SessionState } from '../../src/cli/session.ts';

type I = string;
const SERVER = 'https://k8s.example.com:6443';
/** The session's clock: it started at 1,000 and every input comes at 1,042 (so a sync "took 42 ms"). */
const STARTED = 1_000;
const NOW = STARTED + 42;

/** `pods in shop` is pods in the namespace shop, as watch.ts labels one informer per resource and namespace. */
const resource = (label: string, informer = label, secret = false): NewResource<I> => {
  const namespace = / in ([a-z0-9-]+)$/.exec(label)?.[1];
  return { name: label.split(' ')[0]!, label, secret, informer, ...(namespace !== undefined ? { namespace } : {}) };
};
/** One informer over many namespaces (past 16 in watch.ts), made again over fewer when one is refused. */
const over = (name: string, namespaces: readonly string[]): NewResource<I> => ({
  name,
  label: `${name} in ${namespaces.length} namespaces`,
  secret: false,
  informer: `${name} over ${namespaces.join(',')}`,
  namespaces,
  narrow: (fewer) => `${name} over ${fewer.join(',')}`,
});
const watch = (...labels: string[]): SessionInput<I> => ({ type: 'watch', resources: labels.map((l) => resource(l)) });
const started = (label: string, informer = label, scope = 0): SessionInput<I> => ({
  type: 'started',
  scope,
  resource: resource(label, informer),
});
const synced = (id: number, size: number): SessionInput<I> => ({ type: 'state', id, size, synced: true });
const listing = (id: number, size: number): SessionInput<I> => ({ type: 'state', id, size, synced: false });
/** A 403 on one namespace's list (`list /api/v1/namespaces/b/configmaps`), as a many-namespace informer reports it. */
const refused = (id: number, namespace: string): SessionInput<I> => ({
  type: 'error',
  id,
  error: new InformerError('Forbidden', 'nope', { phase: 'list', request: `list /api/v1/namespaces/${namespace}/configmaps` }),
});
const error = (id: number, reason: ErrorReason, phase: 'list' | 'watch' = 'list', message = 'no'): SessionInput<I> => ({
  type: 'error',
  id,
  error: new InformerError(reason, message, { phase }),
});

function compact(effect: SessionEffect<I>): string {
  switch (effect.type) {
    case 'err':
    case 'status':
      return `${effect.type}: ${effect.line}`;
    case 'attach':
      return `attach ${effect.id} ${effect.informer}`;
    case 'detach':
      return `detach ${effect.id}`;
    case 'exclude':
      return `exclude ${effect.scope} ${effect.name}`;
    case 'synced':
      return 'synced';
    case 'failed':
      return `failed: ${effect.sentence}`;
    case 'narrowSoon':
      return `narrowSoon ${effect.id} ${effect.informer}`;
  }
}

function run(inputs: readonly SessionInput<I>[], tty = false, namespaces = 0): { state: SessionState<I>; effects: string[] } {
  let state = initialSession<I>();
  let effects: string[] = [];
  for (const input of inputs) {
    const result = step({ server: SERVER, tty, startedAt: STARTED, namespaces }, state, input, NOW);
    state = result.state;
    effects = result.effects.map(compact);
  }
  return { state, effects };
}

const SUMMARY = (resources: string, objects: string, where = '') =>
  `err: synced ${resources}, ${objects} in 42 ms${where}; watching for changes (Ctrl-C to stop)`;

interface Row {
  readonly rule: string;
  readonly tty?: boolean;
  /** `-n` with this many namespaces. */
  readonly namespaces?: number;
  readonly given?: readonly SessionInput<I>[];
  readonly input: SessionInput<I>;
  readonly effects: readonly string[];
}

const rows: readonly Row[] = [
  // Starting and syncing.
  {
    rule: 'the resources to watch are subscribed at once; a cluster-scoped one (one informer for every namespace) once',
    input: {
      type: 'watch',
      resources: [resource('pods in a', 'pods@a'), resource('pods in b', 'pods@b'), resource('nodes'), resource('nodes')],
    },
    effects: ['attach 0 pods@a', 'attach 1 pods@b', 'attach 2 nodes'],
  },
  {
    rule: 'a resource synced before the others: its own line (no terminal), no summary yet',
    given: [watch('pods', 'deployments.apps')],
    input: synced(0, 1),
    effects: ['err: synced pods: 1 object'],
  },
  {
    rule: 'the last resource synced: the summary, once, with how long it took',
    given: [watch('pods', 'deployments.apps'), synced(0, 1)],
    input: synced(1, 2),
    effects: ['err: synced deployments.apps: 2 objects', SUMMARY('2 resources', '3 objects'), 'synced'],
  },
  {
    rule: 'several namespaces: the summary counts resources, not informers (one per resource and namespace), and says in how many namespaces',
    namespaces: 2,
    given: [
      watch('pods in shop', 'pods in payments', 'deployments.apps in shop', 'deployments.apps in payments'),
      synced(0, 1),
      synced(1, 1),
      synced(2, 1),
    ],
    input: synced(3, 1),
    effects: ['err: synced deployments.apps in payments: 1 object', SUMMARY('2 resources', '4 objects', ' (2 namespaces)'), 'synced'],
  },
  {
    rule: 'a state that says synced again changes nothing',
    given: [watch('pods'), synced(0, 1)],
    input: synced(0, 2),
    effects: [],
  },
  {
    rule: 'on a terminal: no line per resource before the first sync; then the status line is cleared and what was listed is said',
    tty: true,
    given: [watch('pods', 'deployments.apps', 'nodes'), synced(0, 4), synced(2, 0)],
    input: synced(1, 2),
    effects: ['status: ', 'err: listed: pods 4, deployments.apps 2', SUMMARY('3 resources', '6 objects'), 'synced'],
  },
  {
    rule: 'on a terminal, the ticker redraws the progress line until the first sync',
    tty: true,
    given: [watch('pods', 'deployments.apps'), synced(0, 4), listing(1, 120)],
    input: { type: 'tick' },
    effects: ['status: syncing 1/2 resources, 124 objects (waiting for deployments.apps)'],
  },
  {
    rule: 'the progress line names at most four resources it waits for',
    tty: true,
    given: [watch('a', 'b', 'c', 'd', 'e')],
    input: { type: 'tick' },
    effects: ['status: syncing 0/5 resources, 0 objects (waiting for a, b, c, d, …)'],
  },
  {
    rule: 'after the first sync the ticker draws nothing',
    tty: true,
    given: [watch('pods'), synced(0, 1)],
    input: { type: 'tick' },
    effects: [],
  },
  { rule: 'without a terminal the ticker draws nothing', given: [watch('pods')], input: { type: 'tick' }, effects: [] },
  // A long list's progress, on the terminal's clock.
  {
    rule: "a list's first page starts the clock: nothing shown",
    given: [watch('configmaps')],
    input: { type: 'listProgress', id: 0, pages: 1, objects: 500, at: 3_000 },
    effects: [],
  },
  {
    rule: 'a page less than 5 s after the first: nothing shown',
    given: [watch('configmaps'), { type: 'listProgress', id: 0, pages: 1, objects: 500, at: 3_000 }],
    input: { type: 'listProgress', id: 0, pages: 2, objects: 1_000, at: 6_000 },
    effects: [],
  },
  {
    rule: 'a page 5 s or more after the last shown: objects so far',
    given: [
      watch('configmaps'),
      { type: 'listProgress', id: 0, pages: 1, objects: 500, at: 3_000 },
      { type: 'listProgress', id: 0, pages: 2, objects: 1_000, at: 6_000 },
    ],
    input: { type: 'listProgress', id: 0, pages: 3, objects: 1_500, at: 9_000 },
    effects: ['err: listing configmaps: 1,500 objects so far'],
  },
  // Errors.
  {
    rule: 'a fault the informer retries: one line',
    given: [watch('pods'), synced(0, 1)],
    input: error(0, 'ServerError', 'watch', 'boom'),
    effects: ['err: ! pods: ServerError: boom'],
  },
  {
    rule: 'after the sync, a 403 is retried like any fault (only a first list gives up)',
    given: [watch('pods'), synced(0, 1)],
    input: error(0, 'Forbidden', 'list', 'nope'),
    effects: ['err: ! pods: forbidden (403): nope'],
  },
  {
    rule: 'a 403 on the first list of one resource of several: that one is let go, the others go on (and may complete the sync)',
    given: [watch('pods', 'secrets'), synced(0, 1)],
    input: error(1, 'Forbidden', 'list', 'nope'),
    effects: ['detach 1', 'err: ! not watching secrets: forbidden (403): nope', SUMMARY('1 resource', '1 object'), 'synced'],
  },
  {
    rule: 'a 404 on the first list of the only resource: the watch fails, in one sentence',
    given: [watch('pods')],
    input: error(0, 'NotFound', 'list', 'gone'),
    effects: ['detach 0', 'failed: cannot watch pods: not found (404): gone'],
  },
  {
    rule: 'a 400 on a first list fails the watch even when others could go on: the command itself is wrong',
    given: [watch('pods', 'secrets')],
    input: error(0, 'BadRequest', 'list', 'bad selector'),
    effects: ['detach 0', 'failed: cannot watch pods: the server rejected the request (400 Bad Request): bad selector'],
  },
  {
    rule: 'the last of several let go: its line, then the watch fails',
    given: [watch('pods', 'secrets'), error(0, 'Forbidden')],
    input: error(1, 'Forbidden', 'list', 'nope'),
    effects: ['detach 1', 'err: ! not watching secrets: forbidden (403): nope', 'failed: none of the 2 resources can be watched'],
  },
  {
    rule: 'several namespaces, one refused before its sync: the summary says how many are watched, of those asked (audit30)',
    namespaces: 3,
    given: [watch('pods in a', 'pods in b', 'pods in c'), error(1, 'Forbidden'), synced(0, 1)],
    input: synced(2, 1),
    effects: ['err: synced pods in c: 1 object', SUMMARY('1 resource', '2 objects', ' (2 of 3 namespaces)'), 'synced'],
  },
  {
    rule: 'several namespaces, a namespace refused in one of two resources: still watched, still counted',
    namespaces: 2,
    given: [watch('pods in a', 'pods in b', 'secrets in a', 'secrets in b'), error(3, 'Forbidden'), synced(0, 1), synced(1, 1)],
    input: synced(2, 1),
    effects: ['err: synced secrets in a: 1 object', SUMMARY('2 resources', '3 objects', ' (2 namespaces)'), 'synced'],
  },
  {
    rule: 'one informer over many namespaces, one dropped as forbidden: the summary counts those it still reads',
    namespaces: 3,
    given: [
      { type: 'watch', resources: [over('configmaps', ['a', 'b', 'c'])] },
      refused(0, 'b'),
      { type: 'narrow', id: 0, informer: 'configmaps over a,b,c' },
    ],
    input: synced(0, 2),
    effects: ['err: synced configmaps in 2 namespaces: 2 objects', SUMMARY('1 resource', '2 objects', ' (2 of 3 namespaces)'), 'synced'],
  },
  {
    rule: 'one informer over many namespaces, a namespace refused: said at once, the informer made again later (narrowSoon)',
    namespaces: 4,
    given: [{ type: 'watch', resources: [over('configmaps', ['a', 'b', 'c', 'd'])] }],
    input: refused(0, 'b'),
    effects: ['err: ! not watching configmaps in b: forbidden (403): nope', 'narrowSoon 0 configmaps over a,b,c,d'],
  },
  {
    rule: 'one informer over many namespaces, a second refused before it is narrowed: collected, the narrowing put off again (audit35)',
    namespaces: 4,
    given: [{ type: 'watch', resources: [over('configmaps', ['a', 'b', 'c', 'd'])] }, refused(0, 'b')],
    input: refused(0, 'd'),
    effects: ['err: ! not watching configmaps in d: forbidden (403): nope', 'narrowSoon 0 configmaps over a,b,c,d'],
  },
  {
    rule: 'one informer over many namespaces, a refused namespace retried: said once',
    namespaces: 4,
    given: [{ type: 'watch', resources: [over('configmaps', ['a', 'b', 'c', 'd'])] }, refused(0, 'b')],
    input: refused(0, 'b'),
    effects: [],
  },
  {
    rule: 'one informer over many namespaces, narrowed: one new informer over every namespace not refused (audit35)',
    namespaces: 4,
    given: [{ type: 'watch', resources: [over('configmaps', ['a', 'b', 'c', 'd'])] }, refused(0, 'b'), refused(0, 'd')],
    input: { type: 'narrow', id: 0, informer: 'configmaps over a,b,c,d' },
    effects: ['attach 0 configmaps over a,c'],
  },
  {
    rule: 'one informer over many namespaces: a narrow meant for an informer since replaced changes nothing',
    namespaces: 4,
    given: [
      { type: 'watch', resources: [over('configmaps', ['a', 'b', 'c', 'd'])] },
      refused(0, 'b'),
      { type: 'narrow', id: 0, informer: 'configmaps over a,b,c,d' },
    ],
    input: { type: 'narrow', id: 0, informer: 'configmaps over a,b,c,d' },
    effects: [],
  },
  {
    rule: 'one informer over many namespaces, every one refused: the last is named, the sentence says all of them (audit35)',
    namespaces: 3,
    given: [{ type: 'watch', resources: [over('configmaps', ['a', 'b', 'c'])] }, refused(0, 'a'), refused(0, 'b')],
    input: refused(0, 'c'),
    effects: [
      'detach 0',
      'err: ! not watching configmaps in c: forbidden (403): nope',
      'failed: cannot watch configmaps in any of the 3 namespaces',
    ],
  },
  {
    rule: 'one informer over many namespaces, the last one left after a narrowing refused: named, all counted',
    namespaces: 3,
    given: [
      { type: 'watch', resources: [over('configmaps', ['a', 'b', 'c'])] },
      refused(0, 'a'),
      refused(0, 'b'),
      { type: 'narrow', id: 0, informer: 'configmaps over a,b,c' },
    ],
    input: refused(0, 'c'),
    effects: [
      'detach 0',
      'err: ! not watching configmaps in c: forbidden (403): nope',
      'failed: cannot watch configmaps in any of the 3 namespaces',
    ],
  },
  {
    rule: 'one resource in several namespaces, refused in each: the sentence says so',
    namespaces: 2,
    given: [watch('pods in a', 'pods in b'), error(0, 'Forbidden')],
    input: error(1, 'Forbidden', 'list', 'nope'),
    effects: ['detach 1', 'err: ! not watching pods in b: forbidden (403): nope', 'failed: cannot watch pods in any of the 2 namespaces'],
  },
  {
    rule: 'the watch fails once',
    given: [watch('pods', 'secrets'), error(0, 'BadRequest')],
    input: error(1, 'BadRequest'),
    effects: ['detach 1'],
  },
  {
    rule: 'an input about a resource let go changes nothing',
    given: [watch('pods', 'secrets'), error(0, 'Forbidden')],
    input: error(0, 'ServerError'),
    effects: [],
  },
  {
    rule: 'without --all, a 404 on a watch is said at once',
    given: [watch('pods'), synced(0, 1)],
    input: error(0, 'NotFound', 'watch', 'gone'),
    effects: ['err: ! pods: not found (404): gone'],
  },
  // --all: resources come and go with the dynamic factory.
  {
    rule: '--all: a resource started before the first sync: subscribed, no line',
    given: [started('pods')],
    input: started('configmaps'),
    effects: ['attach 1 configmaps'],
  },
  {
    rule: '--all: a resource started after the first sync: a line of its own',
    given: [started('pods'), synced(0, 1)],
    input: started('myapples.stable.example.com'),
    effects: ['err: + watching myapples.stable.example.com (new resource)', 'attach 1 myapples.stable.example.com'],
  },
  {
    rule: '--all: it syncs with a line of its own, on a terminal too',
    tty: true,
    given: [started('pods'), synced(0, 1), started('myapples')],
    input: synced(1, 3),
    effects: ['err: synced myapples: 3 objects'],
  },
  {
    rule: '--all: the same resource from a watch that replaced its predecessor: its new informer, same resource, no line',
    given: [started('pods', 'pods#1'), synced(0, 1)],
    input: started('pods', 'pods#2'),
    effects: ['attach 0 pods#2'],
  },
  {
    rule: '--all: a resource ended by its watch: let go with one line',
    given: [started('pods'), started('myapples'), synced(0, 1), synced(1, 1)],
    input: { type: 'ended', label: 'myapples', informer: 'myapples', message: 'its CustomResourceDefinition was deleted' },
    effects: ['detach 1', 'err: - stopped watching myapples: its CustomResourceDefinition was deleted'],
  },
  {
    rule: '--all: an end for an informer since replaced changes nothing',
    given: [started('pods', 'pods#1'), started('pods', 'pods#2')],
    input: { type: 'ended', label: 'pods', informer: 'pods#1', message: 'gone' },
    effects: [],
  },
  {
    rule: '--all: the end of the last unsynced resource completes the sync',
    given: [started('pods'), started('myapples'), synced(0, 1)],
    input: { type: 'ended', label: 'myapples', informer: 'myapples', message: 'gone' },
    effects: ['detach 1', 'err: - stopped watching myapples: gone', SUMMARY('1 resource', '1 object'), 'synced'],
  },
  {
    rule: '--all: a resource let go is taken out of its dynamic watch',
    given: [started('pods'), started('secrets', 'secrets', 2)],
    input: error(1, 'Forbidden', 'list', 'nope'),
    effects: ['detach 1', 'exclude 2 secrets', 'err: ! not watching secrets: forbidden (403): nope'],
  },
  {
    rule: '--all: the first 404 of a watch may only mean its CRD is going: not said',
    given: [started('myapples'), synced(0, 1)],
    input: error(0, 'NotFound', 'watch'),
    effects: [],
  },
  {
    rule: '--all: the second is',
    given: [started('myapples'), synced(0, 1), error(0, 'NotFound', 'watch')],
    input: error(0, 'NotFound', 'watch', 'gone'),
    effects: ['err: ! myapples: not found (404): gone'],
  },
  {
    rule: '--all: an event in between forgets what was seen',
    given: [started('myapples'), synced(0, 1), error(0, 'VeryShortWatch', 'watch'), { type: 'event', id: 0 }],
    input: error(0, 'VeryShortWatch', 'watch'),
    effects: [],
  },
  {
    rule: "--all: a group version discovery cannot read: its resources' watches go on",
    input: { type: 'factoryError', error: new DiscoveryError(new InformerError('ServerError', 'boom'), 'metrics.k8s.io/v1beta1') },
    effects: [
      'err: ! discovery of metrics.k8s.io/v1beta1 failed: ServerError: boom (what is watched of it goes on; resources it adds wait until discovery reads it)',
    ],
  },
  {
    rule: '--all: discovery failed as a whole',
    input: { type: 'factoryError', error: new DiscoveryError(new InformerError('ServerError', 'boom')) },
    effects: ['err: ! discovery failed (tried again with backoff; what it adds or removes is seen once it reads): ServerError: boom'],
  },
  {
    rule: '--all: a fault of the CRD watch, the first of its kind',
    input: { type: 'factoryError', error: new InformerError('Forbidden', 'nope') },
    effects: [
      'err: ! cannot watch CustomResourceDefinitions; resources installed or removed from now on may go unnoticed: forbidden (403): nope',
    ],
  },
  {
    rule: '--all: the same kind again is not repeated',
    given: [{ type: 'factoryError', error: new InformerError('Forbidden', 'nope') }],
    input: { type: 'factoryError', error: new InformerError('Forbidden', 'nope') },
    effects: [],
  },
  {
    rule: '--all: a 410 on the CRD watch is routine',
    input: { type: 'factoryError', error: new InformerError('Expired', 'too old') },
    effects: [],
  },
];

describe('the watch session: step(state, input) → effects', () => {
  it.each(rows)('$rule', (row) => {
    const { effects } = run([...(row.given ?? []), row.input], row.tty, row.namespaces);
    expect(effects).toEqual(row.effects);
  });

  it('a Secret’s parser errors are withheld (they may quote its data)', () => {
    const { effects } = run([
      { type: 'watch', resources: [resource('secrets', 'secrets', true)] },
      synced(0, 1),
      error(0, 'MalformedLine', 'watch', 'unexpected "hunter2"'),
    ]);
    expect(effects).toEqual(['err: ! secrets: MalformedLine (details withheld: they may quote Secret data)']);
  });

  it('after the first sync a store change costs no copy of the state', () => {
    const { state } = run([watch('pods'), synced(0, 1)]);
    const next = step(
      { server: SERVER, tty: false, startedAt: STARTED, namespaces: 0 },
      state,
      { type: 'state', id: 0, size: 5, synced: true },
      NOW,
    );
    expect(next.state).toBe(state);
  });
});
