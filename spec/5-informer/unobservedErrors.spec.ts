/**
 * An informer's faults while nothing subscribes to its `errors$` are reported with `process.emitWarning` (type
 * `RxInformerWarning`, the reason as `code`): per reason the first at once, then at most one each 5 minutes, saying
 * how many were left out; none while `errors$` has a subscriber, none with `reportUnobservedErrors: false`. At the
 * default options, in virtual time (the informer's scheduler is its clock).
 */
import { Subject, VirtualTimeScheduler } from 'rxjs';
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { InformerError, type ErrorReason } from '../../src/0-model/errors.ts';
import { ConfigMap } from '../../src/0-model/resources.ts';
import type { KubeObject } from '../../src/0-model/objects.ts';
import type { SourceEvent } from '../../src/2-source/sourceEvent.ts';
import { informerFromSource } from '../../src/5-informer/informerFromSource.ts';
import { reportStep, UNOBSERVED_REPORT_INTERVAL_MS, type ReportState } from '../../src/5-informer/unobservedErrors.ts';
import { warningsOf } from '../support/warnings.ts';

const MINUTE = 60_000;

describe('reportStep: the rule', () => {
  const none: ReportState = new Map();
  const at = (reportedAt: number, leftOut: number): ReportState => new Map([['NotFound', { reportedAt, leftOut }]]);
  const rows: readonly [string, ReportState, ErrorReason, number, boolean, number | undefined, ReportState][] = [
    // [row, state, reason, now, reported, leftOut reported, state after]
    ['the first of a reason: reported', none, 'NotFound', 0, true, 0, at(0, 0)],
    ['again within the interval: left out', at(0, 0), 'NotFound', 4 * MINUTE, false, undefined, at(0, 1)],
    ['once the interval has passed: reported, with the count', at(0, 3), 'NotFound', 5 * MINUTE, true, 3, at(5 * MINUTE, 0)],
    [
      'another reason: its own first',
      at(0, 2),
      'HandlerError',
      MINUTE,
      true,
      0,
      new Map([...at(0, 2), ['HandlerError', { reportedAt: MINUTE, leftOut: 0 }]]),
    ],
  ];
  it.each(rows)('%s', (_row, state, reason, now, reported, leftOut, after) => {
    const step = reportStep(state, reason, now);
    expect(step.decision).toEqual(reported ? { report: true, leftOut } : { report: false });
    expect(step.state).toEqual(after);
  });
  it('the default interval is 5 minutes', () => expect(UNOBSERVED_REPORT_INTERVAL_MS).toBe(5 * MINUTE));
});

describe('an informer reports the faults nobody observes', () => {
  let warn: MockInstance<typeof process.emitWarning>;
  beforeEach(() => {
    warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
  });
  afterEach(() => warn.mockRestore());

  const cm = (name: string, resourceVersion: string): KubeObject => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'shop', resourceVersion },
  });
  /** What was warned: [message, type, code]. */
  const warnings = () => warningsOf(warn);

  function running(options: { reportUnobservedErrors?: boolean } = {}) {
    const scheduler = new VirtualTimeScheduler();
    const source = new Subject<SourceEvent<KubeObject>>();
    const informer = informerFromSource(ConfigMap, source, { scheduler, ...options });
    return { scheduler, source, informer };
  }
  /** Advances the virtual clock by `ms`. */
  const advance = (scheduler: VirtualTimeScheduler, ms: number) => {
    scheduler.schedule(() => undefined, ms);
    scheduler.flush();
  };

  it('a handler that throws with no errors$ subscriber: one warning; again within 5 minutes: none; after: one, counting what was left out', async () => {
    const { scheduler, source, informer } = running();
    const handled = informer.on(() => {
      throw new TypeError("Cannot read properties of undefined (reading 'x')");
    });
    source.next({ type: 'replace', items: [cm('a', '1')], resourceVersion: '1' });
    await Promise.resolve();
    expect(warnings()).toEqual([
      [
        "informer configmaps: HandlerError: the added handler threw for shop/a: Cannot read properties of undefined (reading 'x')",
        'RxInformerWarning',
        'HandlerError',
      ],
    ]);
    advance(scheduler, 4 * MINUTE);
    source.next({ type: 'modified', object: cm('a', '2'), resourceVersion: '2' });
    source.next({ type: 'modified', object: cm('a', '3'), resourceVersion: '3' });
    await Promise.resolve();
    expect(warn).toHaveBeenCalledTimes(1);
    advance(scheduler, MINUTE);
    source.next({ type: 'modified', object: cm('a', '4'), resourceVersion: '4' });
    await Promise.resolve();
    expect(warnings()[1]?.[0]).toMatch(/; 2 more HandlerError since the last report$/);
    handled.unsubscribe();
  });

  it("a source's fault names the request that failed", () => {
    const { source, informer } = running();
    const running$ = informer.store$.subscribe();
    const notFound = new InformerError('NotFound', 'the server could not find the requested resource', {
      status: 404,
      phase: 'list',
      request: 'list /apis/stable.example.com/v1/myapple',
    });
    source.next({ type: 'error', error: notFound });
    source.next({ type: 'error', error: notFound });
    expect(warnings()).toEqual([
      [
        'informer configmaps: NotFound: the server could not find the requested resource (list /apis/stable.example.com/v1/myapple)',
        'RxInformerWarning',
        'NotFound',
      ],
    ]);
    running$.unsubscribe();
  });

  it('none while errors$ has a subscriber; the next after it unsubscribes is reported', async () => {
    const { source, informer } = running();
    const seen: InformerError[] = [];
    const observing = informer.errors$.subscribe((e) => seen.push(e));
    const handled = informer.on(() => {
      throw new Error('no');
    });
    source.next({ type: 'replace', items: [cm('a', '1')], resourceVersion: '1' });
    source.next({ type: 'error', error: new InformerError('ServerError', 'broke', { phase: 'watch' }) });
    await Promise.resolve();
    expect(seen.map((e) => e.reason).sort()).toEqual(['HandlerError', 'ServerError']);
    expect(warn).not.toHaveBeenCalled();
    observing.unsubscribe();
    source.next({ type: 'error', error: new InformerError('ServerError', 'broke', { phase: 'watch' }) });
    expect(warnings().map(([, , code]) => code)).toEqual(['ServerError']);
    handled.unsubscribe();
  });

  it('none with reportUnobservedErrors: false, nor for a notice', async () => {
    const off = running({ reportUnobservedErrors: false });
    const handled = off.informer.on(() => {
      throw new Error('no');
    });
    off.source.next({ type: 'replace', items: [cm('a', '1')], resourceVersion: '1' });
    await Promise.resolve();
    const on = running();
    const running$ = on.informer.store$.subscribe();
    on.source.next({ type: 'error', error: new InformerError('NotAcceptable', 'metadata only: full objects, cut down', { status: 406 }) });
    expect(warn).not.toHaveBeenCalled();
    handled.unsubscribe();
    running$.unsubscribe();
  });
});
