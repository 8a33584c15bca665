import t from 'tap';
import { CLAIM_CLAUSES, STORE_DOWN_DURING_RECOVERY, claimUnderTest, shownKinds, storeDownDuringRecovery } from '../../../reports/claim.ts';
import type { FaultOutcome } from '../../../reports/faults.ts';
import type { FaultKind } from '../../../lib/evidence.ts';

const T0 = Date.parse('2026-12-01T10:00:00Z');
const at = (s: number) => new Date(T0 + s * 1000).toISOString();

/** A fault of the plan that landed at `landS`, healed at `healS` and ended as `status`. */
function fault(id: string, kind: FaultKind, status: FaultOutcome['status'], landS: number, healS: number, composition?: string): FaultOutcome {
  return {
    id,
    kind,
    status,
    planned: { id, kind, atS: landS, ...(composition ? { composition } : {}) },
    ...(status !== 'not landed' ? { landedAt: at(landS), healedAt: at(healS) } : {}),
    ...(composition ? { composition } : {}),
  };
}

t.test('names only the kinds that were scheduled, landed and recovered', async (t) => {
  const outcomes = [
    fault('f001', 'worker-kill', 'survived', 10, 12),
    fault('f002', 'clock-step', 'survived', 30, 45),
    fault('f003', 'packet-loss', 'not landed', 60, 70),
    fault('f004', 'partition', 'not recovered', 80, 90),
    // The gate's fault: not in the plan.
    { id: 'gate', kind: 'broker-restart', status: 'survived', landedAt: at(1), healedAt: at(2) } satisfies FaultOutcome,
  ];
  t.same(shownKinds(outcomes), ['worker-kill', 'clock-step']);
  const claim = claimUnderTest('Clink', 's3_2pc_sink', outcomes);
  t.equal(claim, `Clink delivers every event exactly once into S3-compatible object storage through \`s3_2pc_sink\`, and keeps doing so when ${CLAIM_CLAUSES['worker-kill']} and when ${CLAIM_CLAUSES['clock-step']}.`);
  for (const k of ['packet-loss', 'partition', 'broker-restart', 'store-outage'] as const) t.notMatch(claim, CLAIM_CLAUSES[k], `${k} is not claimed`);
  t.notMatch(claim, STORE_DOWN_DURING_RECOVERY, 'no store outage was scheduled: no outage during a recovery is claimed');
});

t.test('the store down during a recovery: only when a worker kill landed inside an outage and the whole composition recovered', async (t) => {
  const inside = [fault('f010', 'store-outage', 'survived', 100, 130, 'down#1'), fault('f011', 'worker-kill', 'survived', 110, 112, 'down#1')];
  t.equal(storeDownDuringRecovery(inside), 1);
  t.match(claimUnderTest('Flink', 'flink_filesink_s3', inside), `, when ${CLAIM_CLAUSES['store-outage']} and when ${STORE_DOWN_DURING_RECOVERY}.`);

  const afterHeal = [fault('f010', 'store-outage', 'survived', 100, 130, 'down#1'), fault('f011', 'worker-kill', 'survived', 131, 133, 'down#1')];
  t.equal(storeDownDuringRecovery(afterHeal), 0, 'the kill landed after the store was back');
  t.notMatch(claimUnderTest('Clink', 's', afterHeal), STORE_DOWN_DURING_RECOVERY);

  const unrecovered = [fault('f010', 'store-outage', 'survived', 100, 130, 'down#1'), fault('f011', 'worker-kill', 'not recovered', 110, 112, 'down#1')];
  t.equal(storeDownDuringRecovery(unrecovered), 0, 'a step did not recover');
  t.notMatch(claimUnderTest('Clink', 's', unrecovered), STORE_DOWN_DURING_RECOVERY);

  const separate = [fault('f010', 'store-outage', 'survived', 100, 130), fault('f011', 'worker-kill', 'survived', 110, 112)];
  t.equal(storeDownDuringRecovery(separate), 0, 'lone faults that overlap by chance are no composition');

  const twice = [...inside, fault('f020', 'store-outage', 'survived', 200, 230, 'down#2'), fault('f021', 'worker-kill', 'survived', 205, 207, 'down#2')];
  t.equal(storeDownDuringRecovery(twice), 2, 'one per run of the composition');
});

t.test('a run that showed no fault class claims delivery only', async (t) => {
  const claim = claimUnderTest('Clink', 's3_2pc_sink', [fault('f001', 'worker-kill', 'not landed', 10, 12)]);
  t.match(claim, /^Clink delivers every event exactly once .* through `s3_2pc_sink`\. No scheduled fault landed and was recovered from/);
  t.notMatch(claim, 'keeps doing so');
});
