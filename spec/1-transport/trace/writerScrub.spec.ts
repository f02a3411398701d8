/**
 * `traceWriter({ scrub })`: the text of every error a line carries (a failure's, a notice's, a page's notice: the
 * message and each string of the server's Status) goes through `scrub` before it is written; events and requests are
 * written as they are; a scrub that throws withholds the text rather than write it (audit43: the CLI's scrubber
 * wrapped stderr only, and a failure quoting a configured secret reached the trace).
 */
import { describe, expect, it } from 'vitest';
import { InformerError } from '../../../src/0-model/errors.ts';
import { SCRUB_FAILED, readTrace, recordedError } from '../../../src/1-transport/trace/format.ts';
import { traceWriter } from '../../../src/1-transport/trace/writer.ts';

const SECRET = 'SECRETwriterScrub0123';
const error = () =>
  recordedError(
    new InformerError('Unauthorized', `exec plugin failed: pin ${SECRET}`, {
      status: 401,
      statusObject: { kind: 'Status', message: `token ${SECRET} rejected`, details: { causes: [{ message: `${SECRET}!` }] }, code: 401 },
    }),
  );

function written(scrub?: (text: string) => string): string {
  const out: string[] = [];
  const writer = traceWriter({ write: (l) => void out.push(l), resources: ['pods'], ...(scrub ? { scrub } : {}) });
  writer.line({ type: 'list', id: 0, resource: 'pods', options: { limit: 500 } });
  writer.line({ type: 'page', id: 0, resourceVersion: '5', items: [{ metadata: { name: SECRET } }], notice: error() });
  writer.line({ type: 'failure', id: 0, error: error() });
  writer.line({ type: 'watch', id: 1, resource: 'pods', options: { resourceVersion: '5' } });
  writer.line({ type: 'notice', id: 1, error: error() });
  writer.line({ type: 'event', id: 1, event: { type: 'ADDED', object: { metadata: { name: SECRET } } } });
  writer.eventLine(1, JSON.stringify({ type: 'ADDED', object: { metadata: { name: SECRET } } }));
  writer.close();
  return out.join('');
}

describe('traceWriter scrub', () => {
  it("scrubs every error's message and Status text; objects are the recorder's to redact, written as they are", () => {
    const text = written((t) => t.split(SECRET).join('<redacted>'));
    const { lines } = readTrace(text);
    const errors = lines.flatMap((l) =>
      l.type === 'failure' || l.type === 'notice' ? [l.error] : l.type === 'page' && l.notice ? [l.notice] : [],
    );
    expect(errors).toHaveLength(3);
    for (const e of errors) {
      expect(e).toMatchObject({ reason: 'Unauthorized', status: 401, message: 'exec plugin failed: pin <redacted>' });
      expect(e.statusObject).toEqual({
        kind: 'Status',
        message: 'token <redacted> rejected',
        details: { causes: [{ message: '<redacted>!' }] },
        code: 401,
      });
    }
    // The page's item, the event and the line written as it came keep the name: three of them.
    expect(text.split(SECRET).length - 1).toBe(3);
  });

  it('a scrub that throws withholds the text; without one, errors are written as they are', () => {
    const withheld = written(() => {
      throw new Error(`cannot scrub ${SECRET}`);
    });
    const failure = readTrace(withheld).lines.find((l) => l.type === 'failure');
    expect(failure).toMatchObject({ error: { message: SCRUB_FAILED, statusObject: { message: SCRUB_FAILED, code: 401 } } });
    expect(withheld.split(SECRET).length - 1).toBe(3);
    expect(written().split(SECRET).length - 1).toBe(3 + 3 * 3);
  });
});
