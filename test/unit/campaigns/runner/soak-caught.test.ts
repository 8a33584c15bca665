/**
 * A mutant's soak that has already caught the mutant (campaigns/runner/soak-caught.ts): a rule
 * only for a mutant caught by a counter; a count ends it at once, a gauge only after holding
 * above zero; a counter of another kind never; and the faults planned up to the catch must
 * have ended their episodes.
 */
import t from 'tap';
import { faultsInFlight, notStartedReason, SoakCaught, soakCaughtRule } from '../../../../campaigns/runner/soak-caught.ts';
import { CLINK_MUTANTS } from '../../../../engine/clink/mutants/index.ts';
import { zeroCounters, type ChaosRecord, type PlannedFault } from '../../../../lib/evidence.ts';

const at = (s: number) => new Date(Date.parse('2026-12-06T00:00:00Z') + s * 1000).toISOString();
const sample = (s: number, counters: Partial<ReturnType<typeof zeroCounters>> = {}) => ({ t: at(s), counters: { ...zeroCounters(), ...counters } });

t.test('the rule: only for a mutant the registry says a counter catches; never for the correct engine', async (t) => {
  t.same(soakCaughtRule('commit-at-prepare', CLINK_MUTANTS, 6), { mutant: 'commit-at-prepare', counters: ['duplicates'], gaugeHoldS: 15 });
  t.same(soakCaughtRule('offsets-off-by-one', CLINK_MUTANTS, 6)?.counters, ['gaps', 'duplicates']);
  t.equal(soakCaughtRule('none', CLINK_MUTANTS, 6), null, 'the correct engine (the control)');
  t.equal(soakCaughtRule(undefined, CLINK_MUTANTS, 6), null);
  t.equal(soakCaughtRule('no-such-mutant', CLINK_MUTANTS, 6), null, 'a name the registry does not hold');
  t.equal(soakCaughtRule('trust-existing-object', CLINK_MUTANTS, 6), null, 'acceptedForeign is not a counter: a full soak');
});

t.test('a count the mutant must raise ends it at the first sample that shows it; a counter of another kind never', async (t) => {
  const c = new SoakCaught(soakCaughtRule('commit-at-prepare', CLINK_MUTANTS, 6)!);
  t.equal(c.observe(sample(5), 5.2), undefined, 'every counter zero');
  t.equal(c.observe(sample(10, { gaps: 40, mutations: 2, corrupted: 1 }), 10.1), undefined, 'gaps, mutations, corrupted: not what this mutant must raise');
  t.equal(c.observe(undefined, 11), undefined, 'no sample yet');
  t.same(c.observe(sample(15, { duplicates: 3160 }), 15.4), { counter: 'duplicates', value: 3160, sampleT: at(15), seenAtS: 15.4 });
  t.same(c.observe(sample(20), 20.3), { counter: 'duplicates', value: 3160, sampleT: at(15), seenAtS: 15.4 }, 'kept once seen');
});

t.test('a gauge (gaps) must stay above zero over 2.5 checkpoint intervals: a hole a late object fills does not end the soak', async (t) => {
  const c = new SoakCaught(soakCaughtRule('drop-restored-handles', CLINK_MUTANTS, 6)!);
  t.equal(c.observe(sample(10, { gaps: 120 }), 10), undefined, 'the first sample above zero only starts the hold');
  t.equal(c.observe(sample(15, { gaps: 0 }), 15), undefined, 'filled: the hold starts over');
  t.equal(c.observe(sample(20, { gaps: 90 }), 20), undefined);
  t.equal(c.observe(sample(20, { gaps: 90 }), 34), undefined, 'the same sample again counts once');
  t.equal(c.observe(sample(30, { gaps: 95 }), 30), undefined, '10 s is not 15 s');
  t.same(c.observe(sample(35, { gaps: 97 }), 35.5), { counter: 'gaps', value: 97, sampleT: at(35), seenAtS: 35.5 }, 'above zero in every sample for 15 s');
});

t.test('faults in flight: planned at or before the catch and not yet at the end of their episode', async (t) => {
  const plan: PlannedFault[] = [
    { id: 'f001', kind: 'worker-kill', atS: 10, target: 'worker-1' },
    { id: 'f002', kind: 'worker-kill', atS: 25, target: 'worker-2' },
    { id: 'f003', kind: 'worker-kill', atS: 40, target: 'worker-3' },
  ];
  const rec = (faultId: string, phase: ChaosRecord['phase']): ChaosRecord => ({ t: at(0), faultId, kind: 'worker-kill', phase });
  const landedOnly = [rec('f001', 'landed'), rec('f001', 'healed'), rec('f001', 'recovered'), rec('f002', 'landed')];
  t.same(faultsInFlight(plan, landedOnly, 30).map((f) => f.id), ['f002'], 'f002 landed and is not healed: wait');
  t.same(faultsInFlight(plan, [...landedOnly, rec('f002', 'healed')], 30).map((f) => f.id), ['f002'], 'healed, its recovery not yet measured: wait');
  t.same(faultsInFlight(plan, [...landedOnly, rec('f002', 'healed'), rec('f002', 'recovered')], 30), [], 'over: the soak may end; f003 is after the catch');
  t.same(faultsInFlight(plan, [rec('f001', 'not-landed')], 20), [], 'a fault that did not land has ended too');
  t.same(faultsInFlight(plan, [], 25).map((f) => f.id), ['f001', 'f002'], 'at the catch itself counts as before it');
});

t.test('the not-started reason names the counter, its value and the sample', async (t) => {
  t.equal(notStartedReason({ counter: 'duplicates', value: 12, sampleT: at(15), seenAtS: 15.4 }), `not started: the soak ended early, the mutant already caught (the oracle's sample at ${at(15)} showed duplicates = 12)`);
});
