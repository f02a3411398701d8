import { jsonLine } from './format.ts';
import { HttpSink } from './sink.ts';
import type { SinkTarget } from './sinkUrl.ts';
import type { EventSink, SinkTuning } from './webhook.ts';

/** Slack's message text allows about 40,000 characters; batches stay well below. */
const MAX_LINES = 20;

/** Slack reads `&`, `<` and `>` as markup (`<!channel>` pings everyone): they are escaped, as Slack asks. */
export function slackEscape(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * `--slack`: a Slack incoming webhook. One readable line per change, batched:
 * whatever waits while a message is in flight goes in the next one (up to 20
 * lines), which also keeps within Slack's one-message-a-second guidance.
 */
export function slackSink(target: SinkTarget, report: (line: string) => void, tuning: SinkTuning = {}): EventSink {
  const sink = new HttpSink({
    ...tuning,
    kind: 'slack',
    target,
    maxBatch: MAX_LINES,
    encode: (lines) => jsonLine({ text: lines.join('\n') }),
    report,
  });
  return {
    label: sink.label,
    accept: (_record, line) => sink.send(slackEscape(line)),
    close: (deadline) => sink.close(deadline),
    summary: () => sink.summary(),
  };
}
