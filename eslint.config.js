// ESLint keeps the layering true: the pipeline src/0-model … src/5-informer imports strictly downwards, the rooms
// outside it (controller, workqueue, metrics, leaderelection, discovery) never reach the CLI or the test kit, and
// the work queue knows nothing of informers. The two packages stay apart: the library's src/ never imports the
// API-server emulator (packages/emulator, rx-informer-emulator; the CLI's demo loads it at run time by a name in a
// variable), and the emulator never imports the library. Style is prettier's job; only rules that find real faults
// live here.
import tseslint from 'typescript-eslint';

const STAGES = ['0-model', '1-transport', '2-source', '3-deltas', '4-store', '5-informer'];
const ROOMS = ['controller', 'workqueue', 'metrics', 'leaderelection', 'discovery'];
const OUTSIDE = ['cli', 'testing'];

/** `import` patterns that name a folder of src/ from a file one level below src/. */
const folders = (names) => names.flatMap((name) => [`../${name}`, `../${name}/*`, `../${name}/**`, `../${name}.ts`]);
const entries = ['../index.ts', '../pipeline.ts', '../diff.ts', '../internal.ts'];

/** src/internal.ts is the CLI's private door to helpers that are not public (it is in no `exports`). */
const PRIVATE = 'src/internal.ts is the private module of the CLI: only src/cli imports it.';

/** The emulator package, by name or by path, as seen from the library's src/ (any depth). */
const EMULATOR = {
  regex: '^(rx-informer-emulator(/.*)?|(\\.\\./)+packages(/.*)?)$',
  message: 'the library does not depend on the API-server emulator (rx-informer-emulator): only tests, bench and examples import it.',
};

/** A restriction for files of the library's src/: what `forbidden` names, and always the emulator package. */
function restrict(files, forbidden, message) {
  return {
    files,
    rules: { 'no-restricted-imports': ['error', { patterns: [...(forbidden.length ? [{ group: forbidden, message }] : []), EMULATOR] }] },
  };
}

/** packages/emulator/src at each depth: no relative import out of the package's src/, and not the library by name. */
const emulatorRules = [0, 1, 2].map((depth) => ({
  files: [`packages/emulator/src/${'*/'.repeat(depth)}*.ts`],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          {
            regex: `^(rx-informer(/.*)?|(\\.\\./){${depth + 1},}.*)$`,
            message: 'the API-server emulator is a package of its own: it imports nothing of the library (nor anything outside its src/).',
          },
        ],
      },
    ],
  },
}));

const stageRules = STAGES.map((stage, i) =>
  restrict(
    [`src/${stage}/**/*.ts`],
    [...folders([...STAGES.slice(i + 1), ...ROOMS, ...OUTSIDE]), ...entries],
    `${stage} is stage ${i} of the pipeline: it imports only from lower stages (and src/util).`,
  ),
);

export default tseslint.config(
  { ignores: ['dist/**', 'packages/*/dist/**', 'node_modules/**', '**/*.js', 'bench/results/**'] },
  {
    files: ['**/*.ts'],
    languageOptions: { parser: tseslint.parser, parserOptions: { ecmaVersion: 'latest', sourceType: 'module' } },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      'no-debugger': 'error',
      'no-dupe-keys': 'error',
      'no-self-assign': 'error',
      'no-unreachable': 'error',
      'no-unsafe-finally': 'error',
    },
  },
  { files: ['src/**/*.ts', 'packages/*/src/**/*.ts'], rules: { '@typescript-eslint/no-explicit-any': 'error' } },
  restrict(['src/**/*.ts'], [], ''),
  restrict(['src/util/**/*.ts'], [...folders([...STAGES, ...ROOMS, ...OUTSIDE]), ...entries], 'src/util imports nothing of the library.'),
  ...stageRules,
  restrict(
    ['src/workqueue/**/*.ts'],
    folders([...STAGES, ...ROOMS.filter((r) => r !== 'workqueue'), ...OUTSIDE]).concat(entries),
    'the work queue knows nothing of informers, controllers or the CLI (client-go keeps util/workqueue apart as well).',
  ),
  restrict(
    ['src/leaderelection/**/*.ts'],
    [...folders(['controller', 'discovery', ...OUTSIDE]), '../internal.ts'],
    'leader election knows nothing of controllers, discovery or the CLI.',
  ),
  restrict(
    ['src/{controller,metrics,discovery}/**/*.ts'],
    [...folders(OUTSIDE), '../internal.ts'],
    'library rooms never import the CLI, the test kit (neither ships in their dependency graph) or src/internal.ts.',
  ),
  restrict(['src/testing/**/*.ts'], ['../internal.ts'], PRIVATE),
  ...emulatorRules,
);
