/**
 * bench/profile.ts run as a script: it summarizes the profiles it is given, also when node is given its path through
 * a symlink (node runs the link's target, whose path is not argv[1]: it printed nothing), and without `--top` (the
 * first file was taken for its value: it printed nothing for one file).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NODE } from '../cli/support.ts';

const PROFILE = new URL('../../bench/profile.ts', import.meta.url).pathname;

describe('bench/profile.ts', () => {
  const dir = mkdtempSync(join(tmpdir(), 'rx-informer-profile-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'run.cpuprofile');
  writeFileSync(
    file,
    JSON.stringify({
      nodes: [
        { id: 1, callFrame: { functionName: '(root)', url: '', lineNumber: -1 }, children: [2] },
        { id: 2, callFrame: { functionName: 'step', url: new URL('../../src/2-source/step.ts', import.meta.url).href, lineNumber: 9 } },
      ],
      samples: [2, 2],
      timeDeltas: [1000, 1000],
    }),
  );
  const link = join(dir, 'linked');
  symlinkSync(join(PROFILE, '..'), link);

  for (const [how, script] of [
    ['by its path', PROFILE],
    ['through a symlink', join(link, 'profile.ts')],
  ] as const) {
    it(`summarizes the profile it is given, run ${how}`, () => {
      const run = spawnSync(NODE, [script, file], { encoding: 'utf8' });
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout).toContain(`## ${file}: 2 ms of samples`);
      expect(run.stdout).toMatch(/2 ms 100\.0% {2}step src\/2-source\/step\.ts:10/);
    });
  }

  it('takes --top and its value before or after the files', () => {
    for (const args of [
      ['--top', '1', file, file],
      [file, '--top', '1', file],
    ]) {
      const run = spawnSync(NODE, [PROFILE, ...args], { encoding: 'utf8' });
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout.split(`## ${file}:`)).toHaveLength(3);
    }
  });
});
