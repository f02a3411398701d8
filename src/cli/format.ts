import { capMessage } from '../0-model/errors.ts';

/**
 * Text for people and pipes. Names, messages and values come from the server
 * and may be hostile: nothing reaches a terminal with control characters in it.
 */

/**
 * C0 and C1 controls and DEL (`Cc`), every bidirectional control that reorders what a terminal shows
 * (Unicode's `Bidi_Control`: U+061C, U+200E-U+200F, U+202A-U+202E, U+2066-U+2069), and the line and
 * paragraph separators (`Zl`, `Zp`: U+2028, U+2029) that break a line where none should be.
 */
const CONTROL = /[\p{Cc}\p{Bidi_Control}\p{Zl}\p{Zp}]/gu;

/** The text with every control character removed (so an escape sequence cannot reach the terminal). */
export function printable(text: string): string {
  return text.replace(CONTROL, '');
}

/** Characters JSON.stringify leaves raw that a terminal or a JavaScript reader may act on. */
const JSON_UNSAFE = /[\u007f-\u009f\p{Bidi_Control}\p{Zl}\p{Zp}]/gu;

/**
 * One line of JSON with every control and bidi character escaped (`\u009b`
 * is CSI to many terminals; JSON.stringify would leave it raw). Outside
 * strings JSON text is ASCII, so escaping is always inside a string.
 */
export function jsonLine(value: unknown): string {
  const text = JSON.stringify(value);
  if (text === undefined) throw new TypeError('not JSON-serialisable');
  return text.replace(JSON_UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** `1 object`, `2 objects`. */
export function count(n: number, noun: string, plural = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : plural}`;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** `HH:MM:SS` in local time (honours TZ), or UTC. */
export function clock(date: Date, utc: boolean): string {
  return utc
    ? `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}`
    : `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

/** RFC 3339 with milliseconds: `…Z` in UTC, or local time with its offset (`…+09:00`). */
export function timestamp(date: Date, utc: boolean): string {
  if (utc) return date.toISOString();
  const offset = -date.getTimezoneOffset();
  const sign = offset < 0 ? '-' : '+';
  const abs = Math.abs(offset);
  return (
    `${pad(date.getFullYear(), 4)}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}` +
    `T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}` +
    `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`
  );
}

/** Longer messages (a server's Status can say megabytes) are cut to this many characters. */
export const MAX_MESSAGE_CHARS = 1000;

/** An error's message, for one line: no stack, no control characters, at most {@link MAX_MESSAGE_CHARS} characters (`capMessage`). */
export function messageOf(error: unknown): string {
  return capMessage(printable(error instanceof Error ? error.message : String(error)), { maxChars: MAX_MESSAGE_CHARS, tail: 'characters' });
}
