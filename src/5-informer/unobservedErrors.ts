/**
 * The default report of the faults of an informer (or a controller) while nothing subscribes to its `errors$`
 * (client-go logs every such failure; Node's idiom is `process.emitWarning`): a warning of type `RxInformerWarning`
 * whose `code` is the reason. Rate limited per reason: the first at once, then at most one per
 * {@link UNOBSERVED_REPORT_INTERVAL_MS}, saying how many like it were left out since. Never while `errors$` has a
 * subscriber; off with `reportUnobservedErrors: false`. The rules are {@link reportStep}'s (pure);
 * {@link unobservedReporter} is the shell, and {@link observedErrors} the `errors$` whose subscribers it counts. The one
 * home of this report: the informers (every kind, the dynamic factory's too), `controller()`, `leaderElection()` and `sharding()` use it.
 */
import { Observable } from 'rxjs';
import { WARNING_TYPE, capMessage, isNotice, type ErrorReason, type InformerError } from '../0-model/errors.ts';

/** At most one warning per reason per informer this often (ms), after the first. */
export const UNOBSERVED_REPORT_INTERVAL_MS = 5 * 60_000;

/** The warnings' `type` (`process.on('warning', (w) => w.name === 'RxInformerWarning')`). */
export const UNOBSERVED_WARNING_TYPE = WARNING_TYPE;

/** Per reason: when it was last reported, and how many of it were left out since. */
export type ReportState = ReadonlyMap<ErrorReason, { readonly reportedAt: number; readonly leftOut: number }>;

/** What {@link reportStep} decided: report now (and how many were left out before it), or leave it out. */
export type ReportDecision = { readonly report: true; readonly leftOut: number } | { readonly report: false };

/**
 * The rule, one fault at a time:
 *
 * | the reason's last report      | decision                                  | the reason's state after  |
 * |-------------------------------|-------------------------------------------|---------------------------|
 * | none                          | report (0 left out)                       | reported now, 0 left out  |
 * | `intervalMs` ago or more      | report, with the count left out since     | reported now, 0 left out  |
 * | less than `intervalMs` ago    | leave out                                 | one more left out         |
 */
export function reportStep(
  state: ReportState,
  reason: ErrorReason,
  now: number,
  intervalMs: number = UNOBSERVED_REPORT_INTERVAL_MS,
): { readonly state: ReportState; readonly decision: ReportDecision } {
  const last = state.get(reason);
  const next = new Map(state);
  if (last === undefined || now - last.reportedAt >= intervalMs) {
    next.set(reason, { reportedAt: now, leftOut: 0 });
    return { state: next, decision: { report: true, leftOut: last?.leftOut ?? 0 } };
  }
  next.set(reason, { reportedAt: last.reportedAt, leftOut: last.leftOut + 1 });
  return { state: next, decision: { report: false } };
}

/**
 * The warning's text: whose fault (`informer pods`, `controller pod`), the reason, the message (without its own
 * leading `controller pod: `, when it names its subject already), the request that failed, what was left out.
 */
export function unobservedMessage(subject: string, error: InformerError, leftOut: number): string {
  const request = error.request === undefined ? '' : ` (${error.request})`;
  const more = leftOut === 0 ? '' : `; ${leftOut} more ${error.reason} since the last report`;
  const own = `${subject}: `;
  const message = error.message.startsWith(own) ? error.message.slice(own.length) : error.message;
  return `${subject}: ${error.reason}: ${capMessage(message)}${request}${more}`;
}

/** What an informer's (or a controller's) shell holds: count `errors$` subscribers, and report a fault nobody observes. */
export interface UnobservedReporter {
  /** One more `errors$` subscriber; the function returned ends it. */
  observed(): () => void;
  /** Reports `error` if nothing observes `errors$` (and the rule lets it through). Never throws. */
  report(error: InformerError): void;
}

/**
 * The shell of {@link reportStep} for `subject` (`informer pods`, `controller pod`: the warning's first words): `now` is
 * its scheduler's clock. `enabled: false` reports nothing.
 */
export function unobservedReporter(subject: string, now: () => number, enabled: boolean): UnobservedReporter {
  let observers = 0;
  let state: ReportState = new Map();
  return {
    observed: () => {
      observers++;
      let ended = false;
      return () => {
        if (!ended) observers--;
        ended = true;
      };
    },
    report: (error) => {
      if (!enabled || observers > 0 || isNotice(error)) return;
      const step = reportStep(state, error.reason, now());
      state = step.state;
      if (!step.decision.report) return;
      try {
        process.emitWarning(unobservedMessage(subject, error, step.decision.leftOut), {
          type: UNOBSERVED_WARNING_TYPE,
          code: error.reason,
          detail: 'Subscribe to its errors$ to handle faults, or pass reportUnobservedErrors: false.',
        });
      } catch {
        // emitWarning throws for no string; were it replaced by one that does, the informer still goes on.
      }
    },
  };
}

/** `faults$` as an `errors$`: while it has a subscriber, `reporter` reports nothing (each one counts as an observer). */
export function observedErrors(faults$: Observable<InformerError>, reporter: UnobservedReporter): Observable<InformerError> {
  return new Observable<InformerError>((subscriber) => {
    subscriber.add(reporter.observed());
    return faults$.subscribe(subscriber);
  });
}
