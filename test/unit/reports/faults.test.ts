import t from 'tap';
import { summaryByKind, type FaultOutcome } from '../../../reports/faults.ts';

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
