import { isRecord } from '../util/isRecord.ts';

/** One changed field between two versions of an object. */
export interface Change {
  /** `spec.replicas`, `metadata.labels.app`, `spec.containers[0].image`, `metadata.annotations["app.kubernetes.io/name"]` */
  readonly path: string;
  /** Absent when the field was added. */
  readonly old?: unknown;
  /** Absent when the field was removed. */
  readonly new?: unknown;
}

/** How {@link fieldChanges} compares two objects. */
export interface FieldChangesOptions {
  /**
   * Which fields count. A pattern selects a path and everything under it: `spec`, `spec.**`,
   * `metadata.labels`, `spec.containers[*].image`, `**.image`, `metadata.annotations["a.b/c"]`
   * (`*` is one key or index, `**` any number). `!` before a pattern excludes instead
   * (`!status`, `!metadata.managedFields`). With no plain pattern every field is selected,
   * less the excluded ones. Default: every field. Compile once with {@link FieldSelector} to reuse.
   */
  readonly fields?: readonly string[] | FieldSelector;
  /** How deep to descend and how deep values are copied. Default {@link MAX_DEPTH}. */
  readonly maxDepth?: number;
}

/**
 * How deep a diff descends, and how deep a value is kept in output. Objects
 * come from the network: anything deeper is compared without recursion and
 * shown as {@link TOO_DEEP}, so a hostile object cannot exhaust the stack
 * (V8's own JSON.stringify throws at about 4,500 levels).
 */
export const MAX_DEPTH = 64;

/** Stands for a value (or the part of one) nested deeper than {@link MAX_DEPTH}. */
export const TOO_DEEP = `<nested deeper than ${MAX_DEPTH} levels>`;

const IDENTIFIER = /^[A-Za-z_$][\w$-]*$/;

function join(path: string, key: string): string {
  return IDENTIFIER.test(key) ? (path ? `${path}.${key}` : key) : `${path}[${JSON.stringify(key)}]`;
}

/**
 * The segments of a path or pattern: `a.b[0]["x.y"][*].**` → `a`, `b`, `0`, `x.y`, `*`, `**`.
 * Throws a `SyntaxError` for text that is neither.
 */
export function parseFieldPath(text: string): string[] {
  const segments: string[] = [];
  let i = 0;
  while (i < text.length) {
    if (text[i] === '.') {
      if (i === 0 || i === text.length - 1 || text[i + 1] === '.' || text[i + 1] === '[')
        throw new SyntaxError(`bad field path ${JSON.stringify(text)}`);
      i++;
      continue;
    }
    if (text[i] === '[') {
      const end = text[i + 1] === '"' ? closingQuote(text, i + 2) + 1 : text.indexOf(']', i);
      if (end <= i || text[end] !== ']') throw new SyntaxError(`bad field path ${JSON.stringify(text)}: unclosed [`);
      const inner = text.slice(i + 1, end);
      if (inner.startsWith('"')) segments.push(JSON.parse(inner) as string);
      else if (/^(\d+|\*|\*\*)$/.test(inner)) segments.push(inner);
      else throw new SyntaxError(`bad field path ${JSON.stringify(text)}: [${inner}]`);
      i = end + 1;
      continue;
    }
    let end = i;
    while (end < text.length && text[end] !== '.' && text[end] !== '[') end++;
    segments.push(text.slice(i, end));
    i = end;
  }
  return segments;
}

function closingQuote(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"') return i;
  }
  return -1;
}

/**
 * Where a node stands against the patterns: the positions reached in each
 * include and exclude pattern (an NFA walked segment by segment), or `ALL`
 * once an include pattern has matched a prefix of the node's path.
 */
export interface FieldSelection {
  /** Positions in include patterns; undefined: the node is inside an include (or there are none). */
  readonly include: readonly (readonly [number, number])[] | undefined;
  readonly exclude: readonly (readonly [number, number])[];
}

/** Compiled patterns: which nodes are selected, walked from the root one key at a time. */
export class FieldSelector {
  private readonly includes: readonly (readonly string[])[];
  private readonly excludes: readonly (readonly string[])[];
  /** The root's selection; undefined when the root is excluded (a `!**` pattern). */
  readonly root: FieldSelection | undefined;

  constructor(patterns: readonly string[] = []) {
    const includes: string[][] = [];
    const excludes: string[][] = [];
    for (const pattern of patterns) {
      if (pattern.startsWith('!')) excludes.push(parseFieldPath(pattern.slice(1)));
      else includes.push(parseFieldPath(pattern));
    }
    this.includes = includes;
    this.excludes = excludes;
    const start = (list: readonly (readonly string[])[]) => list.flatMap((p, n) => closure(p, n, 0));
    const include = includes.length === 0 ? undefined : start(includes);
    const exclude = start(excludes);
    this.root = this.settle(include, exclude);
  }

  /** The selection of a child `key` of a node, or undefined when nothing under it can be selected. */
  child(at: FieldSelection, key: string): FieldSelection | undefined {
    const step = (list: readonly (readonly string[])[], states: readonly (readonly [number, number])[]) => {
      const next: (readonly [number, number])[] = [];
      for (const [n, i] of states) {
        const pattern = list[n]!;
        const segment = pattern[i];
        // `**` consumes the key and stays; `*` or the key itself moves on.
        if (segment === '**') next.push(...closure(pattern, n, i));
        else if (segment === '*' || segment === key) next.push(...closure(pattern, n, i + 1));
      }
      return next;
    };
    const include = at.include === undefined ? undefined : step(this.includes, at.include);
    return this.settle(include, at.exclude.length === 0 ? at.exclude : step(this.excludes, at.exclude));
  }

  /** Whether this node (not only a part of it) is selected. */
  whole(at: FieldSelection): boolean {
    return at.include === undefined;
  }

  private settle(
    include: readonly (readonly [number, number])[] | undefined,
    exclude: readonly (readonly [number, number])[],
  ): FieldSelection | undefined {
    if (exclude.some(([n, i]) => i === this.excludes[n]!.length)) return undefined;
    if (include === undefined) return { include: undefined, exclude };
    if (include.some(([n, i]) => i === this.includes[n]!.length)) return { include: undefined, exclude };
    return include.length === 0 ? undefined : { include: dedupe(include), exclude: dedupe(exclude) };
  }
}

/** Position i of a pattern and the ones after it that `**` segments (matching nothing) let it reach. */
function closure(pattern: readonly string[], n: number, i: number): (readonly [number, number])[] {
  const out: (readonly [number, number])[] = [[n, i]];
  while (pattern[i] === '**') out.push([n, ++i]);
  return out;
}

function dedupe(states: readonly (readonly [number, number])[]): readonly (readonly [number, number])[] {
  const seen = new Set<string>();
  return states.filter(([n, i]) => {
    const id = `${n}:${i}`;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

/** Deep equality of JSON data, with an explicit stack instead of recursion. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  const stack: [unknown, unknown][] = [[a, b]];
  while (stack.length > 0) {
    const [x, y] = stack.pop()!;
    if (x === y) continue;
    if (Array.isArray(x) && Array.isArray(y)) {
      if (x.length !== y.length) return false;
      for (let i = 0; i < x.length; i++) stack.push([x[i], y[i]]);
      continue;
    }
    if (isRecord(x) && isRecord(y)) {
      const kx = Object.keys(x).filter((k) => x[k] !== undefined);
      const ky = Object.keys(y).filter((k) => y[k] !== undefined);
      if (kx.length !== ky.length) return false;
      for (const k of kx) {
        if (!Object.hasOwn(y, k)) return false;
        stack.push([x[k], y[k]]);
      }
      continue;
    }
    return false;
  }
  return true;
}

/**
 * A copy of JSON data cut at `maxDepth` levels (deeper parts become
 * {@link TOO_DEEP}), built without recursion, so JSON.stringify of the result
 * cannot overflow the stack.
 */
export function limitDepth(value: unknown, maxDepth = MAX_DEPTH): unknown {
  return selectFields(value, undefined, maxDepth);
}

/**
 * The selected part of JSON data: a copy (cut at `maxDepth` levels, as
 * {@link limitDepth}) without the fields the patterns leave out. A container
 * with nothing selected in it, or a plain value that is not itself selected,
 * is `undefined`; an array keeps its indexes (unselected items are
 * `undefined`, trailing ones dropped). Built without recursion.
 */
export function selectFields(value: unknown, fields: FieldSelector | readonly string[] | undefined, maxDepth = MAX_DEPTH): unknown {
  const selector = fields === undefined ? undefined : fields instanceof FieldSelector ? fields : new FieldSelector(fields);
  const at = selector ? selector.root : ALL;
  if (at === undefined) return undefined;
  return copySelected(value, selector, at, maxDepth);
}

const ALL: FieldSelection = { include: undefined, exclude: [] };

interface CopyFrame {
  readonly source: unknown;
  readonly depth: number;
  readonly at: FieldSelection;
  readonly assign: (v: unknown) => void;
  /** Partial containers: after their children, drop them if empty. */
  readonly finish?: () => void;
}

function copySelected(value: unknown, selector: FieldSelector | undefined, at: FieldSelection, maxDepth: number, startDepth = 0): unknown {
  const whole = (s: FieldSelection) => selector === undefined || (s.include === undefined && s.exclude.length === 0);
  if (typeof value !== 'object' || value === null) return selector === undefined || selector.whole(at) ? value : undefined;
  const root: { value: unknown } = { value: undefined };
  const stack: CopyFrame[] = [{ source: value, depth: startDepth, at, assign: (v) => (root.value = v) }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    if (frame.finish) {
      frame.finish();
      continue;
    }
    const { source, depth, assign } = frame;
    const partial = selector !== undefined && !selector.whole(frame.at);
    if (typeof source !== 'object' || source === null) {
      if (!partial) assign(source);
      continue;
    }
    if (depth >= maxDepth) {
      assign(TOO_DEEP);
      continue;
    }
    const childAt = (key: string): FieldSelection | undefined => (whole(frame.at) ? frame.at : selector!.child(frame.at, key));
    if (Array.isArray(source)) {
      const copy: unknown[] = new Array<unknown>(source.length);
      const needsTrim = !whole(frame.at);
      if (needsTrim) {
        stack.push({
          ...frame,
          finish: () => {
            let n = copy.length;
            while (n > 0 && copy[n - 1] === undefined) n--;
            copy.length = n;
            if (n > 0 || !partial) assign(copy);
          },
        });
      } else assign(copy);
      for (let i = source.length - 1; i >= 0; i--) {
        const child = childAt(String(i));
        if (child !== undefined) stack.push({ source: source[i], depth: depth + 1, at: child, assign: (v) => (copy[i] = v) });
      }
      continue;
    }
    // defineProperty, not assignment: a "__proto__" key stays data.
    const copy: Record<string, unknown> = {};
    if (!whole(frame.at)) stack.push({ ...frame, finish: () => (Object.keys(copy).length > 0 || !partial ? assign(copy) : undefined) });
    else assign(copy);
    const entries = Object.entries(source);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [k, item] = entries[i]!;
      const child = childAt(k);
      if (child === undefined || item === undefined) continue;
      stack.push({
        source: item,
        depth: depth + 1,
        at: child,
        assign: (v) =>
          v === undefined ? undefined : Object.defineProperty(copy, k, { value: v, enumerable: true, writable: true, configurable: true }),
      });
    }
  }
  return root.value;
}

/**
 * The selected fields that differ between two objects, in document order:
 * each with its path, its old value (absent when added) and its new value
 * (absent when removed). Values are copies of the selected part, cut at
 * `maxDepth` (safe to serialise). Subtrees that are the same reference are
 * skipped unvisited, and unselected ones are never entered, so the cost
 * follows the selected part of the objects, not their whole size. Iterative;
 * below `maxDepth` levels a differing subtree is one change whose values are
 * {@link TOO_DEEP}.
 *
 * Property (tested): applying the changes to `before` gives `after` on the
 * selected fields: `selectFields(apply(before, changes), fields)` equals `selectFields(after, fields)`.
 */
export function fieldChanges(before: unknown, after: unknown, options: FieldChangesOptions = {}): Change[] {
  const fields = options.fields;
  const selector = fields instanceof FieldSelector ? fields : fields?.length ? new FieldSelector(fields) : undefined;
  const maxDepth = options.maxDepth ?? MAX_DEPTH;
  const root = selector ? selector.root : ALL;
  const changes: Change[] = [];
  if (root === undefined) return changes;
  // Children are pushed in reverse so they pop in document order.
  const stack: { a: unknown; b: unknown; path: string; depth: number; at: FieldSelection }[] = [
    { a: before, b: after, path: '', depth: 0, at: root },
  ];
  const childAt = (at: FieldSelection, key: string) =>
    selector === undefined || (at.include === undefined && at.exclude.length === 0) ? at : selector.child(at, key);
  while (stack.length > 0) {
    const { a, b, path, depth, at } = stack.pop()!;
    if (a === b) continue;
    const records = isRecord(a) && isRecord(b);
    const arrays = !records && Array.isArray(a) && Array.isArray(b);
    if ((records || arrays) && depth >= maxDepth) {
      const same =
        selector === undefined
          ? jsonEqual(a, b)
          : jsonEqual(copySelected(a, selector, at, Infinity, depth), copySelected(b, selector, at, Infinity, depth));
      if (!same) changes.push({ path, old: TOO_DEEP, new: TOO_DEEP });
      continue;
    }
    if (records) {
      const children: { a: unknown; b: unknown; path: string; depth: number; at: FieldSelection }[] = [];
      for (const key of Object.keys(a)) {
        const child = childAt(at, key);
        if (child !== undefined) children.push({ a: a[key], b: b[key], path: join(path, key), depth: depth + 1, at: child });
      }
      for (const key of Object.keys(b)) {
        if (Object.hasOwn(a, key)) continue;
        const child = childAt(at, key);
        if (child !== undefined) children.push({ a: undefined, b: b[key], path: join(path, key), depth: depth + 1, at: child });
      }
      for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
      continue;
    }
    if (arrays) {
      for (let i = Math.max(a.length, b.length) - 1; i >= 0; i--) {
        const child = childAt(at, String(i));
        if (child === undefined) continue;
        stack.push({
          a: i < a.length ? a[i] : undefined,
          b: i < b.length ? b[i] : undefined,
          path: `${path}[${i}]`,
          depth: depth + 1,
          at: child,
        });
      }
      continue;
    }
    const x = a === undefined ? undefined : copySelected(a, selector, at, maxDepth, depth);
    const y = b === undefined ? undefined : copySelected(b, selector, at, maxDepth, depth);
    if (x === undefined && y === undefined) continue;
    if (x !== undefined && y !== undefined && jsonEqual(x, y)) continue;
    changes.push(x === undefined ? { path, new: y } : y === undefined ? { path, old: x } : { path, old: x, new: y });
  }
  return changes;
}
