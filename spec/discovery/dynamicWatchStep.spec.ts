/**
 * A dynamic watch's rules (src/discovery/dynamicWatchStep.ts), row by row: a state, an input, the effects in order
 * and what the state becomes. The rules' table is in the module's JSDoc; the shell's order (an informer out of the
 * factory before `ended`, every end before every start) is in dynamicInformers.spec.ts and dynamicCrdUpdates.spec.ts.
 */
import { describe, expect, it } from 'vitest';
import { InformerError } from '../../src/0-model/errors.ts';
import {
  AmbiguousResourceError,
  GroupDiscoveryFailedError,
  ResourceNameError,
  UnknownResourceError,
  type DiscoveredResource,
  type Discovery,
  type DiscoveryFailure,
} from '../../src/discovery/discovery.ts';
import {
  dynamicWatchStep,
  initialDynamicWatch,
  type DynamicWatchEffect,
  type DynamicWatchInput,
  type DynamicWatchState,
  type Selection,
} from '../../src/discovery/dynamicWatchStep.ts';

function resource(plural: string, group: string, fields: Partial<DiscoveredResource> = {}): DiscoveredResource {
  return {
    group,
    version: 'v1',
    plural,
    singular: plural,
    kind: plural,
    namespaced: true,
    verbs: ['get', 'list', 'watch'],
    shortNames: [],
    categories: [],
    ...fields,
  };
}
const apples = resource('apples', 'stable.example.com');
const applesV2 = resource('apples', 'stable.example.com', { version: 'v2' });
const applesCluster = resource('apples', 'stable.example.com', { namespaced: false });
const pears = resource('pears', 'fruit.example.com');
const pods = resource('pods', '');
const bindings = resource('bindings', '', { verbs: ['create'] });
const A = 'apples.stable.example.com';
const P = 'pears.fruit.example.com';
const appleFault = new Error('no apples today');
/** A predicate that throws for apples and accepts the rest. */
const refusesApples = (r: DiscoveredResource) => {
  if (r.plural === 'apples') throw appleFault;
  return true;
};

const unreadable = (groupVersion: string): DiscoveryFailure => ({
  groupVersion,
  error: new InformerError('ServerError', 'the server is currently unable to handle the request'),
});
/** A discovery serving `served` (every one preferred), and failing these group versions. */
const discovery = (served: readonly DiscoveredResource[], ...failures: DiscoveryFailure[]): DynamicWatchInput => ({
  type: 'discovery',
  discovery: { resources: served, all: served, failures } satisfies Discovery,
});

function state(selection: Selection, fields: Partial<Omit<DynamicWatchState, 'selection'>> = {}): DynamicWatchState {
  return { ...initialDynamicWatch(selection), ...fields };
}
const runs = (...resources: DiscoveredResource[]) => new Map(resources.map((r) => [`${r.plural}${r.group ? `.${r.group}` : ''}`, r]));

interface Row {
  readonly rule: string;
  readonly from: DynamicWatchState;
  readonly input: DynamicWatchInput;
  readonly effects: readonly DynamicWatchEffect[];
  /** Fields of the next state. */
  readonly then?: Partial<DynamicWatchState>;
}

const ROWS: readonly Row[] = [
  {
    rule: 'crdDeleted of a running informer: it ends as CRDDeleted, and its name races the deletion',
    from: state('all', { running: runs(pods, apples) }),
    input: { type: 'crdDeleted', name: A },
    effects: [{ type: 'end', key: A, resource: apples, reason: 'CRDDeleted', message: `customresourcedefinition ${A} was deleted` }],
    then: { running: runs(pods), deleted: new Set([A]) },
  },
  {
    rule: 'crdDeleted of a CRD nothing runs: no effect, its name races the deletion',
    from: state([]),
    input: { type: 'crdDeleted', name: A },
    effects: [],
    then: { running: runs(), deleted: new Set([A]) },
  },
  {
    rule: 'crdCreated: the name no longer races a deletion',
    from: state('all', { deleted: new Set([A, P]) }),
    input: { type: 'crdCreated', name: A },
    effects: [],
    then: { deleted: new Set([P]) },
  },
  {
    rule: "'all': every watchable resource starts, in discovery's order; one that cannot be watched does not",
    from: state('all'),
    input: discovery([pods, bindings, apples]),
    effects: [
      { type: 'start', key: 'pods', resource: pods },
      { type: 'start', key: A, resource: apples },
    ],
    then: { running: runs(pods, apples) },
  },
  {
    rule: 'a predicate: only what it accepts starts',
    from: state((r) => r.group !== ''),
    input: discovery([pods, apples]),
    effects: [{ type: 'start', key: A, resource: apples }],
  },
  {
    rule: 'a predicate that throws for a resource: reported, and it does not start; the others do',
    from: state(refusesApples),
    input: discovery([apples, pods]),
    effects: [
      { type: 'selectionThrew', resource: apples, thrown: appleFault },
      { type: 'start', key: 'pods', resource: pods },
    ],
    then: { running: runs(pods) },
  },
  {
    rule: 'a predicate that throws for a running resource: reported, and it goes on as it runs (another version too)',
    from: state(refusesApples, { running: runs(apples) }),
    input: discovery([applesV2]),
    effects: [{ type: 'selectionThrew', resource: applesV2, thrown: appleFault }],
    then: { running: runs(apples) },
  },
  {
    rule: 'what runs in the version and scope served: nothing',
    from: state('all', { running: runs(pods, apples) }),
    input: discovery([pods, apples]),
    effects: [],
    then: { running: runs(pods, apples) },
  },
  {
    rule: 'a name discovery does not know: unresolved (Unknown), nothing starts',
    from: state(['pods', 'apples']),
    input: discovery([pods]),
    effects: [
      { type: 'unresolved', name: 'apples', error: new UnknownResourceError('apples') },
      { type: 'start', key: 'pods', resource: pods },
    ],
    then: { unresolved: new Map([['apples', new UnknownResourceError('apples').message]]) },
  },
  {
    rule: 'a name reported with the same message: not again',
    from: state(['apples'], { unresolved: new Map([['apples', new UnknownResourceError('apples').message]]) }),
    input: discovery([pods]),
    effects: [],
  },
  {
    rule: 'a name reported with another message: again',
    from: state(['apples'], { unresolved: new Map([['apples', 'something else']]) }),
    input: discovery([pods]),
    effects: [{ type: 'unresolved', name: 'apples', error: new UnknownResourceError('apples') }],
  },
  {
    rule: 'a name resolved: forgotten as unresolved (a later fault is reported again), and started',
    from: state(['apples'], { unresolved: new Map([['apples', new UnknownResourceError('apples').message]]) }),
    input: discovery([apples]),
    effects: [{ type: 'start', key: A, resource: apples }],
    then: { unresolved: new Map() },
  },
  {
    rule: 'a name two groups serve alike: unresolved (Ambiguous)',
    from: state(['apples']),
    input: discovery([apples, resource('apples', 'other.example.com')]),
    effects: [
      {
        type: 'unresolved',
        name: 'apples',
        error: new AmbiguousResourceError('apples', [apples, resource('apples', 'other.example.com')]),
      },
    ],
  },
  {
    rule: 'a running name another group now serves alike (audit28): it stays on what it runs, reported Ambiguous, no NotServed',
    from: state(['apples'], { running: runs(apples) }),
    input: discovery([apples, resource('apples', 'other.example.com')]),
    effects: [
      {
        type: 'unresolved',
        name: 'apples',
        error: new ResourceNameError(
          'Ambiguous',
          'apples',
          `${new AmbiguousResourceError('apples', [apples, resource('apples', 'other.example.com')]).message}; the watch stays on ${A}, still served`,
          [apples, resource('apples', 'other.example.com')],
        ),
      },
    ],
    then: { running: runs(apples) },
  },
  {
    rule: 'a running name a GA group now matches better (its own is beta): it stays on what it runs, reported Ambiguous',
    from: state(['apples'], { running: runs(resource('apples', 'stable.example.com', { version: 'v1beta1' })) }),
    input: discovery([resource('apples', 'stable.example.com', { version: 'v1beta1' }), resource('apples', 'other.example.com')]),
    effects: [
      {
        type: 'unresolved',
        name: 'apples',
        error: new ResourceNameError(
          'Ambiguous',
          'apples',
          `"apples" now resolves to apples.other.example.com; the watch stays on ${A}, still served`,
          [resource('apples', 'other.example.com'), resource('apples', 'stable.example.com', { version: 'v1beta1' })],
        ),
      },
    ],
    then: { running: runs(resource('apples', 'stable.example.com', { version: 'v1beta1' })) },
  },
  {
    rule: 'a running name whose resource is gone, another group serving the name: that one ends NotServed and the other starts',
    from: state(['apples'], { running: runs(apples) }),
    input: discovery([resource('apples', 'other.example.com')]),
    effects: [
      { type: 'end', key: A, resource: apples, reason: 'NotServed', message: `${A} is no longer served` },
      { type: 'start', key: 'apples.other.example.com', resource: resource('apples', 'other.example.com') },
    ],
  },
  {
    rule: 'a name served but not watchable: unresolved (Unknown, with its verbs)',
    from: state(['bindings']),
    input: discovery([bindings]),
    effects: [
      {
        type: 'unresolved',
        name: 'bindings',
        error: new ResourceNameError('Unknown', 'bindings', 'bindings cannot be listed and watched (verbs: create)'),
      },
    ],
  },
  {
    rule: 'a name unknown while a group version that may serve it failed: GroupDiscoveryFailed',
    from: state([A]),
    input: discovery([pods], unreadable('stable.example.com/v1')),
    effects: [{ type: 'unresolved', name: A, error: new GroupDiscoveryFailedError(A, [unreadable('stable.example.com/v1')]) }],
  },
  {
    rule: "a group's name with a version: another version of the group failing hides nothing (Unknown)",
    from: state(['apples.v1.stable.example.com']),
    input: discovery([pods], unreadable('stable.example.com/v2')),
    effects: [
      { type: 'unresolved', name: 'apples.v1.stable.example.com', error: new UnknownResourceError('apples.v1.stable.example.com') },
    ],
  },
  {
    rule: "a group's name: another group failing hides nothing (Unknown), one of the same length too",
    from: state([A]),
    input: discovery([pods], unreadable('others.example.com/v1')),
    effects: [{ type: 'unresolved', name: A, error: new UnknownResourceError(A) }],
  },
  {
    rule: "a group's name: the core group failing hides nothing (Unknown)",
    from: state([A]),
    input: discovery([pods], unreadable('v1')),
    effects: [{ type: 'unresolved', name: A, error: new UnknownResourceError(A) }],
  },
  {
    rule: 'a bare name: any group version failing may hide it (GroupDiscoveryFailed)',
    from: state(['apples']),
    input: discovery([pods], unreadable('v1')),
    effects: [{ type: 'unresolved', name: 'apples', error: new GroupDiscoveryFailedError('apples', [unreadable('v1')]) }],
  },
  {
    rule: 'a name whose informer runs in the group version that failed: nothing reported, nothing ends',
    from: state([A], { running: runs(apples) }),
    input: discovery([pods], unreadable('stable.example.com/v1')),
    effects: [],
    then: { running: runs(apples), unresolved: new Map() },
  },
  {
    rule: 'a bare name while its group version failed, and another resource of that group version runs: reported',
    from: state(['apples', P], { running: runs(pears) }),
    input: discovery([pods], unreadable('fruit.example.com/v1')),
    effects: [{ type: 'unresolved', name: 'apples', error: new GroupDiscoveryFailedError('apples', [unreadable('fruit.example.com/v1')]) }],
    then: { running: runs(pears) },
  },
  {
    rule: 'a bare name while a group version failed, its informer running in a group version read: reported, and it ends',
    from: state(['apples'], { running: runs(apples) }),
    input: discovery([pods], unreadable('fruit.example.com/v1')),
    effects: [
      { type: 'unresolved', name: 'apples', error: new GroupDiscoveryFailedError('apples', [unreadable('fruit.example.com/v1')]) },
      { type: 'end', key: A, resource: apples, reason: 'NotServed', message: `${A} is no longer served` },
    ],
  },
  {
    rule: 'a core informer whose group version (v1) discovery could not read: goes on',
    from: state('all', { running: runs(pods) }),
    input: discovery([], unreadable('v1')),
    effects: [],
    then: { running: runs(pods) },
  },
  {
    rule: 'a running informer no longer served: ends as NotServed',
    from: state('all', { running: runs(pods, apples) }),
    input: discovery([pods]),
    effects: [{ type: 'end', key: A, resource: apples, reason: 'NotServed', message: `${A} is no longer served` }],
    then: { running: runs(pods) },
  },
  {
    rule: 'a running informer the selection no longer wants: ends as NotServed',
    from: state((r) => r.plural !== 'apples', { running: runs(apples) }),
    input: discovery([apples]),
    effects: [{ type: 'end', key: A, resource: apples, reason: 'NotServed', message: `${A} is no longer served` }],
  },
  {
    rule: 'served in another version: ends, then starts anew in it (every end before every start)',
    from: state('all', { running: runs(apples, pears) }),
    input: discovery([resource('pears', 'fruit.example.com', { version: 'v2' }), applesV2]),
    effects: [
      { type: 'end', key: A, resource: apples, reason: 'NotServed', message: `${A} is now served as stable.example.com/v2` },
      { type: 'end', key: P, resource: pears, reason: 'NotServed', message: `${P} is now served as fruit.example.com/v2` },
      { type: 'start', key: P, resource: resource('pears', 'fruit.example.com', { version: 'v2' }) },
      { type: 'start', key: A, resource: applesV2 },
    ],
    then: { running: runs(resource('pears', 'fruit.example.com', { version: 'v2' }), applesV2) },
  },
  {
    rule: 'served in another scope: ends, then starts anew',
    from: state('all', { running: runs(apples) }),
    input: discovery([applesCluster]),
    effects: [
      { type: 'end', key: A, resource: apples, reason: 'NotServed', message: `${A} is now served as stable.example.com/v1` },
      { type: 'start', key: A, resource: applesCluster },
    ],
  },
  {
    rule: 'a running informer whose group version discovery could not read: goes on, and its fallback does not start',
    from: state('all', { running: runs(applesV2) }),
    input: discovery([apples], unreadable('stable.example.com/v2')),
    effects: [],
    then: { running: runs(applesV2) },
  },
  {
    rule: 'a discovery that raced a CRD deletion (still lists it): it does not start, and the name keeps racing',
    from: state('all', { deleted: new Set([A]) }),
    input: discovery([pods, apples]),
    effects: [{ type: 'start', key: 'pods', resource: pods }],
    then: { running: runs(pods), deleted: new Set([A]) },
  },
  {
    rule: 'a discovery that read the group without the deleted CRD: the name stops racing',
    from: state('all', { deleted: new Set([A, P]) }),
    input: discovery([pods, pears]),
    effects: [{ type: 'start', key: 'pods', resource: pods }],
    then: { deleted: new Set([P]) },
  },
  {
    rule: "a discovery that could not read the deleted CRD's group: the name keeps racing",
    from: state([], { deleted: new Set([A]) }),
    input: discovery([pods], unreadable('stable.example.com/v1')),
    effects: [],
    then: { deleted: new Set([A]) },
  },
  {
    rule: 'teardown: every running informer released, in the order they started; nothing remembered',
    from: state(['apples'], { running: runs(pods, apples), unresolved: new Map([['x', 'y']]), deleted: new Set([P]) }),
    input: { type: 'teardown' },
    effects: [
      { type: 'release', key: 'pods' },
      { type: 'release', key: A },
    ],
    then: { running: new Map(), unresolved: new Map(), deleted: new Set() },
  },
];

describe('dynamicWatchStep: the rules, row by row', () => {
  for (const row of ROWS) {
    it(row.rule, () => {
      const { state: next, effects } = dynamicWatchStep(row.from, row.input);
      expect(effects).toEqual(row.effects);
      // Errors compare by message above; their class and reason are the rule too.
      for (const [i, effect] of effects.entries()) {
        const expected = row.effects[i];
        if (effect.type === 'unresolved' && expected?.type === 'unresolved') {
          expect(effect.error.constructor).toBe(expected.error.constructor);
          expect(effect.error.reason).toBe(expected.error.reason);
        }
      }
      if (row.then) expect(next).toMatchObject(row.then);
      expect(next.selection).toBe(row.from.selection);
    });
  }

  it('the step is pure: the state it was given is unchanged', () => {
    const from = state('all', { running: runs(pods, apples), deleted: new Set([P]) });
    const copy = { running: new Map(from.running), unresolved: new Map(from.unresolved), deleted: new Set(from.deleted) };
    for (const input of [discovery([pears]), { type: 'crdDeleted', name: A } as const, { type: 'teardown' } as const]) {
      dynamicWatchStep(from, input);
      expect({ running: from.running, unresolved: from.unresolved, deleted: from.deleted }).toEqual(copy);
    }
  });

  it('started, ended and started again over inputs: running follows every effect', () => {
    let s = initialDynamicWatch('all');
    const seen: string[] = [];
    for (const input of [discovery([apples]), { type: 'crdDeleted', name: A } as const, discovery([apples]), discovery([])]) {
      const next = dynamicWatchStep(s, input);
      s = next.state;
      seen.push(...next.effects.map((e) => `${e.type} ${'key' in e ? e.key : ''}`));
    }
    // The discovery that raced the deletion does not start it; the one without it forgets the race.
    expect(seen).toEqual([`start ${A}`, `end ${A}`]);
    expect(s.deleted.size).toBe(0);
    expect(dynamicWatchStep(s, discovery([apples])).effects).toEqual([{ type: 'start', key: A, resource: apples }]);
  });
});
