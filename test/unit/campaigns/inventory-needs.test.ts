/** A campaign's needs of inventory hosts: its store, its engine's, and libfaketime only when its plan steps clocks. */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { inventoryNeedsOf } from '../../../campaigns/inventory-needs.ts';
import { loadForEngine } from '../../../campaigns/per-mutant.ts';
import { planCampaign } from '../../../campaigns/plan.ts';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

t.test('from real campaigns: store, engine, clock steps', async (t) => {
  const quick = loadForEngine(path.join(repo, 'campaigns/quick.yaml')).campaign;
  const plan = planCampaign(quick);
  const needs = inventoryNeedsOf(quick, plan);
  t.equal(needs.store, quick.store);
  t.same(needs.engines.map((e) => e.engine), ['Clink']);
  t.equal(needs.clockSteps, plan.some((f) => f.kind === 'clock-step'));
  t.equal(inventoryNeedsOf(quick, [{ kind: 'clock-step' }]).clockSteps, true);
  t.equal(inventoryNeedsOf(quick, [{ kind: 'worker-kill' }]).clockSteps, false);
  t.same(inventoryNeedsOf(quick, [{ kind: 'disk-full', target: 'app-a' }, { kind: 'disk-full', target: 'app-a' }, { kind: 'disk-full' }]).diskFullTargets, ['app-a', '*'], 'the hosts disk-full fills');
  t.equal(inventoryNeedsOf(quick, [{ kind: 'worker-kill', target: 'app-a' }]).diskFullTargets, undefined);
  const flink = loadForEngine(path.join(repo, 'campaigns/flink-quick.yaml')).campaign;
  t.same(inventoryNeedsOf(flink, []).engines.map((e) => e.engine), ['Flink']);
});
