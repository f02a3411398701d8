import { randomBytes } from 'node:crypto';
import { DIFF_NOISE } from '../diff.ts';
import { type InformerEvent, type KubeObject } from '../index.ts';
import { joinKey } from '../0-model/keys.ts';
import { secretHiding } from '../0-model/redact.ts';
import { MAX_DEPTH, diffObjects, formatChanges, limitDepth, type Change } from './diff.ts';
import { clock, printable, timestamp } from './format.ts';

/** One line per event, for `--output json` and webhooks. */
export interface EventRecord {
  /** RFC 3339: local time with its offset, or UTC (`Z`) with `--utc`. */
  readonly time: string;
  readonly type: 'ADDED' | 'UPDATED' | 'DELETED';
  readonly resource: string;
  readonly namespace?: string;
  readonly name: string;
  readonly resourceVersion?: string;
  readonly diff?: readonly Change[];
  readonly finalStateUnknown?: boolean;
  readonly object?: unknown;
}

export interface RecordOptions {
  readonly utc: boolean;
  /** Applied to both versions before anything is compared or shown (Secret redaction). */
  readonly redact?: (object: KubeObject) => KubeObject;
  /** Field patterns: diff only these (`--fields`), and leave these out besides the noise (`--ignore`). */
  readonly fields?: readonly string[];
  readonly ignore?: readonly string[];
}

/**
 * What shows the objects of a resource: the redactor of its Secrets' objects (all of them when `secret`, its resource's
 * values are secret; else those with `kind: Secret` or shaped like one, and any object's last-applied annotation when it
 * is a Secret's: secretHiding, 0-model/redact.ts), undefined when values are shown as they are.
 */
export type SecretRedaction = (secret: boolean) => ((object: KubeObject) => KubeObject) | undefined;

/**
 * The one home of "print a Secret", for `watch` and `replay`: a Secret's values redacted (`<redacted:HASH>`, a keyed
 * hash under a key drawn here, one per run: equal values, equal hashes) unless `showSecretValues` (`--show-secret-values`).
 */
export function secretRedaction(showSecretValues: boolean | undefined): SecretRedaction {
  if (showSecretValues) return () => undefined;
  const key = randomBytes(32);
  const all = secretHiding(true, key).hide;
  // A resource not known to hold Secrets may still show one (a trace's Secret under another name): each object decides.
  const some = secretHiding(undefined, key).hide;
  return (secret) => (secret ? all : some);
}

/** The record for an event, or undefined when there is nothing to show (a resync, an update that changed only noise). */
export function toRecord(resource: string, event: InformerEvent<KubeObject>, now: Date, options: RecordOptions): EventRecord | undefined {
  const { metadata } = event.object;
  const base = {
    time: timestamp(now, options.utc),
    resource,
    ...(metadata.namespace ? { namespace: metadata.namespace } : {}),
    name: metadata.name,
    ...(metadata.resourceVersion ? { resourceVersion: metadata.resourceVersion } : {}),
  };
  const shown = (object: KubeObject) => (options.redact ? options.redact(object) : object);
  switch (event.type) {
    case 'added':
      return { ...base, type: 'ADDED', object: limitDepth(shown(event.object)) };
    case 'updated': {
      if (event.resync) return undefined;
      const diff = diffObjects(
        shown(event.oldObject),
        shown(event.object),
        [...DIFF_NOISE, ...(options.ignore ?? [])],
        MAX_DEPTH,
        options.fields,
      );
      return diff.length === 0 ? undefined : { ...base, type: 'UPDATED', diff };
    }
    case 'deleted':
      return { ...base, type: 'DELETED', ...(event.finalStateUnknown ? { finalStateUnknown: true } : {}) };
  }
}

/** `12:03:04 UPDATED pods shop/web-1  spec.replicas: 2 → 3`, with no control characters. */
export function prettyLine(r: EventRecord, at: Date, utc: boolean): string {
  const key = joinKey(r.namespace ?? '', r.name);
  const head = `${clock(at, utc)} ${r.type.padEnd(7)} ${r.resource} ${key}`;
  if (r.type === 'UPDATED' && r.diff) return printable(`${head}  ${formatChanges(r.diff)}`);
  if (r.type === 'DELETED' && r.finalStateUnknown) return printable(`${head}  (deletion seen on relist; final state unknown)`);
  return printable(head);
}
