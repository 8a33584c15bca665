/**
 * The product end to end, through the real CLI: campaigns/quick.yaml on the live rig must
 * PASS (exit 0) with every fault kind landed and recovered, every mandatory protocol point
 * covered, the recovery-only points fired, the decisive composition landed in order (the worker killed while the store was
 * down), and a report that `clink-qual report` regenerates identically from the evidence.
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import { type FaultKind } from '../../lib/evidence.ts';
import { FAULT_KINDS } from '../../chaos/kinds.ts';
import { repoRoot, runsDir } from '../../lib/paths.ts';
import { assertDecisiveComposition, runPassingCampaign } from '../helpers/campaign.ts';

t.test('quick campaign passes', async (t) => {
  const runId = `ci-quick-${Date.now()}`;
  const { runDir, verdict, chaos, recovered } = runPassingCampaign(t, 'campaigns/quick.yaml', runId, 20 * 60_000);
  t.equal(readlinkSync(path.join(runsDir(), 'latest')), runId, 'runs/latest names this run (the runner points it there when the run starts)');
  t.ok(verdict.produced > 10_000, `a real workload: ${verdict.produced} events`);

  // quick.yaml is the seed's battery (the kinds QUAL-03 called "Unknown" are unknowns.yaml's):
  // it plans each of the seed's seven kinds, and every kind it plans landed and recovered.
  const plannedKinds = new Set(chaos.filter((c) => c.phase === 'planned').map((c) => c.kind));
  // Beyond the seed's battery: unknowns.yaml's kinds, and corruption.yaml's.
  const unknownKinds: readonly FaultKind[] = ['process-pause', 'store-tamper', 'disk-full', 'clock-step', 'state-corruption', 'lost-unsynced-writes', 'store-bitrot'];
  for (const kind of FAULT_KINDS.filter((k) => !unknownKinds.includes(k))) t.ok(plannedKinds.has(kind), `${kind} planned`);
  for (const kind of plannedKinds) {
    t.ok(chaos.some((c) => c.kind === kind && c.phase === 'landed' && recovered.has(c.faultId)), `${kind} landed and recovered`);
  }
  // Every protocol point the plan names fired and recovered, the recovery-only ones too
  // (they fire only once the composition's later worker kill causes a recovery).
  const plannedPoints = new Set(chaos.filter((c) => c.kind === 'protocol-point' && c.phase === 'planned').map((c) => c.point!));
  t.ok(plannedPoints.has('sink.recover.before-commit') && plannedPoints.has('sink.recover.after-commit'), 'the plan has both recovery points');
  for (const point of plannedPoints) {
    t.ok(chaos.some((c) => c.point === point && c.phase === 'landed' && recovered.has(c.faultId)), `${point} fired and recovered`);
  }
  // The decisive composition: the worker kill landed while the store was down.
  assertDecisiveComposition(t, chaos);

  const before = readFileSync(path.join(runDir, 'report.md'), 'utf8');
  const svgBefore = readFileSync(path.join(runDir, 'timeline.svg'), 'utf8');
  const rr = spawnSync(process.execPath, [path.join(repoRoot, 'bin/clink-qual.ts'), 'report', runDir], { cwd: repoRoot, encoding: 'utf8' });
  t.equal(rr.status, 0);
  t.equal(readFileSync(path.join(runDir, 'report.md'), 'utf8'), before, 'the report regenerated from the stored evidence equals the original');
  t.equal(readFileSync(path.join(runDir, 'timeline.svg'), 'utf8'), svgBefore, 'so does the timeline');
  t.match(before, /PASS/);
});
