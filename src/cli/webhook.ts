import { jsonLine } from './format.ts';
import type { EventRecord } from './record.ts';
import { HttpSink, type HttpSinkOptions, type SinkSummary } from './sink.ts';
import type { SinkTarget } from './sinkUrl.ts';

/** Somewhere events go besides stdout. */
export interface EventSink {
  /** `webhook https://host`: the kind and the origin, nothing more of the URL (`webhook #2 https://host` when two share it). */
  readonly label: string;
  /** Queues one event (never blocks, never throws for a network problem). `line` is its pretty form. */
  accept(record: EventRecord, line: string): void;
  /** Drains until `deadline` (ms since the epoch), then gives up what is left; never rejects. */
  close(deadline: number): Promise<SinkSummary>;
  /** What it did so far, at once (what is queued or in flight counts as unsent): said when a second Ctrl-C cuts the flush short. */
  summary(): SinkSummary;
}

export type SinkTuning = Pick<HttpSinkOptions, 'label' | 'maxQueueBytes' | 'reportIntervalMs' | 'timeoutMs' | 'backoff'>;

/** `--webhook`: one POST per event, its body the event's JSON record (as `-o json` prints it). */
export function webhookSink(target: SinkTarget, report: (line: string) => void, tuning: SinkTuning = {}): EventSink {
  const sink = new HttpSink({ ...tuning, kind: 'webhook', target, maxBatch: 1, encode: ([item]) => item ?? '', report });
  return {
    label: sink.label,
    accept: (record) => sink.send(jsonLine(record)),
    close: (deadline) => sink.close(deadline),
    summary: () => sink.summary(),
  };
}
