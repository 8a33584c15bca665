/**
 * campaigns/corruption.yaml: QUAL-03's "Unknown" disk-corruption classes as fault kinds. It
 * loads, can reach a PASS (every mandatory point, a gate fault that lands), schedules the
 * engine-state kinds and store-bitrot alone and in the compositions that read a corrupted record back at once, and holds
 * everything MUTANT unchecked-log needs (its exposedBy kinds).
 */
import t from 'tap';
import path from 'node:path';
import { loadCampaign } from '../../../campaigns/load.ts';
import { passBlockers } from '../../../campaigns/pass-reachability.ts';
import { planCampaign, renderPlanTable } from '../../../campaigns/plan.ts';
import { MANDATORY_FAULT_POINTS } from '../../../engine/engine.ts';
import { CLINK_MUTANTS } from '../../../engine/clink/mutants/index.ts';
import { repoRoot } from '../../../lib/paths.ts';

const c = loadCampaign(path.join(repoRoot, 'campaigns/corruption.yaml'));
const plan = planCampaign(c);

t.test('campaigns/corruption.yaml can reach a PASS and plans the same for its seed', async (t) => {
  t.same(passBlockers(c, plan, { name: 'clink', mandatoryFaultPoints: MANDATORY_FAULT_POINTS }), []);
  t.same(planCampaign(c), plan);
  t.equal(c.engine.mutant ?? 'none', 'none', 'the correct engine');
});

t.test('both corruption kinds land alone, on the coordinator and on a worker, and both state-corruption variants', async (t) => {
  const alone = plan.filter((f) => !f.composition);
  for (const kind of ['state-corruption', 'lost-unsynced-writes'] as const) {
    t.ok(alone.some((f) => f.kind === kind && f.target === 'coordinator'), `${kind} on the coordinator`);
    t.ok(alone.some((f) => f.kind === kind && /^worker-/.test(f.target ?? '')), `${kind} on a worker`);
  }
  t.same([...new Set(plan.filter((f) => f.kind === 'state-corruption').map((f) => f.variant))].sort(), ['bitflip', 'torn']);
});

t.test('store-bitrot in each of its three places, on the store', async (t) => {
  const rot = plan.filter((f) => f.kind === 'store-bitrot');
  t.same(rot.map((f) => f.variant).sort(), ['committed', 'read', 'staged']);
  t.ok(rot.every((f) => f.target === 'store'), 'the store host');
  t.equal(rot.find((f) => f.variant === 'read')?.durationS, 10, 'held while the oracle reads it');
});

t.test('the compositions: a flipped newest record read back by a restore at once; a crash, then a torn record at the restart', async (t) => {
  const steps = (name: string) => plan.filter((f) => f.composition?.startsWith(`${name}#`)).map((f) => [f.kind, f.variant ?? null, f.target]);
  const flipped = steps('flipped-record-then-restore');
  t.same(flipped[0], ['state-corruption', 'bitflip', 'coordinator']);
  t.equal(flipped[1]![0], 'worker-kill');
  const f = plan.filter((x) => x.composition?.startsWith('flipped-record-then-restore#'));
  t.equal(f[1]!.atS, f[0]!.atS, 'the restore at once');
  t.same(steps('crash-then-torn-restart'), [
    ['lost-unsynced-writes', null, 'coordinator'],
    ['state-corruption', 'torn', 'coordinator'],
  ]);
});

t.test("it exposes MUTANT unchecked-log: the mutant's kinds are scheduled", async (t) => {
  const m = CLINK_MUTANTS.find((x) => x.name === 'unchecked-log')!;
  for (const k of m.exposedBy ?? []) t.ok(plan.some((f) => f.kind === k), `${k} scheduled`);
});

t.test('campaigns/corruption-erasure.yaml can reach a PASS on four drives; the plan table says the committed rot is held to the recount', async (t) => {
  const e = loadCampaign(path.join(repoRoot, 'campaigns/corruption-erasure.yaml'));
  const ePlan = planCampaign(e);
  t.same(passBlockers(e, ePlan, { name: 'clink', mandatoryFaultPoints: MANDATORY_FAULT_POINTS }), [], 'the control can PASS: every mandatory point, a gate fault');
  t.same(ePlan.filter((f) => f.kind === 'store-bitrot').map((f) => f.variant).sort(), ['committed', 'read', 'staged']);
  const lines = renderPlanTable(e, ePlan).split('\n');
  t.match(lines[0], /store minio \(erasure-coded, 4 drives\)$/);
  const committed = ePlan.find((f) => f.variant === 'committed')!;
  t.match(lines.find((l) => l.includes(` ${committed.id} `)), "to the recount's held pass");
  const read = ePlan.find((f) => f.variant === 'read')!;
  t.match(lines.find((l) => l.includes(` ${read.id} `)), / 10 s/, 'the read rot is held for its durationS as before');
});
