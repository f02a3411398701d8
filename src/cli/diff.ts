/** One changed field between two versions of an object. */
export interface Change {
  /** `spec.replicas`, `metadata.labels.app`, `spec.containers[0].image` */
  readonly path: string;
  /** Absent when the field was added. */
  readonly old?: unknown;
  /** Absent when the field was removed. */
  readonly new?: unknown;
}

/** Fields whose change is noise for a human watching a cluster. */
export const NOISE: readonly string[] = ['metadata.resourceVersion', 'metadata.managedFields'];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function join(path: string, key: string): string {
  return /^[A-Za-z_$][\w$-]*$/.test(key) ? (path ? `${path}.${key}` : key) : `${path}[${JSON.stringify(key)}]`;
}

/**
 * The leaf fields that differ between two objects, depth first, skipping the
 * `ignore` paths (and everything under them).
 */
export function diffObjects(before: unknown, after: unknown, ignore: readonly string[] = NOISE): Change[] {
  const changes: Change[] = [];
  const skip = new Set(ignore);
  const walk = (a: unknown, b: unknown, path: string) => {
    if (skip.has(path) || a === b) return;
    if (isRecord(a) && isRecord(b)) {
      for (const key of Object.keys(a)) walk(a[key], b[key], join(path, key));
      for (const key of Object.keys(b)) if (!(key in a)) walk(undefined, b[key], join(path, key));
      return;
    }
    if (Array.isArray(a) && Array.isArray(b)) {
      const n = Math.max(a.length, b.length);
      for (let i = 0; i < n; i++) walk(i < a.length ? a[i] : undefined, i < b.length ? b[i] : undefined, `${path}[${i}]`);
      return;
    }
    if (a === undefined && b === undefined) return;
    if (JSON.stringify(a) === JSON.stringify(b)) return;
    changes.push(a === undefined ? { path, new: b } : b === undefined ? { path, old: a } : { path, old: a, new: b });
  };
  walk(before, after, '');
  return changes;
}

/** A value as a short string: JSON, cut to `max` characters. */
export function brief(value: unknown, max = 60): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** `spec.replicas: 2 → 3, metadata.labels.tier: +"web"`, at most `limit` changes then `(+N more)`. */
export function formatChanges(changes: readonly Change[], limit = 8): string {
  const shown = changes.slice(0, limit).map((c) => {
    if (!('old' in c)) return `${c.path}: +${brief(c.new)}`;
    if (!('new' in c)) return `${c.path}: -${brief(c.old)}`;
    return `${c.path}: ${brief(c.old)} → ${brief(c.new)}`;
  });
  if (changes.length > limit) shown.push(`(+${changes.length - limit} more)`);
  return shown.join(', ');
}
