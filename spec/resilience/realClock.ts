/**
 * The real clock, for specs that fake `setTimeout` for the code under test (vi.useFakeTimers) but must wait on real
 * sockets: captured when this module loads, before any test fakes it.
 */
const realSetTimeout = globalThis.setTimeout;

/** Waits `ms` of real time. */
export const realSleep = (ms: number): Promise<void> => new Promise<void>((resolve) => realSetTimeout(resolve, ms));

/** Polls `check` with the real clock until it holds, or throws naming `what` after `timeoutMs`. */
export async function until(what: string, check: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await realSleep(2);
  }
}
