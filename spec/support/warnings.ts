import type { MockInstance } from 'vitest';

/** What a spy on `process.emitWarning` saw: [message, type, code] a call. */
export function warningsOf(warn: MockInstance<typeof process.emitWarning>): unknown[][] {
  return warn.mock.calls.map(([message, options]) => [message, (options as { type?: string }).type, (options as { code?: string }).code]);
}
