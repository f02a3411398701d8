import { describe, expect, it } from 'vitest';
import { parseRunName } from '../../bench/contenders/probe.ts';

/** The bench's run names: `id[=PATH][@DIR][:flag…]`; `=PATH` (where rx-record writes its trace) is rx-record's alone. */
describe('bench run names', () => {
  it('reads the id, the trace place, the other src/ and the flags', () => {
    expect(parseRunName('rx')).toEqual({ id: 'rx', flags: [] });
    expect(parseRunName('rx-record=/dev/shm')).toEqual({ id: 'rx-record', flags: [], recordTo: '/dev/shm' });
    expect(parseRunName('rx-record=/dev/null@/tmp/base/src:--minor-ms')).toEqual({
      id: 'rx-record',
      src: '/tmp/base/src',
      flags: ['--minor-ms'],
      recordTo: '/dev/null',
    });
    expect(parseRunName('rx@/tmp/base/src')).toEqual({ id: 'rx', src: '/tmp/base/src', flags: [] });
  });

  it('refuses a trace place for another contender, or an empty one', () => {
    expect(() => parseRunName('rx=/dev/shm')).toThrow(/only rx-record=PATH/);
    expect(() => parseRunName('rx-record=')).toThrow(/only rx-record=PATH/);
  });
});
