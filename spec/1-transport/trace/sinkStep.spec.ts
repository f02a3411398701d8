/**
 * A trace file sink's rules (src/1-transport/trace/sinkStep.ts), row by row: a state, an input, the effects in order
 * and the next state. The rules are listed in the module's JSDoc; the shell (`traceFileSink`) is tested by
 * traceFileSink.spec.ts (files, FIFOs, a full disk) and spec/cli/record*.spec.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  BUFFER_BYTES,
  initialSink,
  onlyBuffered,
  PIPE_QUEUE_BYTES,
  sinkKind,
  sinkStep,
  type SinkEffect,
  type SinkInput,
  type SinkKind,
  type SinkState,
} from '../../../src/1-transport/trace/sinkStep.ts';

const file = initialSink('file');
const turn: SinkState = { ...file, scheduled: true };
const failed = (fields: Partial<SinkState> = {}): SinkState => ({ ...turn, failed: true, ...fields });
const closed: SinkState = { ...file, open: false };
const e = (...types: SinkEffect['type'][]): SinkEffect[] => types.map((type) => ({ type }) as SinkEffect);
/** The most UTF-16 units a line may have and surely fit a buffer holding `used` bytes (3 bytes a unit). */
const fitting = (used: number) => Math.floor((BUFFER_BYTES - used) / 3);

interface Row {
  readonly rule: string;
  readonly from: SinkState;
  readonly input: SinkInput;
  readonly effects: readonly SinkEffect[];
  readonly then: SinkState;
}

const ROWS: readonly Row[] = [
  {
    rule: 'the first line of a turn: the turn’s end is asked for, the line buffered',
    from: file,
    input: { type: 'line', units: 10, used: 0 },
    effects: e('schedule', 'buffer'),
    then: turn,
  },
  {
    rule: 'the first line of a turn that fits to the last byte: buffered too',
    from: file,
    input: { type: 'line', units: fitting(1), used: 1 },
    effects: e('schedule', 'buffer'),
    then: turn,
  },
  {
    rule: 'a line later in the turn that surely fits (3 bytes a unit, to the last byte): buffered, nothing asked for',
    from: turn,
    input: { type: 'line', units: fitting(1000), used: 1000 },
    effects: e('buffer'),
    then: turn,
  },
  {
    rule: 'a line that may not fit what is left: the buffer written first, then the line buffered',
    from: turn,
    input: { type: 'line', units: fitting(1000) + 1, used: 1000 },
    effects: e('writeBuffer', 'buffer'),
    then: turn,
  },
  {
    rule: 'a line that may not fit an empty buffer (a list page’s): the buffer written, then the line on its own',
    from: turn,
    input: { type: 'line', units: fitting(0) + 1, used: 0 },
    effects: e('writeBuffer', 'direct'),
    then: turn,
  },
  {
    rule: 'a long line first in its turn: the turn’s end asked for first, then written as any',
    from: file,
    input: { type: 'line', units: fitting(0) + 1, used: 0 },
    effects: e('schedule', 'writeBuffer', 'direct'),
    then: turn,
  },
  {
    rule: 'a line after a failure: the failure thrown, nothing asked for',
    from: failed({ scheduled: false }),
    input: { type: 'line', units: 1, used: 0 },
    effects: e('throw'),
    then: failed({ scheduled: false }),
  },
  {
    rule: 'a line once closed: “closed” thrown',
    from: closed,
    input: { type: 'line', units: 1, used: 0 },
    effects: e('throwClosed'),
    then: closed,
  },
  {
    rule: 'a line once closed after a failure: the failure thrown (it comes first)',
    from: failed({ open: false, scheduled: false }),
    input: { type: 'line', units: 1, used: 0 },
    effects: e('throw'),
    then: failed({ open: false, scheduled: false }),
  },
  { rule: 'flush: the buffer written', from: turn, input: { type: 'flush' }, effects: e('writeBuffer'), then: turn },
  { rule: 'flush after a failure: thrown', from: failed(), input: { type: 'flush' }, effects: e('throw'), then: failed() },
  {
    rule: 'the end of a turn: the buffer written, a new turn awaited by the next line',
    from: turn,
    input: { type: 'turnEnd' },
    effects: e('writeBuffer'),
    then: file,
  },
  {
    rule: 'the end of a turn after a failure: the failure thrown (to the shell, which tells it)',
    from: failed(),
    input: { type: 'turnEnd' },
    effects: e('throw'),
    then: failed({ scheduled: false }),
  },
  {
    rule: 'untold: a failure no call took is told, once',
    from: failed(),
    input: { type: 'untold' },
    effects: e('tell'),
    then: failed({ told: true }),
  },
  { rule: 'untold with no failure held: nothing told', from: turn, input: { type: 'untold' }, effects: [], then: turn },
  {
    rule: 'untold again: not told twice',
    from: failed({ told: true }),
    input: { type: 'untold' },
    effects: [],
    then: failed({ told: true }),
  },
  {
    rule: 'a regular file’s write failed: held, the file cut back to its last whole line, thrown',
    from: turn,
    input: { type: 'failed' },
    effects: e('hold', 'cutBack', 'throw'),
    then: failed(),
  },
  {
    rule: 'a device’s write failed: held and thrown, never cut back (it keeps what it took)',
    from: { ...turn, kind: 'device' },
    input: { type: 'failed' },
    effects: e('hold', 'throw'),
    then: failed({ kind: 'device' }),
  },
  {
    rule: 'a pipe’s queue at its bound: written',
    from: { ...turn, kind: 'pipe' },
    input: { type: 'queue', waiting: PIPE_QUEUE_BYTES },
    effects: [],
    then: { ...turn, kind: 'pipe' },
  },
  {
    rule: 'a pipe’s queue past its bound: fails, saying how much would wait, and holds it',
    from: { ...turn, kind: 'pipe' },
    input: { type: 'queue', waiting: PIPE_QUEUE_BYTES + 1 },
    effects: [{ type: 'throwQueueFull', waiting: PIPE_QUEUE_BYTES + 1 }],
    then: failed({ kind: 'pipe' }),
  },
  {
    rule: 'a pipe’s error (its reader gone): held and told at once',
    from: { ...turn, kind: 'pipe' },
    input: { type: 'pipeError' },
    effects: e('hold', 'tell'),
    then: failed({ kind: 'pipe', told: true }),
  },
  {
    rule: 'a pipe’s error after a failure not yet told: the first failure stands, and is told',
    from: failed({ kind: 'pipe' }),
    input: { type: 'pipeError' },
    effects: e('tell'),
    then: failed({ kind: 'pipe', told: true }),
  },
  {
    rule: 'a pipe’s error after a failure told: nothing',
    from: failed({ kind: 'pipe', told: true }),
    input: { type: 'pipeError' },
    effects: [],
    then: failed({ kind: 'pipe', told: true }),
  },
  {
    rule: 'close within a turn: its end cancelled, the buffer written, then the file released',
    from: turn,
    input: { type: 'close' },
    effects: e('cancel', 'writeBuffer', 'release'),
    then: closed,
  },
  {
    rule: 'close between turns: the buffer written (nothing to cancel), the file released',
    from: file,
    input: { type: 'close' },
    effects: e('writeBuffer', 'release'),
    then: closed,
  },
  {
    rule: 'close after a failure: thrown, and the file released all the same (the shell releases past a throw)',
    from: failed(),
    input: { type: 'close' },
    effects: e('cancel', 'throw', 'release'),
    then: failed({ open: false, scheduled: false }),
  },
  { rule: 'close again: nothing (idempotent)', from: closed, input: { type: 'close' }, effects: [], then: closed },
];

describe('sinkStep (src/1-transport/trace/sinkStep.ts)', () => {
  it.each(ROWS)('$rule', ({ from, input, effects, then }) => {
    const step = sinkStep(from, input);
    expect(step.effects).toEqual(effects);
    expect(step.state).toEqual(then);
  });

  it.each(ROWS.filter((row) => row.input.type === 'line'))(
    'the shell’s shortcut, onlyBuffered, holds exactly when the step only buffers: $rule',
    ({ from, input }) => {
      if (input.type !== 'line') throw new Error('a line row');
      const step = sinkStep(from, input);
      const only = step.state === from && step.effects.length === 1 && step.effects[0]!.type === 'buffer';
      expect(onlyBuffered(from, input.units, input.used)).toBe(only);
    },
  );

  it.each<[string, { file: boolean; fifo: boolean; socket: boolean }, SinkKind]>([
    ['a regular file', { file: true, fifo: false, socket: false }, 'file'],
    ['a FIFO (a pipe’s /dev/stdout too)', { file: false, fifo: true, socket: false }, 'pipe'],
    ['a socket', { file: false, fifo: false, socket: true }, 'pipe'],
    ['another device (/dev/null): written as a file is', { file: false, fifo: false, socket: false }, 'device'],
  ])('sinkKind: %s is a %s', (_, bits, kind) => {
    expect(sinkKind({ isFile: () => bits.file, isFIFO: () => bits.fifo, isSocket: () => bits.socket })).toBe(kind);
  });
});
