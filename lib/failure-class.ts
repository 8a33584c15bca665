/**
 * The kind of failure each verdict reason is (DESIGN.md, "The campaign run"), kept apart the
 * way Jepsen keeps `valid? false` apart from `:unknown`:
 *  - safety: the engine was shown wrong (a counter above zero, a recount that disagrees with
 *    a settled oracle, a foreign object accepted as the engine's own);
 *  - liveness: nothing was shown wrong, but the run did not recover or settle in time (a fault
 *    with no recovery within its deadline, a drain that did not converge, a stuck oracle; and
 *    what a drain that did not converge leaves the recount to count: the produced tail that
 *    was never committed, as gaps, a shortfall of distinct events, a disagreement);
 *  - coverage: nothing was shown either way (the gate failed, a mandatory protocol point was
 *    not reached, a fault did not land, the recount did not complete, the run was aborted, a
 *    heal failed).
 * Pure: the class is read from the reason's text, as decideVerdict (campaigns/runner/verdict.ts)
 * words it, so verdict.json files written before the class was recorded are classed the same
 * way. A reason it does not know is safety: never understate a failure.
 */
import { FAILURE_CLASSES, type FailureClass } from './evidence.ts';

const COVERAGE = [
  /^gate: /,
  /^the run was aborted/,
  /^mandatory protocol point/,
  /did not land/,
  /could not be healed/,
  /^the separate recount did not complete/,
];
const LIVENESS = [/had no recovery within its deadline/, /did not recover within/, /^the drain did not converge/, /^stuck oracle/];
/** What a drain that did not converge leaves the recount to count: the tail produced and never committed. */
const UNSETTLED_TAIL = [/^recount: gaps = /, /^recount: \d+ distinct events committed of \d+ produced/, /^the recount disagrees with the oracle/];

/** The class of one verdict reason; `drainConverged` from the same verdict. */
export function reasonClass(reason: string, drainConverged: boolean): FailureClass {
  if (COVERAGE.some((re) => re.test(reason))) return 'coverage';
  if (LIVENESS.some((re) => re.test(reason))) return 'liveness';
  if (!drainConverged && UNSETTLED_TAIL.some((re) => re.test(reason))) return 'liveness';
  return 'safety';
}

/** The classes a verdict's reasons fall in, each once, in the order safety, liveness, coverage. */
export function failureClasses(reasons: readonly { class: FailureClass }[]): FailureClass[] {
  const seen = new Set(reasons.map((r) => r.class));
  return FAILURE_CLASSES.filter((c) => seen.has(c));
}

/** A verdict's reasons with their classes: as recorded (schemaVersion 3), else classed from the text. */
export function classifiedReasons(v: { reasons: readonly string[]; drainConverged?: boolean; classifiedReasons?: readonly { reason: string; class: FailureClass }[] }): { reason: string; class: FailureClass }[] {
  if (v.classifiedReasons?.length === v.reasons.length) return [...v.classifiedReasons];
  return v.reasons.map((reason) => ({ reason, class: reasonClass(reason, v.drainConverged ?? true) }));
}
