/**
 * Flink's mutants (engine/flink/mutants.ts): the registry the harness plans with, the same
 * names as the agent implements (engine/flink/agent, Mutants.java), and the plug refusing a
 * name it does not know before it touches the rig, and campaigns/flink-mutants.yaml giving
 * each one a schedule that can expose it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { FLINK_MUTANT_NAMES, FLINK_MUTANTS, isFlinkMutant } from '../../../../engine/flink/mutants.ts';
import { flinkEngine } from '../../../../engine/flink/plug.ts';
import type { EngineContext } from '../../../../engine/engine.ts';
import { FAULT_KIND_NAMES } from '../../../../lib/fault-kinds.ts';
import { repoRoot } from '../../../../lib/paths.ts';
import { campaignForMutant, exposable, loadForEngine, scheduledKinds } from '../../../../campaigns/per-mutant.ts';
import { MANDATORY_FAULT_POINTS } from '../../../../engine/engine.ts';

t.test('the registry: every name once, a mechanism, counters, known fault kinds', async (t) => {
  t.same(FLINK_MUTANTS.map((m) => m.name), [...FLINK_MUTANT_NAMES]);
  t.equal(new Set(FLINK_MUTANT_NAMES).size, FLINK_MUTANT_NAMES.length);
  for (const m of FLINK_MUTANTS) {
    t.ok(m.mechanism.length > 80 && m.caughtBy.length > 0, `${m.name}: mechanism and counters`);
    for (const k of m.exposedBy ?? []) t.ok((FAULT_KIND_NAMES as readonly string[]).includes(k), `${m.name}: exposed by the kind ${k}`);
  }
  t.same(flinkEngine().mutants, FLINK_MUTANTS, "the plug's mutants");
  t.ok(isFlinkMutant('commit-at-prepare'));
  t.notOk(isFlinkMutant('keys-reused'), "a Clink mutant is not Flink's");
});

t.test('the agent implements exactly these names (Mutants.java)', async (t) => {
  const java = readFileSync(path.join(repoRoot, 'engine/flink/agent/src/main/java/qual/clink/flink/agent/Mutants.java'), 'utf8');
  const constants = new Map([...java.matchAll(/public static final String (\w+) = "([a-z-]+)";/g)].map((m) => [m[1]!, m[2]!]));
  const list = /List<String> NAMES = List\.of\(([^)]*)\)/.exec(java)?.[1]?.split(',').map((s) => constants.get(s.trim()));
  t.same(list, [...FLINK_MUTANT_NAMES]);
});

t.test('the plug refuses an unknown mutant before it touches the rig', async (t) => {
  const job = { topic: 'in', partitions: 4, bucket: 'b', prefix: 'p/', checkpointIntervalMs: 6000 };
  const ctx = {} as EngineContext;
  await t.rejects(flinkEngine().deploy(ctx, { ...job, mutant: 'keys-reused' }), /flink: unknown mutant 'keys-reused' \(known: drop-restored-committables, commit-at-prepare, /);
});

t.test('campaigns/flink-mutants.yaml: each mutant has a schedule of its own that exposes it, within what the control runs', async (t) => {
  const { campaign: c, engine } = loadForEngine(path.join(repoRoot, 'campaigns/flink-mutants.yaml'));
  t.equal(engine.name, 'flink');
  t.equal(c.engine.mutant, 'none', 'the control is the correct Flink');
  t.same(Object.keys(c.perMutant ?? {}).sort(), [...FLINK_MUTANT_NAMES].sort(), 'one schedule per mutant, no other key');
  const pointsOf = (x: typeof c) => new Set([...x.faults.flatMap((f) => f.points ?? []), ...x.compositions.flatMap((k) => k.steps.flatMap((s) => (s.point ? [s.point] : [])))]);
  for (const p of MANDATORY_FAULT_POINTS) t.ok(pointsOf(c).has(p), `the control covers ${p}`);
  const baseKinds = scheduledKinds(c);
  for (const m of FLINK_MUTANTS) {
    const run = campaignForMutant(c, m.name);
    t.ok(run.overrides?.mutantSchedule, `${m.name}: its own schedule replaces the base`);
    t.ok(exposable(c, m), `${m.name}: qualify-mutants would run it`);
    const kinds = scheduledKinds(run);
    for (const k of m.exposedBy ?? []) t.ok(kinds.has(k), `${m.name}: its schedule holds ${k}`);
    for (const k of kinds) t.ok(baseKinds.has(k), `${m.name}: ${k} is in the control's schedule`);
    t.ok(run.workload.soakS >= 180, `${m.name}: a soak of ${run.workload.soakS} s leaves room for Flink's 27-55 s restores`);
  }
  const tamper = c.compositions.find((x) => x.steps.some((s) => s.kind === 'store-tamper'));
  t.equal(tamper?.steps.find((s) => s.kind === 'store-tamper')?.variant, 'delete', 'the control is tampered with by a delete, which the correct Flink refuses (a same-size foreign put it accepts)');
  t.ok(c.deadlines.recoveryS >= 120, "the recovery deadline (and so the tamper's reaction deadline) outlasts Flink's restores");
});
