/**
 * The checks of what a caller hands an informer, where it enters (`informer()`, `shardedInformer()`, the factory, the
 * dynamic factory's `watch`) and before anything is built: a JavaScript caller (or a cast) that gives a wrong type
 * would otherwise get a silently wrong cache (`namespace: ['a', 'b']` lists namespace "a,b", `namespaces: 'shop'`
 * watches "s", "h", "o", "p", a selector object is sent as `[object Object]` and refused forever). Thrown as a
 * `TypeError` naming the option and what was given, as `leaderElection()` and `sharding()` do.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { KubeObject } from '../0-model/objects.ts';
import { resourceName, type Resource } from '../0-model/resources.ts';
import { isListWatch, type ListWatch } from '../1-transport/listWatch.ts';
import type { HttpTransportOptions } from '../1-transport/http/options.ts';
import type { Http2Options } from '../1-transport/http2/health.ts';
import { checkHttpOptionNames } from '../1-transport/http/optionNames.ts';
import type { ListAndWatchOptions } from '../2-source/listAndWatch.ts';
import { checkIndexers } from '../4-store/indexing.ts';
import { BACKOFF_NUMERIC_OPTIONS, NUMERIC_OPTIONS, checkNumbers } from '../2-source/checkReflectorOptions.ts';
import type { BackoffOptions } from '../2-source/backoff.ts';
import { checkOptionNames, described } from '../util/optionNames.ts';
import { OPTION_SHARING } from './sharing.ts';

/** An array, a Set or any other iterable (not a string) of strings: what `namespaces` takes (it is spread into a Set). */
const isStrings = (value: unknown): boolean =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as Partial<Iterable<unknown>>)[Symbol.iterator] === 'function' &&
  [...(value as Iterable<unknown>)].every((v) => typeof v === 'string');

/** Why a selector option is wrong, with the form it takes. */
const selectorHint = (name: string) =>
  name === 'labelSelector' ? `a selector string, e.g. 'app=web,tier!=db'` : `a selector string, e.g. 'status.phase=Running'`;

const HTTP_NUMERIC_OPTIONS = [
  'requestTimeoutMs',
  'tlsHandshakeTimeoutMs',
  'listIdleTimeoutMs',
  'minBodyBytesPerSecond',
  'maxLineBytes',
  'maxListBytes',
  'maxListTotalBytes',
  'maxErrorBodyBytes',
  'maxDocumentBytes',
  'http1IdleTimeoutMs',
] as const;
const NESTED_NUMERIC_OPTIONS: Readonly<Record<string, readonly string[]>> = {
  backoff: BACKOFF_NUMERIC_OPTIONS,
  http: HTTP_NUMERIC_OPTIONS,
};
const HTTP2_NUMERIC_OPTIONS = ['readIdleMs', 'pingTimeoutMs', 'idleTimeoutMs', 'maxConnections'] as const;

/**
 * The lists above against the options' own types, so a numeric option added to a type is checked or the build fails
 * (one home: the type says what is a number; audit23 found options no check covered).
 */
type NumericKeys<T> = { [K in keyof T]-?: NonNullable<T[K]> extends number ? K : never }[keyof T];
type Unchecked<T, Listed> = Exclude<NumericKeys<T>, Listed>;
/** An error naming the option left out (`Type '"maxDocumentBytes"' does not satisfy the constraint 'never'`). */
type NoneLeft<T extends never> = T;
type EveryNumberChecked = [
  NoneLeft<Unchecked<ListAndWatchOptions<unknown>, (typeof NUMERIC_OPTIONS)[number]>>,
  NoneLeft<Unchecked<NonNullable<ListAndWatchOptions<unknown>['backoff']>, (typeof BACKOFF_NUMERIC_OPTIONS)[number]>>,
  // Every backoff option, numeric or not: the list is also the names `checkInformerOptionNames` knows.
  NoneLeft<Exclude<keyof BackoffOptions, (typeof BACKOFF_NUMERIC_OPTIONS)[number]>>,
  NoneLeft<Unchecked<HttpTransportOptions, (typeof HTTP_NUMERIC_OPTIONS)[number]>>,
  NoneLeft<Unchecked<Http2Options, (typeof HTTP2_NUMERIC_OPTIONS)[number]>>,
];

/**
 * The informer options that decide what is read, each of its type, else a `TypeError` naming the option, what was given
 * and the right form. `caller` starts the message (`informer`, `informerFactory`, …).
 */
export function checkInformerOptions(caller: string, options: unknown): void {
  if (options === undefined) return;
  if (typeof options !== 'object' || options === null || Array.isArray(options))
    throw new TypeError(`${caller}: options must be an object, got ${described(options)}`);
  const o = options as Record<string, unknown>;
  const wrong = (name: string, expected: string) => new TypeError(`${caller}: \`${name}\` must be ${expected}, got ${described(o[name])}`);
  // null is "none", as undefined (the transport took any falsy namespace or selector as none before these checks).
  if (o.namespace != null && typeof o.namespace !== 'string')
    throw wrong('namespace', isStrings(o.namespace) ? 'one namespace as a string (several: `namespaces`)' : 'a string');
  if (o.namespaces !== undefined && !isStrings(o.namespaces))
    throw wrong(
      'namespaces',
      typeof o.namespaces === 'string' ? 'an array of strings (one: `namespace`, or [name])' : 'an array of strings',
    );
  for (const name of ['labelSelector', 'fieldSelector'])
    if (o[name] != null && typeof o[name] !== 'string') throw wrong(name, selectorHint(name));
  // Infinity is off, as 0 is; NaN is not >= 0.
  if (o.resyncPeriod !== undefined && !(typeof o.resyncPeriod === 'number' && o.resyncPeriod >= 0))
    throw wrong('resyncPeriod', 'a number of milliseconds (0: no resync)');
  checkNumbers(caller, o, NUMERIC_OPTIONS, '');
  for (const [name, members] of Object.entries(NESTED_NUMERIC_OPTIONS)) {
    const nested = o[name];
    if (nested === undefined) continue;
    if (typeof nested !== 'object' || nested === null || Array.isArray(nested)) throw wrong(name, 'an object');
    checkNumbers(caller, nested as Record<string, unknown>, members, `${name}.`);
  }
  const http2 = (o.http as Record<string, unknown> | undefined)?.http2;
  if (http2 !== undefined) {
    if (typeof http2 !== 'object' || http2 === null || Array.isArray(http2))
      throw new TypeError(`${caller}: \`http.http2\` must be an object, got ${described(http2)}`);
    checkNumbers(caller, http2 as Record<string, unknown>, HTTP2_NUMERIC_OPTIONS, 'http.http2.');
  }
  if (o.transform !== undefined && typeof o.transform !== 'function') throw wrong('transform', 'a function');
  checkIndexers(caller, o.indexers);
  if (o.delivery !== undefined && o.delivery !== 'delta-fifo' && o.delivery !== 'in-order')
    throw wrong('delivery', `'delta-fifo' or 'in-order'`);
}

/**
 * A resource descriptor is an object with the API's names and a zod schema (what `customResource()` makes); else a
 * `TypeError`. Without the schema every object would fail validation (`reading 'safeParse'`) and the informer would
 * sync an empty cache.
 */
export function checkResource(caller: string, resource: unknown): asserts resource is Resource<KubeObject> {
  if (typeof resource !== 'object' || resource === null)
    throw new TypeError(`${caller}: expected a resource (Pod, Deployment, customResource({ … })), got ${described(resource)}`);
  const r = resource as Partial<Record<keyof Resource, unknown>>;
  if (typeof r.plural !== 'string' || typeof r.version !== 'string' || typeof r.group !== 'string')
    throw new TypeError(`${caller}: a resource needs a group, a version and a plural as strings (build it with customResource())`);
  const schema = r.schema as { safeParse?: unknown } | undefined;
  if (typeof schema?.safeParse !== 'function')
    throw new TypeError(
      `${caller}: the resource ${resourceName(r as Resource)} has no schema: build it with customResource({ group, version, plural, kind, ` +
        'namespaced }) (without a schema of your own its objects are unstructured KubeObjects)',
    );
}

/**
 * A `ListWatch` given instead of a KubeConfig reads what it was built to read: its requests carry no selector (they
 * are bound where it is made, as `httpListWatch(kc, { resource, labelSelector })` does), so a `labelSelector` or
 * `fieldSelector` given beside it would never apply and the cache would hold more than asked, silently. Refused
 * (a `TypeError`) rather than filtered on the client: a field selector's fields are the server's to define per
 * resource, and half a selector applied is worse than none. (`namespace` is filtered on the client: a key says it.)
 */
export function checkListWatchSelectors(
  caller: string,
  source: KubeConfig | ListWatch,
  options: { readonly labelSelector?: string; readonly fieldSelector?: string },
): void {
  if (!isListWatch(source)) return;
  for (const name of ['labelSelector', 'fieldSelector'] as const)
    if (options[name])
      throw new TypeError(
        `${caller}: \`${name}\` (${described(options[name])}) does not apply to a ListWatch source, which reads what it was built to read: ` +
          'bind the selector where the ListWatch is made (httpListWatch(kc, { resource, labelSelector }) does), or filter its objects',
      );
}

/** Every backoff option is a number: the numeric list is the whole list (`EveryNumberChecked` says so). */
const BACKOFF_OPTION_NAMES: readonly string[] = BACKOFF_NUMERIC_OPTIONS;

/** `informer()`'s options (`OPTION_SHARING` is the record over every one of them). */
const INFORMER_OPTION_NAMES: readonly string[] = Object.keys(OPTION_SHARING);
/**
 * The informer options that are per informer, not a factory's default: from JavaScript they were spread into every
 * informer without being part of its identity (`identityOf` reads the request's). `indexers`, which `FactoryOptions`
 * leaves out too, is let through: a `'match'` option, compared as the informer has it (spec/5-informer/optionWalk).
 */
const PER_INFORMER = ['namespaces', 'labelSelector', 'fieldSelector'];
const FACTORY_OPTION_NAMES = INFORMER_OPTION_NAMES.filter((name) => !PER_INFORMER.includes(name));

/**
 * The option names of `informer()`, `shardedInformer()`, `factory.informer()` (`scope: 'informer'`) or of a factory's
 * defaults (`'factory'`), and of their nested `http`, `http.http2` and `backoff`, by {@link checkOptionNames}. Apart
 * from `checkInformerOptions` (the values' types), so that each says one thing.
 */
export function checkInformerOptionNames(caller: string, options: unknown, scope: 'informer' | 'factory' = 'informer'): void {
  if (typeof options !== 'object' || options === null) return;
  const perInformer = (name: string) =>
    scope === 'factory' && PER_INFORMER.includes(name) ? `it is no factory default: give it to each factory.informer()` : undefined;
  checkOptionNames(caller, options, scope === 'factory' ? FACTORY_OPTION_NAMES : INFORMER_OPTION_NAMES, '', perInformer);
  const o = options as { readonly http?: unknown; readonly backoff?: unknown };
  checkHttpOptionNames(caller, o.http, 'http.');
  checkOptionNames(caller, o.backoff, BACKOFF_OPTION_NAMES, 'backoff.');
}
