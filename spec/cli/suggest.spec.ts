/**
 * "Did you mean …?": the distance, the nearest unique name, and the hints the parsers give (options, commands).
 * The resource names' hint is in watch.spec.ts (it needs discovery: the emulator's resources).
 */
import { describe, expect, it } from 'vitest';
import { closestName, editDistance, unknownOption } from '../../src/cli/suggest.ts';
import { parseCommandLine } from '../../src/cli/args.ts';
import { parseRecordLine, RECORD_OPTIONS } from '../../src/cli/recordArgs.ts';
import { parseReplayLine } from '../../src/cli/replayArgs.ts';
import { parseTrimLine } from '../../src/cli/trimCommand.ts';

describe('editDistance (Damerau–Levenshtein, optimal string alignment)', () => {
  it.each([
    ['pods', 'pods', 0],
    ['podz', 'pods', 1], // substitution
    ['pod', 'pods', 1], // insertion
    ['deploymnets', 'deployments', 1], // transposition
    ['kubeconfg', 'kubeconfig', 1],
    ['Pods', 'pods', 0], // case-insensitive
    ['frob', 'trim', 3],
    ['', 'abc', 3],
    ['ca', 'abc', 3], // optimal string alignment: no edit of a transposed pair
  ])('%s → %s: %i', (a, b, distance) => {
    expect(editDistance(a, b)).toBe(distance);
    expect(editDistance(b, a)).toBe(distance);
  });
});

describe('closestName', () => {
  const resources = [
    ['pods', 'pod', 'Pod', 'po'],
    ['nodes', 'node', 'Node', 'no'],
    ['services', 'service', 'Service', 'svc'],
    ['deployments', 'deployment', 'Deployment', 'deploy', 'deployments.apps'],
  ];
  it.each([
    ['podz', 'pods'], // pods and pod are both 1 away: one resource, its first name
    ['deploymnets', 'deployments'],
    ['deploymnets.apps', 'deployments.apps'],
    ['servce', 'service'],
    ['pox', 'pod'], // po is 1 away too: the resource's first name of those nearest
  ])('%s → %s', (word, name) => {
    expect(closestName(word, resources)).toBe(name);
  });
  it.each([
    ['pods', 'a name itself is no typo'],
    ['nods', 'pods and nodes are both 1 away'],
    ['px', 'a word may be less than half its length away: px is 1 from po'],
    ['pdx', 'po is 2 away (more than a 3-letter word may be)'],
    ['deploymentssss', '3 away'],
    ['x'.repeat(65), 'too long to compare'],
    ['', 'empty'],
  ])('%s: none (%s)', (word) => {
    expect(closestName(word, resources)).toBeUndefined();
  });
});

describe('the parsers say which option or command was meant (exit 2 as before)', () => {
  it.each([
    [['watch', 'pods', '--kubeconfg', 'x'], 'unknown option --kubeconfg; did you mean --kubeconfig?'],
    [['watch', 'pods', '--namespaces', 'a'], 'unknown option --namespaces; did you mean --namespace?'],
    [['watch', 'pods', '-kubeconfig', 'x'], 'unknown option -k; did you mean --kubeconfig?'],
    [['start', '--churn-intervall', '5'], 'unknown option --churn-intervall; did you mean --churn-interval?'],
    [['watch', 'pods', '--bogus'], 'unknown option --bogus'],
    [['watch', 'pods', '-x'], 'unknown option -x'],
    [['wacth', 'pods'], 'unknown command "wacth" (the commands are watch, start, record, replay and trim); did you mean watch?'],
    [
      ['recrod', 'pods', '--duration', '5m'],
      'unknown command "recrod" (the commands are watch, start, record, replay and trim); did you mean record?',
    ],
    [['frob'], 'unknown command "frob" (the commands are watch, start, record, replay and trim)'],
  ])('%j: %s', (argv, message) => {
    expect(parseCommandLine(argv)).toEqual({ kind: 'usage', message });
  });

  it('record, replay and trim: in our words, with the hint', () => {
    expect(parseRecordLine(['record', 'pods', '-o', 'f', '--duratoin', '5m'])).toBe(
      'record: unknown option --duratoin; did you mean --duration?',
    );
    expect(parseReplayLine(['replay', 'f', '--form', '5m'])).toBe('replay: unknown option --form; did you mean --from?');
    expect(parseTrimLine(['trim', 'f', '--from', '1m', '-o', 'g', '--resouce', 'pods'])).toBe(
      'trim: unknown option --resouce; did you mean --resource?',
    );
    expect(parseRecordLine(['record', 'pods', '-o', 'f', '--bogus'])).toBe('record: unknown option --bogus');
    expect(unknownOption(['record', 'pods', '-o', 'f'], RECORD_OPTIONS)).toBeUndefined();
  });
});
