import t from 'tap';
import { compositionRecoveries, compositionSummaries, faultOutcomes, summaryByKind, unsyncedBytesLost, type FaultOutcome } from '../../../reports/faults.ts';
import type { RunEvidence } from '../../../reports/evidence.ts';
import type { ChaosRecord, PlannedFault } from '../../../lib/evidence.ts';

t.test("a kind's recovery figures are the soak's faults only: the gate asks for its own checkpoint", async (t) => {
  const outcomes: FaultOutcome[] = [
    { id: 'g001', kind: 'worker-kill', status: 'survived', recoveryS: 1.2 },
    { id: 'f001', kind: 'worker-kill', status: 'survived', recoveryS: 11, planned: { id: 'f001', kind: 'worker-kill', atS: 10 } },
    { id: 'f002', kind: 'worker-kill', status: 'survived', recoveryS: 13, planned: { id: 'f002', kind: 'worker-kill', atS: 40 } },
    { id: 'f003', kind: 'worker-kill', status: 'not recovered', planned: { id: 'f003', kind: 'worker-kill', atS: 70 } },
  ];
  const wk = summaryByKind(outcomes).find((k) => k.kind === 'worker-kill')!;
  t.equal(wk.planned, 4, 'the gate fault is still listed and counted');
  t.equal(wk.survived, 3);
  t.equal(wk.notRecovered, 1);
  t.same(wk.recoveryS, [11, 13], "the gate's 1.2 s is not in the median or the max");
});

/** The smallest RunEvidence faultOutcomes reads: a plan, a chaos log and a soak mark. */
function evidenceOf(plan: PlannedFault[], chaos: ChaosRecord[], soakAt = '2026-08-21T10:00:00.000Z'): RunEvidence {
  return { dirName: 'x', plan, chaos, samples: [], ledger: [], checkpoints: [], phases: [{ t: soakAt, phase: 'soak', edge: 'start' }], resources: [], missing: [], unreadable: [], files: [] };
}

const rec = (t: string, faultId: string, kind: ChaosRecord['kind'], phase: ChaosRecord['phase'], extra: Partial<ChaosRecord> = {}): ChaosRecord => ({ t: `2026-08-21T10:${t}Z`, faultId, kind, phase, ...extra });

t.test("a composition's own recovery is read from its record, apart from its steps' own recoveries", async (t) => {
  const c = { composition: 'store-down#1' };
  const plan: PlannedFault[] = [
    { id: 'f1', kind: 'disk-full', atS: 10, durationS: 5, composition: 'store-down#1' },
    { id: 'f2', kind: 'worker-kill', atS: 60, composition: 'store-down#1' },
  ];
  const chaos = [
    rec('00:11.000', 'f1', 'disk-full', 'landed', c),
    rec('00:16.000', 'f1', 'disk-full', 'healed', c),
    rec('01:00.500', 'f2', 'worker-kill', 'landed', c),
    rec('01:02.000', 'f2', 'worker-kill', 'healed', c),
    rec('01:09.000', 'f1', 'disk-full', 'recovered', { ...c, recoveryS: 7 }),
    rec('01:09.000', 'f2', 'worker-kill', 'recovered', { ...c, recoveryS: 6 }),
    rec('01:09.000', 'f2', 'worker-kill', 'composition-recovered', { ...c, recoveryS: 6 }),
  ];
  const ev = evidenceOf(plan, chaos);
  const outcomes = faultOutcomes(ev);
  t.same(outcomes.map((o) => [o.id, o.status, o.recoveryS, o.landedS]), [['f1', 'survived', 7, 11], ['f2', 'survived', 6, 60.5]], 'two outcomes, no phantom one for the composition record; landed from the soak start');
  t.same(compositionRecoveries(ev.chaos), [{ composition: 'store-down#1', lastHealed: 'f2', recovered: true, recoveryS: 6 }]);
  const [s] = compositionSummaries(outcomes, ev.chaos);
  t.same([s!.name, s!.runs, s!.landed, s!.survived, s!.recorded, s!.recovered, s!.recoveryS], ['store-down', 1, 1, 1, 1, 1, [6]]);
  t.same(compositionSummaries(outcomes).map((x) => x.recorded), [0], 'without the records (an old chaos.jsonl): none recorded');
});

t.test('a composition that did not recover is counted as recorded and not recovered', async (t) => {
  const c = { composition: 'c#1' };
  const ev = evidenceOf([{ id: 'f1', kind: 'worker-kill', atS: 0, composition: 'c#1' }], [
    rec('00:00.500', 'f1', 'worker-kill', 'landed', c),
    rec('00:01.000', 'f1', 'worker-kill', 'healed', c),
    rec('01:01.000', 'f1', 'worker-kill', 'not-recovered', c),
    rec('01:01.000', 'f1', 'worker-kill', 'composition-not-recovered', c),
  ]);
  const [s] = compositionSummaries(faultOutcomes(ev), ev.chaos);
  t.same([s!.recorded, s!.recovered, s!.recoveryS, s!.survived], [1, 0, [], 0]);
});

t.test('unsyncedBytesLost: the lostBytes a lost-unsynced-writes landing recorded; from the cuts only for evidence recorded before that figure', async (t) => {
  const cut = (bytesBefore: number, bytesAfter: number) => ({ file: '/d/log', bytesBefore, bytesAfter, inFlight: false });
  t.equal(unsyncedBytesLost({ lostBytes: 0, cuts: [cut(100, 100)] }), 0);
  t.equal(unsyncedBytesLost({ lostBytes: 57, cuts: [cut(100, 80), { ...cut(50, 13), lostBytes: 37 }] }), 57, 'the recorded total');
  t.equal(unsyncedBytesLost({ lostBytes: 9, cuts: [] }), 9, 'the recorded figure is taken as recorded, not re-derived');
  t.equal(unsyncedBytesLost({ cuts: [cut(100, 80), cut(50, 50)] }), 20, 'older evidence: before minus after, summed');
  t.equal(unsyncedBytesLost({ cuts: [] }), 0, 'older evidence with no log: nothing cut');
  t.equal(unsyncedBytesLost({ host: 'worker-1' }), undefined, 'neither figure nor cuts: unknown');
  t.equal(unsyncedBytesLost(undefined), undefined);
});
