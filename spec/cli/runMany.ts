/**
 * Runs the bin's `run(argv)` for several command lines in one process, for the tests of what the CLI says
 * before it does anything (usage errors, a kubeconfig that does not load): one Node start and one load of
 * the Kubernetes client for all of them, where a process each costs ~0.5 s of CPU. Each run gets a module
 * instance of its own of src/cli/cli.ts (so no secret one run registers scrubs another's output, as in
 * separate processes) and its stdout and stderr captured apart; they run one after the other.
 *
 * Argument: a JSON array of argv arrays. Output: one JSON line, `[{ code, out, err }]` in the order given.
 * The bin itself (src/cli/main.ts, `process.exit(await run(argv))`) is run as a process by every other test.
 */
const argvs = JSON.parse(process.argv[2] ?? '[]') as string[][];
const cliUrl = new URL('../../src/cli/cli.ts', import.meta.url).href;

type Write = typeof process.stdout.write;
const results: { code: number; out: string; err: string }[] = [];
const [realOut, realErr] = [process.stdout.write, process.stderr.write];
for (const [index, argv] of argvs.entries()) {
  let out = '';
  let err = '';
  const capture =
    (append: (text: string) => void): Write =>
    (chunk: string | Uint8Array, ...rest: unknown[]) => {
      append(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      const done = rest.find((arg) => typeof arg === 'function') as (() => void) | undefined;
      done?.();
      return true;
    };
  process.stdout.write = capture((text) => (out += text));
  process.stderr.write = capture((text) => (err += text));
  try {
    const { run } = (await import(`${cliUrl}?run=${index}`)) as typeof import('../../src/cli/cli.ts');
    results.push({ code: await run(argv), out, err });
  } finally {
    process.stdout.write = realOut;
    process.stderr.write = realErr;
  }
}
process.stdout.write(`${JSON.stringify(results)}\n`, () => process.exit(0));
