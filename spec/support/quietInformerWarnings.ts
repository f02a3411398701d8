/**
 * Vitest setup (vitest.config.ts, `setupFiles`): the suite runs hundreds of informers whose faults nobody subscribes to
 * on purpose, and each would print an `RxInformerWarning` (src/5-informer/unobservedErrors.ts). Here they are dropped;
 * every other warning passes. The default report itself is tested in spec/5-informer/unobservedErrors.spec.ts, which
 * spies on `process.emitWarning` (replacing this filter for its tests, restoring it after).
 */
const QUIET = Symbol.for('rx-informer.quietInformerWarnings');

type Flagged = typeof process.emitWarning & { [QUIET]?: true };

if ((process.emitWarning as Flagged)[QUIET] !== true) {
  const emitWarning = process.emitWarning.bind(process);
  const quiet = ((warning: string | Error, ...rest: unknown[]) => {
    const options = rest[0];
    if (typeof options === 'object' && options !== null && (options as { type?: unknown }).type === 'RxInformerWarning') return;
    (emitWarning as (...args: unknown[]) => void)(warning, ...rest);
  }) as Flagged;
  quiet[QUIET] = true;
  process.emitWarning = quiet;
}
