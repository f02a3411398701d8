import { InformerError } from '../0-model/errors.ts';
import type { KubeObject } from '../0-model/objects.ts';
import type { InformerOptions } from './informerFromSource.ts';

/**
 * What a factory does with each option of a request for an informer it may already hold:
 *
 * - `'identity'`: part of what the informer is: a request that differs gets another informer
 *   (another connection, another cache);
 * - `'match'`: how the informer behaves or reads: a request that states it must state what the
 *   shared informer has (a request that leaves it out takes the shared informer's); otherwise
 *   `informer()` throws a `Config` error naming both requests.
 *
 * A `Record` over every option, so a new option of `informer()` is a type error here until it is
 * decided (docs/api.md, "Factories: one informer per resource, namespace and selectors").
 */
export const OPTION_SHARING: Readonly<Record<keyof InformerOptions<KubeObject>, 'identity' | 'match'>> = {
  namespace: 'identity',
  namespaces: 'identity',
  labelSelector: 'identity',
  fieldSelector: 'identity',
  maxNamespaceWatches: 'match',
  resyncPeriod: 'match',
  indexers: 'match',
  transform: 'match',
  http: 'match',
  delivery: 'match',
  reportUnobservedErrors: 'match',
  pageSize: 'match',
  watchList: 'match',
  minWatchTimeoutSeconds: 'match',
  idleTimeoutMs: 'match',
  busyIdleTimeoutMs: 'match',
  stallMarginMs: 'match',
  bookmarkTimeoutMs: 'match',
  maxListPages: 'match',
  maxListObjects: 'match',
  maxListDurationMs: 'match',
  backoff: 'match',
  scheduler: 'match',
  random: 'match',
};

/** The value an informer takes for an option left out, where leaving it out and stating the default are the same request. */
const DEFAULTS: Partial<Record<keyof InformerOptions<KubeObject>, unknown>> = {
  resyncPeriod: 0,
  delivery: 'delta-fifo',
  indexers: {},
  reportUnobservedErrors: true,
};

const HTTP_DEFAULTS: Readonly<Record<string, unknown>> = { lazyDecode: false, encoding: 'json' };

function isPlainObject(value: unknown): value is Readonly<Record<string, unknown>> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * Where `asked` states something `held` does not have: the path of the first difference, or
 * undefined when `held` covers it. A plain object is compared member by member (members left out
 * or undefined ask for nothing), everything else by identity (functions, schedulers) or value.
 */
function firstDifference(
  held: unknown,
  asked: unknown,
  path: string,
  defaults: Readonly<Record<string, unknown>> = {},
): string | undefined {
  if (asked === undefined || Object.is(held, asked)) return undefined;
  if (isPlainObject(asked) && (held === undefined || isPlainObject(held))) {
    const holds: Readonly<Record<string, unknown>> = held ?? {};
    for (const [key, value] of Object.entries(asked)) {
      const found = firstDifference(holds[key] ?? defaults[key], value, `${path}.${key}`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (Array.isArray(asked) && Array.isArray(held) && asked.length === held.length) {
    for (let i = 0; i < asked.length; i++) {
      const found = firstDifference(held[i], asked[i], `${path}[${i}]`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  return path;
}

/** The member at `path` (`http.lazyDecode`, `indexers.byOwner`) of a set of options, for a message. */
function valueAt(options: unknown, path: string): unknown {
  let value: unknown = options;
  for (const part of path.split(/\.|\[|\]\.?/).filter(Boolean)) {
    value = isPlainObject(value) || Array.isArray(value) ? (value as Record<string, unknown>)[part] : undefined;
  }
  return value;
}

function describe(value: unknown, fallback: unknown): string {
  if (value === undefined) return fallback === undefined ? 'left out' : `left out (${describe(fallback, undefined)})`;
  if (typeof value === 'function') return `the function ${value.name === '' ? '(anonymous)' : value.name}`;
  if (typeof value === 'string') return `'${value}'`;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** A resync period that means no resync (0, negative, NaN, Infinity: see `resync`) as 0, so that any two of them match. */
function resyncOff(period: unknown): unknown {
  return typeof period === 'number' && !(period > 0 && period !== Infinity) ? 0 : period;
}

/**
 * Throws a `Config` {@link InformerError} when `asked` (a later request for the informer `held`
 * was made with) states a `'match'` option otherwise than `held` does: the message names the
 * informer, the option, and both requests' values.
 */
export function checkSharedOptions(what: string, held: InformerOptions<KubeObject>, asked: InformerOptions<KubeObject>): void {
  for (const [option, sharing] of Object.entries(OPTION_SHARING) as [keyof InformerOptions<KubeObject>, 'identity' | 'match'][]) {
    if (sharing !== 'match') continue;
    const defaultValue = DEFAULTS[option];
    const [heldValue, askedValue] =
      option === 'resyncPeriod' ? [resyncOff(held[option]), resyncOff(asked[option])] : [held[option], asked[option]];
    const path = firstDifference(heldValue ?? defaultValue, askedValue, option, option === 'http' ? HTTP_DEFAULTS : {});
    if (path === undefined) continue;
    const fallback = option === 'http' ? HTTP_DEFAULTS[path.slice('http.'.length)] : path === option ? defaultValue : undefined;
    const [before, after] = [valueAt(held, path), valueAt(asked, path)];
    const twin =
      typeof before === 'function' && typeof after === 'function' && before.name === after.name ? ' (another function of that name)' : '';
    throw new InformerError(
      'Config',
      `the factory's informer for ${what} was made with ${path} ${describe(before, fallback)}; ` +
        `a later request for it asks for ${describe(after, undefined)}${twin}. ` +
        'Only namespace, namespaces and selectors make another informer: state the same, leave it out, or use a second factory',
      { phase: 'config' },
    );
  }
}
