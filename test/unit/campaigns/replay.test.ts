import t from 'tap';
import { mkdtempSync, readFileSync, writeFileSync, cpSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadStoredRun, replaySchedule, shortenedSoakS } from '../../../campaigns/replay.ts';
import { planCampaign } from '../../../campaigns/plan.ts';

const FIXTURE = path.join(import.meta.dirname, '../../fixtures/run-fail');

t.test('a stored run loads with its own plan, and its resolved campaign re-plans to the same timeline', async (t) => {
  const s = loadStoredRun(FIXTURE);
  const storedPlan = JSON.parse(readFileSync(path.join(FIXTURE, 'plan.json'), 'utf8'));
  t.same(s.plan, storedPlan);
  t.equal(s.runId, 'quick-20260821-113000');
  t.equal(s.campaign.seed, 'quick-1');
  t.notOk('runId' in s.campaign, 'run-specific fields are dropped');
  t.notOk('topic' in s.campaign);
  t.same(s.campaign.oracle, { sampleIntervalS: 5 }, 'the oracle keeps only its own setting, not the old bucket prefix');
  t.same(planCampaign(s.campaign), storedPlan, 'the resolved campaign is the one that planned it');
  t.ok(s.campaignYaml && s.campaignYaml.length > 0);
});

t.test('a plain replay keeps every fault and the soak; a sub-plan keeps ids and times and records them', async (t) => {
  const s = loadStoredRun(FIXTURE);
  const all = replaySchedule({ stored: s });
  t.equal(all.plan, s.plan);
  t.equal(all.campaign.workload.soakS, s.campaign.workload.soakS);
  t.same(all.record, { replays: 'quick-20260821-113000', from: FIXTURE, faults: s.plan.map((f) => f.id), ofFaults: s.plan.length });
  const sub = s.plan.slice(0, 2);
  const soakS = shortenedSoakS(sub, s.campaign.workload.soakS, 30);
  t.equal(soakS, Math.max(30, sub[1]!.atS + (sub[1]!.durationS ?? 0) + 30));
  const r = replaySchedule({ stored: s, plan: sub, soakS });
  t.same(r.plan.map((f) => [f.id, f.atS]), sub.map((f) => [f.id, f.atS]));
  t.equal(r.campaign.workload.soakS, soakS);
  t.equal(r.campaign.workload.rate, s.campaign.workload.rate);
  t.same(r.record.faults, ['f001', 'f002']);
  t.equal(r.record.storedSoakS, s.campaign.workload.soakS);
  t.throws(() => replaySchedule({ stored: s, plan: [{ id: 'f999', kind: 'worker-kill', atS: 1 }] }), /not in/);
});

t.test('the shortened soak never exceeds the stored one and never drops below the floor', async (t) => {
  t.equal(shortenedSoakS([{ id: 'f1', kind: 'partition', atS: 250, durationS: 20 }], 300, 60), 300);
  t.equal(shortenedSoakS([{ id: 'f1', kind: 'worker-kill', atS: 5 }], 300, 10), 30);
  t.equal(shortenedSoakS([{ id: 'f1', kind: 'worker-kill', atS: 100 }], 300, 45), 145);
});

t.test('a directory without a stored schedule, or a broken plan, is refused with the file named', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cq-replay-'));
  t.throws(() => loadStoredRun(dir), /campaign\.resolved\.json does not exist/);
  cpSync(FIXTURE, dir, { recursive: true });
  writeFileSync(path.join(dir, 'plan.json'), JSON.stringify([{ id: 'f001', kind: 'worker-kill', atS: 1 }, { id: 'f001', kind: 'worker-kill', atS: 2 }]));
  t.throws(() => loadStoredRun(dir), /f001 appears twice/);
  writeFileSync(path.join(dir, 'plan.json'), JSON.stringify([{ id: 'f001', kind: 'meteor', atS: 1 }]));
  t.throws(() => loadStoredRun(dir), /unknown fault kind/);
});

t.test('the CLI refuses bad replay and shrink inputs with 254 before touching any rig', async (t) => {
  const { spawnSync } = await import('node:child_process');
  const repo = path.join(import.meta.dirname, '../../..');
  const cli = path.join(repo, 'bin', 'clink-qual.ts');
  const run = (...args: string[]) => spawnSync(process.execPath, [cli, ...args], { cwd: repo, encoding: 'utf8', timeout: 60_000, env: { ...process.env, CLINK_QUAL_RUNS: mkdtempSync(path.join(os.tmpdir(), 'cq-runs-')) } });
  const cases: [string[], RegExp][] = [
    [['campaign', 'run', '--replay', 'test/fixtures/run-fail', '--faults', 'f999'], /not in quick-20260821-113000's plan: f999/],
    [['campaign', 'run', '--replay', 'test/fixtures/run-fail', 'campaigns/quick.yaml'], /not both/],
    [['campaign', 'run', '--soak-s', '30', 'campaigns/quick.yaml'], /go with --replay/],
    [['campaign', 'run', '--replay', 'test/fixtures/run-fail', '--soak-s', '301'], /--soak-s: .*\(300\)/],
    [['campaign', 'shrink', 'test/fixtures/run-pass'], /PASS, not FAIL: nothing to shrink/],
    [['campaign', 'shrink', 'test/fixtures/run-aborted'], /only a finished FAILed run/],
    [['campaign', 'shrink', 'test/fixtures/run-fail', '--counter', 'gaps'], /did not raise gaps/],
  ];
  for (const [args, msg] of cases) {
    const r = run(...args);
    t.equal(r.status, 254, args.join(' '));
    t.match(r.stderr, msg);
  }
});
