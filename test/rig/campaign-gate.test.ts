/**
 * The gate-failure path: an engine plug that says its sink family is one the workers never
 * open (so no worker's open-time log line confirms it) must end in GATE FAILED, exit 1,
 * without any soak fault.
 */
import t from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Engine } from '../../engine/engine.ts';
import { loadEngine } from '../../engine/index.ts';
import { runCampaign } from '../../campaigns/runner/run.ts';
import { Progress } from '../../campaigns/runner/progress.ts';
import type { GateResult } from '../../lib/evidence.ts';
import { chaosOf, writeCampaign } from '../helpers/campaign.ts';

const file = writeCampaign(
  'gate-test',
  `name: gate-test
seed: gate-1
workload: { rate: 100, partitions: 4, keys: 1000, checkpointIntervalS: 4, soakS: 60 }
gate: { deadlineS: 20, fault: worker-kill }
faults:
  - { kind: worker-kill, count: 1, targets: [worker-1] }
schedule: { startAfterS: 5, spacingS: 20 }
`,
);

t.test('a sink that never opens fails the gate and nothing soaks', async (t) => {
  const base = loadEngine('clink');
  const engine = new Proxy(base, {
    get(target, prop) {
      if (prop === 'sinkFamily') return 'sink_that_never_opens';
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  }) as Engine;
  const { runDir, verdict } = await runCampaign({ campaignFile: file, engine, runId: `gate-test-${Date.now()}`, progress: new Progress() });
  t.equal(verdict.verdict, 'GATE_FAILED');
  t.equal(verdict.schemaVersion, 3);
  t.same(verdict.classifiedReasons?.map((r) => r.class), verdict.reasons.map(() => 'coverage'), 'a failed gate is a coverage failure');
  t.same([verdict.campaign, verdict.seed, verdict.engine?.name], ['gate-test', 'gate-1', 'clink'], 'verdict.json says what it is about');
  t.equal(verdict.exitCode, 1);
  const gate = JSON.parse(readFileSync(path.join(runDir, 'gate.json'), 'utf8')) as GateResult;
  t.equal(gate.passed, false);
  const sink = gate.conditions.find((c) => c.name.includes('sink_that_never_opens'));
  t.equal(sink?.passed, false, 'the sink condition failed');
  t.ok(gate.conditions.find((c) => c.name === 'input flowing')?.passed, 'input was flowing (the gate failed for the right reason)');
  t.same(chaosOf(runDir).filter((r) => r.faultId.startsWith('f')), [], 'no soak fault was planned or landed');
  t.ok(existsSync(path.join(runDir, 'report.md')));
  t.match(readFileSync(path.join(runDir, 'report.md'), 'utf8'), /GATE_FAILED/);
});
