import { DIFF_NOISE, fieldChanges, type Change } from '../diff.ts';
import { limitDepth, MAX_DEPTH } from '../internal.ts';

// One implementation for the library's diff() operator and the CLI.
export { jsonEqual, limitDepth, MAX_DEPTH, TOO_DEEP } from '../internal.ts';
export { type Change } from '../diff.ts';

/**
 * The fields that differ between two objects, depth first, skipping the
 * `ignore` paths and everything under them (patterns, as `watch --ignore`, with or without a leading `!`),
 * and keeping only the `fields` patterns when given (`watch --fields`). By default it ignores the
 * library's noise list, `DIFF_NOISE` (the one list: the CLI keeps none of its own).
 * See `fieldChanges` in the root entry.
 */
export function diffObjects(
  before: unknown,
  after: unknown,
  ignore: readonly string[] = DIFF_NOISE,
  maxDepth = MAX_DEPTH,
  fields: readonly string[] = [],
): Change[] {
  const excluded = ignore.map((path) => (path.startsWith('!') ? path : `!${path}`));
  return fieldChanges(before, after, { fields: [...fields, ...excluded], maxDepth });
}

/** Matches the placeholder `0-model/redact.ts` puts in place of a Secret value. */
const REDACTED = /^<redacted:[0-9a-f]+>$/;

/** A value as a short string: JSON, cut to `max` characters. */
export function brief(value: unknown, max = 60): string {
  let text: string;
  try {
    text = JSON.stringify(limitDepth(value)) ?? String(value);
  } catch (error) {
    text = `<unprintable: ${error instanceof Error ? error.message : String(error)}>`;
  }
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * `spec.replicas: 2 → 3, metadata.labels.tier: +"web"`, at most `limit`
 * changes then `(+N more)`. Redacted Secret values read `<changed>`,
 * `+<redacted>`, `-<redacted>`: a key's fate, never its value.
 */
export function formatChanges(changes: readonly Change[], limit = 8): string {
  const show = (value: unknown) => (typeof value === 'string' && REDACTED.test(value) ? '<redacted>' : brief(value));
  const shown = changes.slice(0, limit).map((c) => {
    if (!('old' in c)) return `${c.path}: +${show(c.new)}`;
    if (!('new' in c)) return `${c.path}: -${show(c.old)}`;
    if (typeof c.old === 'string' && typeof c.new === 'string' && REDACTED.test(c.old) && REDACTED.test(c.new))
      return `${c.path}: <changed>`;
    return `${c.path}: ${show(c.old)} → ${show(c.new)}`;
  });
  if (changes.length > limit) shown.push(`(+${changes.length - limit} more)`);
  return shown.join(', ');
}
