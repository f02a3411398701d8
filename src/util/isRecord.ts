/** A plain JSON object: not null, not an array (what `JSON.parse` gives for `{…}`). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
