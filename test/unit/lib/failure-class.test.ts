import t from 'tap';
import { decideVerdict, type VerdictInput } from '../../../campaigns/runner/verdict.ts';
import { classifiedReasons, failureClasses, reasonClass } from '../../../lib/failure-class.ts';
import { zeroCounters, type ChaosRecord, type Recount } from '../../../lib/evidence.ts';

const recount = (over: Partial<Recount> = {}): Recount => ({
  t: '2026-12-02T00:00:00Z', objects: 10, lines: 1000, distinctEvents: 1000, bytes: 1, counters: zeroCounters(), perPartition: [], durationS: 1, ...over,
});
const rec = (faultId: string, phase: ChaosRecord['phase'], point?: string): ChaosRecord => ({ t: 'x', faultId, kind: point ? 'protocol-point' : 'worker-kill', phase, ...(point ? { point } : {}) });
const base = (over: Partial<VerdictInput> = {}): VerdictInput => ({
  runId: 'r', startedAt: 'a', endedAt: 'b', aborted: false,
  gate: { passed: true, conditions: [{ name: 'input flowing', passed: true, evidence: 'x' }] },
  chaos: [rec('f1', 'landed', 'p1'), rec('f1', 'recovered', 'p1')],
  mandatoryPoints: ['p1'], oracle: zeroCounters(), recount: recount(), produced: 1000, drainConverged: true, pendingUploads: 3, ...over,
});
const classes = (v: ReturnType<typeof decideVerdict>) => Object.fromEntries(v.classifiedReasons!.map((r) => [r.reason, r.class]));

t.test('a counter above zero is safety: the engine was shown wrong', async (t) => {
  const c = { ...zeroCounters(), duplicates: 2 };
  const v = decideVerdict(base({ oracle: c, recount: recount({ counters: c }) }));
  t.same(classes(v), { 'recount: duplicates = 2': 'safety', 'oracle: duplicates = 2': 'safety' });
  t.same(failureClasses(v.classifiedReasons!), ['safety']);
  t.same(v.classifiedReasons!.map((r) => r.reason), v.reasons, 'the same reasons, in the same order');
});

t.test('one worker-kill and no protocol point: coverage only, nothing shown either way', async (t) => {
  const v = decideVerdict(base({ mandatoryPoints: ['p1', 'p2'], chaos: [rec('f1', 'landed'), rec('f1', 'recovered')] }));
  t.equal(v.verdict, 'FAIL', 'the verdict is unchanged');
  t.same(failureClasses(v.classifiedReasons!), ['coverage']);
  t.equal(classes(v)['mandatory protocol point not covered: p2'], 'coverage');
});

t.test('no recovery and a drain that did not converge: liveness, and the unsettled tail the recount counts is liveness too', async (t) => {
  const v = decideVerdict(
    base({ chaos: [rec('f1', 'landed', 'p1'), rec('f1', 'recovered', 'p1'), rec('f2', 'landed'), rec('f2', 'not-recovered')], drainConverged: false, recount: recount({ distinctEvents: 960, counters: { ...zeroCounters(), gaps: 40 } }) }),
  );
  t.equal(v.verdict, 'FAIL');
  t.equal(classes(v)['fault f2 had no recovery within its deadline'], 'liveness');
  t.equal(classes(v)['the drain did not converge before its deadline'], 'liveness');
  t.equal(classes(v)['recount: gaps = 40'], 'liveness', 'gaps in the tail that was never committed');
  t.equal(classes(v)['recount: 960 distinct events committed of 1000 produced'], 'liveness');
  t.same(failureClasses(v.classifiedReasons!), ['liveness'], 'liveness only');
  // The oracle counts a gap only below a partition's highest committed sequence: a hole, whatever the drain did.
  const w = decideVerdict(base({ drainConverged: false, oracle: { ...zeroCounters(), gaps: 3 }, recount: recount({ counters: { ...zeroCounters(), gaps: 43 } }) }));
  t.equal(classes(w)['oracle: gaps = 3'], 'safety');
  t.same(failureClasses(w.classifiedReasons!), ['safety', 'liveness']);
});

t.test('the same gaps after a drain that converged are safety', async (t) => {
  t.equal(reasonClass('recount: gaps = 40', true), 'safety');
  t.equal(reasonClass('recount: gaps = 40', false), 'liveness');
  t.equal(reasonClass('the recount disagrees with the oracle (oracle vs recount: gaps 1 vs 0)', true), 'safety');
});

t.test('gate, abort, stuck oracle, heal failure, missing recount, accepted foreign object', async (t) => {
  t.equal(reasonClass('gate: a fault landed not shown (did not land: x)', true), 'coverage');
  t.equal(reasonClass('gate: did not run', true), 'coverage');
  t.equal(reasonClass('the run was aborted: SIGINT; nothing is certified', true), 'coverage');
  t.equal(reasonClass('stuck oracle: sample 12 stuck for 50 s', true), 'liveness');
  t.equal(reasonClass('fault f3 could not be healed (heal-failed); the run is not certified', true), 'coverage');
  t.equal(reasonClass('the separate recount did not complete: ETIMEDOUT', true), 'coverage');
  t.equal(reasonClass('engine accepted a foreign object: store-tamper f006 (foreign-put) on k was recovered through without an integrity stop', true), 'safety');
  t.equal(reasonClass('something no verdict has said yet', true), 'safety', 'an unknown reason is never understated');
});

t.test('a verdict.json without classes (schema 2) is classed from its text', async (t) => {
  const old = { reasons: ['the recount found 3 duplicates', 'mandatory protocol point sink.after-commit not covered', 'fault f7 (partition) did not recover within 60 s'], drainConverged: true };
  t.same(classifiedReasons(old).map((r) => r.class), ['safety', 'coverage', 'liveness']);
  const recorded = { ...old, classifiedReasons: old.reasons.map((reason) => ({ reason, class: 'coverage' as const })) };
  t.same(classifiedReasons(recorded).map((r) => r.class), ['coverage', 'coverage', 'coverage'], 'recorded classes are taken as recorded');
});
