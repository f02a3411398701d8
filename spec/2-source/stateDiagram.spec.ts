/**
 * The state diagram in src/2-source/reflectorState.ts, against `step`: random walks drive `step` with every
 * kind of input (the catalog below is keyed by input type, so a new input does not compile until it has a
 * place here) in every phase they reach, and the phase transitions seen must be exactly the diagram's arrows.
 * An arrow drawn that `step` never takes fails, and so does a transition `step` takes that is not drawn.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InformerError, errorFromStatus } from '../../src/0-model/errors.ts';
import { KubeObject } from '../../src/0-model/objects.ts';
import type { ListPage, WatchFrame } from '../../src/1-transport/listWatch.ts';
import { decoder } from '../../src/2-source/decode.ts';
import { reflectorConfig, type ListAndWatchOptions } from '../../src/2-source/listAndWatch.ts';
import { initialReflectorState, type Phase, type ReflectorInput, type ReflectorState } from '../../src/2-source/reflectorState.ts';
import { step } from '../../src/2-source/step.ts';
import { seededRandom } from '../../src/util/seededRandom.ts';
import { event, obj, status, tooLarge } from './reflectorFixtures.ts';

type PhaseName = Phase<unknown>['name'];
const PHASES: readonly PhaseName[] = ['starting', 'listing', 'opening', 'watching', 'streaming', 'waiting'];

/** The arrows of a drawing: `a, b ──what──▶ c ──what──▶ d` gives a→c, b→c and c→d; text in parentheses is a remark. */
function arrowsOf(drawing: string): Set<string> {
  const arrows = new Set<string>();
  for (const line of drawing.split('\n')) {
    const nodes = line.split(/─+(?:[^─▶]*─+)?▶/).map((part) =>
      part
        .replace(/\([^)]*\)/g, '')
        .split(',')
        .map((name) => name.trim())
        .filter(Boolean),
    );
    for (let i = 0; i + 1 < nodes.length; i++) for (const from of nodes[i]!) for (const to of nodes[i + 1]!) arrows.add(`${from} → ${to}`);
  }
  return arrows;
}

/** The diagram as drawn: the first fenced block of reflectorState.ts's JSDoc. */
function drawnArrows(): Set<string> {
  const source = readFileSync(join(import.meta.dirname, '../../src/2-source/reflectorState.ts'), 'utf8');
  const block = /\/\*\*[\s\S]*?\n \* ```\n([\s\S]*?)\n \* ```/.exec(source);
  if (!block) throw new Error('no fenced diagram in reflectorState.ts');
  return arrowsOf(block[1]!.replace(/^ \*( |$)/gm, ''));
}

const page = (rv: string, continueToken?: string): ListPage => ({
  items: [obj('a', rv)],
  resourceVersion: rv,
  ...(continueToken === undefined ? {} : { continue: continueToken }),
});
const frame = event;
const bookmark = (rv: string, end: boolean) =>
  frame('BOOKMARK', { metadata: { resourceVersion: rv, ...(end ? { annotations: { 'k8s.io/initial-events-end': 'true' } } : {}) } });

type Make = (id: number, n: number) => ReflectorInput;
/** Every kind of input the shell can send, in the shapes that lead to different decisions. */
const INPUTS: { readonly [K in ReflectorInput['type']]: readonly Make[] } = {
  start: [() => ({ type: 'start' })],
  listed: [
    (id, n) => ({ type: 'listed', id, page: page(String(10 + n)) }),
    (id, n) => ({ type: 'listed', id, page: page(String(10 + n), `c${n}`) }),
    (id, n) => ({ type: 'listed', id, page: page(String(10 + n), 'again') }),
    (id) => ({ type: 'listed', id, page: undefined }),
  ],
  listFailed: [
    (id) => ({ type: 'listFailed', id, error: errorFromStatus(500, status(500, 'InternalError'), 'list') }),
    (id) => ({ type: 'listFailed', id, error: new InformerError('NetworkError', 'connect ECONNREFUSED', { unreachable: true }) }),
    (id) => ({ type: 'listFailed', id, error: errorFromStatus(410, status(410, 'Expired'), 'list') }),
    (id) => ({ type: 'listFailed', id, error: errorFromStatus(504, tooLarge, 'list') }),
    (id) => ({ type: 'listFailed', id, error: new InformerError('ResponseTooLarge', 'too large', { status: 200, phase: 'list' }) }),
  ],
  timeoutPicked: [(id) => ({ type: 'timeoutPicked', id, timeoutSeconds: 300 })],
  backoffDrawn: [(id, n) => ({ type: 'backoffDrawn', id, random: (n % 10) / 10 })],
  frame: [
    (id, n) => ({ type: 'frame', id, frame: frame('ADDED', obj(`o${n % 3}`, String(10 + n))) }),
    (id, n) => ({ type: 'frame', id, frame: frame('DELETED', obj(`o${n % 3}`, String(10 + n))) }),
    (id, n) => ({ type: 'frame', id, frame: bookmark(String(10 + n), false) }),
    (id, n) => ({ type: 'frame', id, frame: bookmark(String(10 + n), true) }),
    (id) => ({ type: 'frame', id, frame: frame('ERROR', status(410, 'Expired')) }),
    (id) => ({ type: 'frame', id, frame: frame('ERROR', tooLarge) }),
    (id) => ({ type: 'frame', id, frame: new InformerError('MalformedLine', 'not JSON') as unknown as WatchFrame }),
  ],
  watchFailed: [
    (id) => ({ type: 'watchFailed', id, error: new InformerError('NetworkError', 'socket hang up') }),
    (id) => ({ type: 'watchFailed', id, error: errorFromStatus(422, status(422, 'Invalid'), 'watch') }),
    (id) => ({ type: 'watchFailed', id, error: errorFromStatus(403, status(403, 'Forbidden'), 'watch') }),
    (id) => ({ type: 'watchFailed', id, error: new InformerError('NetworkError', 'connect ECONNREFUSED', { unreachable: true }) }),
  ],
  watchEnded: [(id) => ({ type: 'watchEnded', id })],
  check: [(id) => ({ type: 'check', id })],
  timer: [(id) => ({ type: 'timer', id })],
  answered: [(id) => ({ type: 'answered', id })],
};
const MAKES = Object.values(INPUTS).flat();

/** Options under which `step` decides differently: plain or streaming lists, paged or not, chains cut short. */
const CONFIGS: Partial<ListAndWatchOptions<unknown>>[] = [
  {},
  { watchList: true },
  { pageSize: 0 },
  { maxListPages: 3, bookmarkTimeoutMs: 30_000 },
];

/** The phase transitions `step` takes on random walks (a state that stays the same object is no transition). */
function walkedArrows(walks: number, length: number): Set<string> {
  const random = seededRandom(20261127);
  const arrows = new Set<string>();
  for (const options of CONFIGS) {
    const config = reflectorConfig<unknown>({ decode: decoder(KubeObject), ...options });
    for (let walk = 0; walk < walks; walk++) {
      let state: ReflectorState<unknown> = initialReflectorState(options.watchList ?? false);
      let now = 0;
      for (let n = 0; n < length; n++) {
        now += Math.floor(random() * 90_000);
        // Now and then an input from a request that is no longer current.
        const id = random() < 0.1 ? state.request - 1 : state.request;
        const next = step(config, state, MAKES[Math.floor(random() * MAKES.length)]!(id, n), now).state;
        if (next !== state) arrows.add(`${state.phase.name} → ${next.phase.name}`);
        state = next;
      }
    }
  }
  return arrows;
}

describe("the reflector's state diagram (reflectorState.ts)", () => {
  it('reads arrows, fan-in and fan-out, chains, remarks', () => {
    expect([...arrowsOf('a, b ──x, y──▶ c (note) ──z──▶ d\n  e ─▶ e\n no arrow here')].sort()).toEqual(
      ['a → c', 'b → c', 'c → d', 'e → e'].sort(),
    );
  });

  it('names only phases that exist', () => {
    for (const arrow of drawnArrows()) for (const name of arrow.split(' → ')) expect(PHASES, `"${name}" in ${arrow}`).toContain(name);
  });

  it('draws exactly the transitions step() takes', () => {
    const walked = walkedArrows(300, 40);
    expect([...drawnArrows()].sort()).toEqual([...walked].sort());
  });
});
