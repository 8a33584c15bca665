/**
 * A controller that dies mid-fault strands no host (issue 30 item 4): a campaign run in its
 * own process lands a 20 s partition, and the process is SIGKILLed at once, so no heal of
 * its own ever runs. The partitioned host's dead-man timer (rig/dead-man.ts), set when the
 * partition landed, must remove the rules by itself: not before the partition's planned 20
 * s, and by 20 s + DEAD_MAN_MARGIN_S (plus a few seconds of polling). Afterwards no timer is
 * left on the host. The engine the killed run left behind is cleaned by the next run's
 * preflight, as after any crash.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import t from 'tap';
import { repoRoot } from '../../lib/paths.ts';
import { poll } from '../../lib/retry.ts';
import { DEAD_MAN_MARGIN_S } from '../../rig/dead-man.ts';
import { closeAllRemotes, remoteFor } from '../../rig/ssh.ts';
import { readRigState } from '../../rig/state.ts';
import { chaosOf, writeCampaign } from '../helpers/campaign.ts';

t.teardown(() => closeAllRemotes());

const cliPath = path.join(repoRoot, 'bin', 'clink-qual.ts');
const DURATION_S = 20;

const campaign = writeCampaign(
  'dead-man',
  `name: dead-man
seed: dead-man-1
workload: { rate: 100, partitions: 4, keys: 1000, checkpointIntervalS: 4, soakS: 60 }
gate: { deadlineS: 90, fault: worker-kill }
faults:
  - { kind: partition, count: 1, targets: [worker-2], durationS: ${DURATION_S} }
schedule: { startAfterS: 2, spacingS: 20 }
deadlines: { recoveryS: 60, drainS: 60, recountS: 60, sampleStuckS: 60 }
oracle: { sampleIntervalS: 3 }
`,
);

async function onWorker2(cmd: string): Promise<string> {
  const h = readRigState().hosts.find((x) => x.name === 'worker-2')!;
  return (await remoteFor(h).exec(cmd, { check: false })).stdout.trim();
}

t.test('a SIGKILLed controller leaves no host partitioned: the host heals itself by its own timer', async (t) => {
  const runId = `dead-man-${Date.now()}`;
  const runDir = path.join(process.cwd(), 'runs', runId);
  const child = spawn(process.execPath, [cliPath, 'campaign', 'run', campaign, '--run-id', runId], { stdio: 'ignore' });
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  const landed = await poll(() => chaosOf(runDir).find((r) => r.kind === 'partition' && r.phase === 'landed') ?? (child.exitCode !== null ? false : null), { deadlineMs: 300_000, intervalMs: 200 });
  t.ok(landed, 'the partition landed');
  if (!landed) return;
  child.kill('SIGKILL');
  const killedAt = Date.now();
  await new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r(null) : child.once('exit', r)));
  const deadMan = (landed.evidence as { deadMan?: { host: string; pid: number; afterS: number } }).deadMan;
  t.ok(deadMan && deadMan.pid > 1, `the landing evidence names the host's timer: ${JSON.stringify(deadMan)}`);
  t.equal(deadMan?.afterS, DURATION_S + DEAD_MAN_MARGIN_S, 'set for the duration plus the margin');
  const landedAt = Date.parse(landed.t);
  const rules = async () => Number((await onWorker2(`iptables -w 5 -S | grep -c 'clink-qual:${landed.faultId}' || true`)) || 0);
  t.ok((await rules()) > 0, 'the rules are in place after the controller died');
  t.notOk(chaosOf(runDir).some((r) => r.faultId === landed.faultId && r.phase === 'healed'), 'and no heal was ever recorded');
  const gone = await poll(async () => ((await rules()) === 0 ? Date.now() : null), { deadlineMs: (DURATION_S + DEAD_MAN_MARGIN_S + 30) * 1000, intervalMs: 500 });
  t.ok(gone, 'the host removed the rules by itself');
  if (gone) {
    const afterS = (gone - landedAt) / 1000;
    t.ok(afterS >= DURATION_S, `not before the partition's planned end (${afterS.toFixed(1)} s after it landed)`);
    t.ok(afterS <= DURATION_S + DEAD_MAN_MARGIN_S + 10, `within its duration plus the margin (${afterS.toFixed(1)} s; the controller died ${((killedAt - landedAt) / 1000).toFixed(1)} s after the landing)`);
  }
  t.equal(await onWorker2(`pgrep -f -- '[c]link-qual-deadman:${landed.faultId};' | wc -l`), '0', 'no timer is left');
});
