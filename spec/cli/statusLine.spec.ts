/**
 * stderr on a TTY (src/cli/statusLine.ts, as cli.ts uses it): the status line is rewritten in place, a problem line
 * written meanwhile starts on a line of its own, and a status wider than the terminal does not leave stale rows.
 * audit35: under `script` at 80 columns the screen read
 * `syncing 1/2 resources, 60001 objects (waiting for configmaps in ns-01)! configmaps in ns-01: ServerError: etcd is sad`,
 * and a 134-character status at 50 columns left two stale rows at every redraw.
 * The screen here is a small model of a terminal: rows of `columns` cells, wrapping, `\r`, `\n` and `ESC[2K` (erase the row).
 */
import { describe, expect, it } from 'vitest';
import { StatusLine } from '../../src/cli/statusLine.ts';

class Screen {
  readonly rows: string[][] = [[]];
  private row = 0;
  private col = 0;
  readonly columns: number;
  constructor(columns: number) {
    this.columns = columns;
  }

  write(text: string): void {
    for (let i = 0; i < text.length; i++) {
      if (text.startsWith('\x1b[2K', i)) {
        this.rows[this.row] = [];
        i += 3;
      } else if (text[i] === '\r') this.col = 0;
      else if (text[i] === '\n') this.newRow();
      else {
        if (this.col === this.columns) this.newRow();
        this.rows[this.row]![this.col++] = text[i]!;
      }
    }
  }

  private newRow(): void {
    this.row++;
    this.col = 0;
    this.rows[this.row] ??= [];
  }

  /** What the screen shows, row by row (unwritten cells as spaces, trailing ones trimmed). */
  get shown(): string[] {
    return this.rows.map((r) =>
      Array.from(r, (c) => c ?? ' ')
        .join('')
        .trimEnd(),
    );
  }
}

const on = (columns: number | undefined) => {
  const screen = new Screen(columns ?? 1_000);
  return {
    screen,
    stderr: new StatusLine(
      (text) => screen.write(text),
      () => columns,
    ),
  };
};

describe('stderr on a TTY: the status line and the lines of their own', () => {
  it('a problem line while the status is on screen replaces it, on a line of its own; the next tick redraws the status', () => {
    const { screen, stderr } = on(80);
    stderr.status('syncing 1/2 resources, 0 objects (waiting for configmaps in ns-01)');
    stderr.line('! configmaps in ns-01: ServerError: etcd is sad');
    expect(screen.shown).toEqual(['! configmaps in ns-01: ServerError: etcd is sad', '']);
    stderr.status('syncing 1/2 resources, 5 objects (waiting for configmaps in ns-01)');
    stderr.line('! configmaps in ns-01: ServerError: etcd is sad');
    stderr.status('syncing 1/2 resources, 5 objects (waiting for configmaps in ns-01)');
    expect(screen.shown).toEqual([
      '! configmaps in ns-01: ServerError: etcd is sad',
      '! configmaps in ns-01: ServerError: etcd is sad',
      'syncing 1/2 resources, 5 objects (waiting for configmaps in ns-01)',
    ]);
  });

  it('a change line on stdout (the same terminal) clears the status first: on a line of its own, then the status below (audit38)', () => {
    const { screen, stderr } = on(120);
    const out = (text: string) => {
      stderr.clearForOther(); // as cli.ts's terminalFor().out on a TTY
      screen.write(`${text}\n`);
    };
    stderr.status('syncing 1/2 resources, 60001 objects (waiting for configmaps)');
    out('12:00:01 MODIFIED pods default/web-1');
    out('12:00:02 MODIFIED pods default/web-2'); // no status shown: nothing cleared, nothing lost
    stderr.status('syncing 1/2 resources, 60001 objects (waiting for configmaps)');
    expect(screen.shown).toEqual([
      '12:00:01 MODIFIED pods default/web-1',
      '12:00:02 MODIFIED pods default/web-2',
      'syncing 1/2 resources, 60001 objects (waiting for configmaps)',
    ]);
  });

  it('lines without a status on screen are written as they are (not a TTY, or after the status was cleared)', () => {
    const written: string[] = [];
    const stderr = new StatusLine(
      (text) => written.push(text),
      () => undefined,
    );
    stderr.line('connecting');
    stderr.status('syncing');
    stderr.status('');
    stderr.line('synced');
    expect(written).toEqual(['connecting\n', '\r\x1b[2Ksyncing', '\r\x1b[2K', 'synced\n']);
  });

  it('a status wider than the terminal is cut one short of its width: redrawn, it leaves no stale row', () => {
    const { screen, stderr } = on(50);
    const status = `syncing 3/5 resources, 1200 objects (waiting for ${'configmaps in 1000 namespaces, '.repeat(3)}…)`;
    expect(status.length).toBeGreaterThan(100);
    for (let tick = 0; tick < 3; tick++) stderr.status(status);
    expect(screen.shown).toEqual([status.slice(0, 49).trimEnd()]);
    stderr.line('synced 5 resources');
    expect(screen.shown).toEqual(['synced 5 resources', '']);
  });

  it('the width is read at each redraw (a resized terminal), and unknown: nothing is cut', () => {
    let columns: number | undefined = 20;
    const written: string[] = [];
    const stderr = new StatusLine(
      (text) => written.push(text),
      () => columns,
    );
    stderr.status('syncing 0/1 resources, 0 objects');
    columns = undefined;
    stderr.status('syncing 0/1 resources, 0 objects');
    expect(written).toEqual(['\r\x1b[2Ksyncing 0/1 resourc', '\r\x1b[2Ksyncing 0/1 resources, 0 objects']);
  });
});
