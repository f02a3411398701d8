/**
 * rx-informer/diff: field-level changes. `diff()` turns `updated` events into the
 * fields they changed (with path patterns and redaction); `fieldChanges` and
 * `selectFields` are the same comparison for any two objects.
 */
export { diff, DIFF_NOISE, type DiffEvent, type DiffOptions } from './5-informer/diff.ts';
export {
  FieldSelector,
  fieldChanges,
  selectFields,
  type Change,
  type FieldChangesOptions,
  type FieldSelection,
} from './5-informer/fieldChanges.ts';
