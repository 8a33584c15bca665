/** campaigns/pass-reachability.ts: what `campaign plan` warns keeps a campaign from ever reaching a PASS. */
import t from 'tap';
import path from 'node:path';
import { loadCampaign } from '../../../campaigns/load.ts';
import { passBlockers } from '../../../campaigns/pass-reachability.ts';
import { planCampaign } from '../../../campaigns/plan.ts';
import { MANDATORY_FAULT_POINTS } from '../../../engine/engine.ts';
import type { PlannedFault } from '../../../lib/evidence.ts';
import { repoRoot } from '../../../lib/paths.ts';

const clink = { name: 'clink', mandatoryFaultPoints: MANDATORY_FAULT_POINTS };

t.test('campaigns/quick.yaml can reach a PASS: every mandatory point scheduled, a gate fault that lands', async (t) => {
  const c = loadCampaign(path.join(repoRoot, 'campaigns/quick.yaml'));
  t.same(passBlockers(c, planCampaign(c), clink), []);
});

t.test('a campaign with one worker-kill warns that it will FAIL for coverage, naming the points', async (t) => {
  const plan: PlannedFault[] = [{ id: 'f001', kind: 'worker-kill', atS: 10, target: 'worker-1' }];
  const w = passBlockers({ gate: { fault: 'worker-kill' } }, plan, clink);
  t.equal(w.length, 1);
  t.match(w[0]!, /^6 of the 6 mandatory protocol points are not scheduled \(sink\.before-prepare, .*, sink\.after-commit\): .* FAIL for coverage/);
});

t.test('one point missing is named alone; a point in a composition counts as scheduled', async (t) => {
  const plan: PlannedFault[] = MANDATORY_FAULT_POINTS.filter((p) => p !== 'sink.after-commit').map((point, i) => ({ id: `f${i}`, kind: 'protocol-point', atS: i, point, ...(i === 0 ? { composition: 'c#1' } : {}) }));
  t.same(passBlockers({ gate: { fault: 'worker-kill' } }, plan, clink), [
    'a mandatory protocol point is not scheduled (sink.after-commit): the verdict requires each to fire and recover, so the run will FAIL for coverage; add a protocol-point fault with these points',
  ]);
});

t.test("an engine that cannot reach a mandatory point says why; an empty list falls back on the harness's", async (t) => {
  const plan: PlannedFault[] = MANDATORY_FAULT_POINTS.map((point, i) => ({ id: `f${i}`, kind: 'protocol-point', atS: i, point }));
  const w = passBlockers({ gate: { fault: 'worker-kill' } }, plan, { name: 'other', mandatoryFaultPoints: MANDATORY_FAULT_POINTS, faultPointsNotApplicable: { 'sink.after-prepare': 'its writer has no prepare step' } });
  t.same(w, ['mandatory protocol point sink.after-prepare cannot be reached by other: its writer has no prepare step']);
  t.equal(passBlockers({ gate: { fault: 'worker-kill' } }, [], { name: 'bare', mandatoryFaultPoints: [] }).length, 1, 'no points of its own: the six are still required');
});

t.test('a gate fault that cannot land as the gate plans it', async (t) => {
  const plan: PlannedFault[] = MANDATORY_FAULT_POINTS.map((point, i) => ({ id: `f${i}`, kind: 'protocol-point', atS: i, point }));
  const w = passBlockers({ gate: { fault: 'protocol-point' } }, plan, clink);
  t.equal(w.length, 1);
  t.match(w[0]!, /^the gate fault protocol-point cannot land: .*without a point/);
  t.match(passBlockers({ gate: { fault: 'clock-step' } }, plan, clink)[0]!, /non-zero offsetS/);
  t.same(passBlockers({ gate: { fault: 'coordinator-kill' } }, plan, clink), []);
});
