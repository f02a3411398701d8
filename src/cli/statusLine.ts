/** Clears the terminal's current line: back to its start, then erase it. */
const CLEAR = '\r\x1b[2K';

/**
 * stderr's lines and, on a TTY, its status line (`syncing 3/5 resources, …`), rewritten in place. A line of its own
 * written while the status is on screen clears it first (it was appended to the status, audit35); the session's next
 * tick redraws the status below it. The status is cut to one character short of the width: a longer one wraps, and
 * `\r\x1b[2K` then erases only its last row, leaving the others on screen at every redraw.
 */
export class StatusLine {
  private shown = false;
  private readonly write: (text: string) => void;
  /** The terminal's width now (it may be resized); undefined when unknown: nothing is cut. */
  private readonly columns: () => number | undefined;

  constructor(write: (text: string) => void, columns: () => number | undefined) {
    this.write = write;
    this.columns = columns;
  }

  /** A line of its own (a problem, progress, the summary), below a status line on screen, which it replaces. */
  line(text: string): void {
    const clear = this.shown ? CLEAR : '';
    this.shown = false;
    this.write(`${clear}${text}\n`);
  }

  /**
   * Another stream (stdout's change lines) is about to write on the terminal the status is shown on: the status is
   * cleared first, or the line would land on its end (audit38); the next tick redraws it below.
   */
  clearForOther(): void {
    if (!this.shown) return;
    this.shown = false;
    this.write(CLEAR);
  }

  /** Rewrites the status line (`''` clears it). */
  status(text: string): void {
    const width = this.columns();
    // By code point (no surrogate half); a wide character (CJK, emoji) may still take two columns.
    const cut =
      width !== undefined && width > 1
        ? Array.from(text)
            .slice(0, width - 1)
            .join('')
        : text;
    this.shown = cut !== '';
    this.write(`${CLEAR}${cut}`);
  }
}
