/**
 * Waiting on real I/O while vitest's fake timers hold virtual time still (`setImmediate` is left real): the helpers of
 * the specs that run the emulator over real sockets at default options.
 */

/** Real time, for the helpers' real-time deadlines (`performance.now` may be faked in the tests). */
export const realNow = performance.now.bind(performance);

/** Lets real I/O run (setImmediate is not faked) without moving virtual time. */
export async function io(turns = 20): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** Waits in real time (real I/O, virtual time standing still) for `check`; fails after `realMs`. */
export async function waitReal(what: string, check: () => boolean, realMs = 10_000): Promise<void> {
  const deadline = realNow() + realMs;
  while (!check()) {
    if (realNow() > deadline) throw new Error(`timed out waiting for ${what}`);
    await io(1);
  }
}
