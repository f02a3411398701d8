/**
 * `record(listWatch, writer)`: a ListWatch that passes everything through and writes what its
 * source saw to a trace (see format.ts).
 */
import { Observable } from 'rxjs';
import { InformerError } from '../../0-model/errors.ts';
import { secretHiding } from '../../0-model/redact.ts';
import type { LinedFrame, ListPage, ListWatch, RawWatchEvent, WatchFrame } from '../listWatch.ts';
import { canonicalOptions, recordedError, type TraceRequestLine } from './format.ts';
import type { TraceWriter } from './writer.ts';

type WithoutAt<T> = T extends unknown ? Omit<T, 'at'> : never;
type Outcome = WithoutAt<TraceRequestLine>;

export interface RecordOptions {
  /** The resource's name in the trace (`pods`, `deployments.apps`); needed when a trace holds several. */
  readonly resource?: string;
  /**
   * Whether the resource's objects are Secrets. Default: when `resource` is `secrets`; otherwise an object is taken
   * for a Secret by its `kind`, or, without one (list items), by its shape (a string `type` beside `data` or
   * `stringData`). `false`: never redact by shape (a resource whose objects look like Secrets and are not). Whatever
   * it says, a last-applied annotation whose JSON says `"kind":"Secret"` is hidden (a metadata-only Secret's).
   */
  readonly secret?: boolean;
  /**
   * Redact Secret values (`data`, `stringData`, the last-applied annotation) as `rx-informer watch`
   * does, with a keyed hash (equal values stay equal within the recording). Default true;
   * `false` writes them in clear: say so explicitly.
   */
  readonly redact?: boolean;
}

/**
 * The redaction of one recorder: Secrets (by resource, or by `kind` or shape) lose their values, any other object a
 * Secret's last-applied annotation (a metadata-only Secret's); see `secretHiding`.
 */
interface Redaction {
  readonly redact: (object: unknown) => unknown;
  /** Whether a watch line may be written as it came: its event is not one `redact` changes. */
  readonly asIs: (event: RawWatchEvent) => boolean;
}

function redactionFor(options: RecordOptions): Redaction {
  if (options.redact === false) return { redact: (object) => object, asIs: () => true };
  // Told it records Secrets or not (`secret`), or else by the resource's name: `secrets` are, anything else may be.
  const { hides, hide } = secretHiding(options.secret ?? (options.resource === 'secrets' || undefined));
  return { redact: hide, asIs: (event) => !hides(event.object) };
}

/**
 * Wraps `source`: every subscription is a request line, what it emits a line each (`write`) and is passed on
 * as `value` makes it, its end a line.
 */
function recorded<W, V>(
  writer: TraceWriter,
  request: (id: number) => Outcome,
  source: Observable<W>,
  write: (emitted: W, id: number) => void,
  value: (emitted: W) => V,
): Observable<V> {
  return new Observable<V>((subscriber) => {
    const id = writer.nextId();
    writer.line(request(id));
    let ended = false;
    const inner = source.subscribe({
      next: (emitted) => {
        write(emitted, id);
        subscriber.next(value(emitted));
      },
      error: (error: unknown) => {
        ended = true;
        writer.line({ type: 'failure', id, error: recordedError(error) });
        subscriber.error(error);
      },
      complete: () => {
        ended = true;
        writer.line({ type: 'end', id, how: 'complete' });
        subscriber.complete();
      },
    });
    return () => {
      inner.unsubscribe();
      if (!ended) writer.line({ type: 'end', id, how: 'unsubscribe' });
    };
  });
}

const same = <T>(value: T): T => value;

/**
 * A ListWatch that passes every request of `listWatch` through and writes to `writer` what its
 * source saw: each list request and its page, each watch request and its frames, each failure with
 * its reason and the server's Status, each end, stamped with the writer's clock. Secret values are
 * redacted unless `redact: false`. Members of `listWatch` other than `list` and `watch` pass through.
 *
 * ```ts
 * const writer = traceWriter({ write: (line) => out.write(line), resources: ['pods'], maxBytes: 50e6 });
 * const pods = informer(record(httpListWatch(kc, { resource: Pod }), writer, { resource: 'pods' }), Pod);
 * ```
 */
export function record(listWatch: ListWatch, writer: TraceWriter, options: RecordOptions = {}): ListWatch {
  const { redact, asIs } = redactionFor(options);
  const resource = options.resource === undefined ? {} : { resource: options.resource };
  const page = (p: ListPage, id: number) =>
    writer.line({
      type: 'page',
      id,
      resourceVersion: p.resourceVersion,
      ...(p.continue === undefined ? {} : { continue: p.continue }),
      ...(p.remainingItemCount === undefined ? {} : { remainingItemCount: p.remainingItemCount }),
      items: p.items.map(redact),
      ...(p.notice === undefined ? {} : { notice: recordedError(p.notice) }),
    });
  const frame = (f: WatchFrame, id: number) =>
    writer.line(
      f instanceof InformerError
        ? { type: 'notice', id, error: recordedError(f) }
        : { type: 'event', id, event: { type: f.type, object: redact(f.object) } },
    );
  // A line the transport read whole is written as it came, unless it must be redacted: no second serialization.
  const lined = ({ frame: f, line, bytes }: LinedFrame, id: number) =>
    line !== undefined && writer.eventLine && !(f instanceof InformerError) && asIs(f) ? writer.eventLine(id, line, bytes) : frame(f, id);
  const list: ListWatch['list'] = (o) =>
    recorded(writer, (id) => ({ type: 'list', id, ...resource, options: canonicalOptions(o) }), listWatch.list(o), page, same);
  const watch: ListWatch['watch'] = (o) => {
    const request = (id: number): Outcome => ({ type: 'watch', id, ...resource, options: canonicalOptions(o) });
    return listWatch.watchLines
      ? recorded(writer, request, listWatch.watchLines(o), lined, (l) => l.frame)
      : recorded(writer, request, listWatch.watch(o), frame, same);
  };
  return passThrough(listWatch, { list, watch });
}

/**
 * `inner` with `list` and `watch` replaced: every other member (a later optional one too) is the inner's own,
 * but `watchLines`, which is `replaced`'s (absent unless given: the inner's would bypass the new `watch`).
 */
export function passThrough(inner: ListWatch, replaced: ListWatch): ListWatch {
  return new Proxy(inner, {
    get(target, property) {
      if (property === 'list') return replaced.list;
      if (property === 'watch') return replaced.watch;
      if (property === 'watchLines') return replaced.watchLines;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
