/**
 * An aborted run heals its faults, keeps its evidence and says it was aborted: abort in
 * the middle of a partition and of a store pause (both active at once), then check that no
 * rule and no stopped process is left on any host, the logs were collected, and the
 * verdict and the report say ABORTED (exit code 2).
 */
import t from 'tap';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { runCampaign } from '../../campaigns/runner/run.ts';
import { Progress } from '../../campaigns/runner/progress.ts';
import { closeAllRemotes } from '../../rig/ssh.ts';
import { chaosOf, leftovers, writeCampaign } from '../helpers/campaign.ts';

t.teardown(() => closeAllRemotes());

const file = writeCampaign(
  'abort-test',
  `name: abort-test
seed: abort-1
workload: { rate: 100, partitions: 4, keys: 1000, checkpointIntervalS: 4, soakS: 180 }
gate: { deadlineS: 90, fault: worker-kill }
faults:
  - { kind: packet-loss, count: 1, targets: [worker-3], share: 0.1, durationS: 5 }
compositions:
  - name: cut-and-pause
    count: 1
    steps:
      - { kind: partition, targets: [worker-2], durationS: 100 }
      - { kind: store-outage, afterS: 1, durationS: 100 }
schedule: { startAfterS: 2, spacingS: 20 }
deadlines: { recoveryS: 60, drainS: 60, recountS: 60, sampleStuckS: 200 }
oracle: { sampleIntervalS: 3 }
`,
);

t.test('abort during a partition and a store pause heals both and keeps the evidence', async (t) => {
  const ac = new AbortController();
  const runId = `abort-test-${Date.now()}`;
  const watcher = setInterval(() => {
    const dir = path.join(process.cwd(), 'runs', runId);
    const landed = chaosOf(dir).filter((r) => r.phase === 'landed').map((r) => r.kind);
    if (landed.includes('partition') && landed.includes('store-outage')) ac.abort('test abort while a partition and a store pause are active');
  }, 500);
  // Cleared whatever happens: a live interval would keep this test's process running after a failure.
  t.teardown(() => clearInterval(watcher));
  const { runDir, verdict } = await runCampaign({ campaignFile: file, runId, signal: ac.signal, progress: new Progress() });
  clearInterval(watcher);
  t.ok(ac.signal.aborted, 'the abort fired while both faults were active');
  t.equal(verdict.verdict, 'ABORTED');
  t.equal(verdict.exitCode, 2);
  const chaos = chaosOf(runDir);
  for (const kind of ['partition', 'store-outage'] as const) {
    const landed = chaos.find((r) => r.kind === kind && r.phase === 'landed');
    t.ok(landed, `${kind} landed`);
    t.ok(chaos.find((r) => r.faultId === landed?.faultId && r.phase === 'healed'), `${kind} was healed`);
    t.notOk(chaos.find((r) => r.faultId === landed?.faultId && r.phase === 'recovered'), `${kind} is not counted as recovered`);
  }
  const left = await leftovers();
  t.same(left.filter((l) => l.rules > 0 || l.stopped.length > 0), [], 'no clink-qual rule and no stopped process left on any host');
  t.ok(existsSync(path.join(runDir, 'logs')) && readdirSync(path.join(runDir, 'logs')).length > 0, 'logs were collected');
  const report = readFileSync(path.join(runDir, 'report.md'), 'utf8');
  t.match(report, /ABORTED/, 'the report says the run was aborted');
});
