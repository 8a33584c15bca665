/**
 * One run per rig (issue 29): while a campaign runs with a partition in force, a second
 * `campaign run` started by an unrelated process (no ancestor holds the rig lock: it is
 * re-parented away from the test runner with `setsid -f`) is refused with exit 2, naming the
 * holder; `rig status` names the holder too; and the first run's partition is untouched (its
 * rules are still in place after the refusal, and it is healed only at its planned time).
 *
 * Under the test runner the holder is the runner itself (`clink-qual test` takes the lock and
 * its children use the rig under it), so that is the holder the refusal must name.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { runCampaign } from '../../campaigns/runner/run.ts';
import { Progress } from '../../campaigns/runner/progress.ts';
import { repoRoot } from '../../lib/paths.ts';
import { poll } from '../../lib/retry.ts';
import { rigHolder } from '../../rig/lock.ts';
import { closeAllRemotes, remoteFor } from '../../rig/ssh.ts';
import { readRigState } from '../../rig/state.ts';
import { chaosOf, writeCampaign } from '../helpers/campaign.ts';

t.teardown(() => closeAllRemotes());

const cliPath = path.join(repoRoot, 'bin', 'clink-qual.ts');

const first = writeCampaign(
  'lock-first',
  `name: lock-first
seed: lock-1
workload: { rate: 100, partitions: 4, keys: 1000, checkpointIntervalS: 4, soakS: 50 }
gate: { deadlineS: 90, fault: worker-kill }
faults:
  - { kind: partition, count: 1, targets: [worker-2], durationS: 30 }
schedule: { startAfterS: 2, spacingS: 20 }
deadlines: { recoveryS: 60, drainS: 60, recountS: 60, sampleStuckS: 60 }
oracle: { sampleIntervalS: 3 }
`,
);

/** Runs the CLI in a process whose parent is not this test (setsid -f), and returns its exit code and output. */
async function unrelated(args: string[]): Promise<{ code: number; out: string }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cq-lock-'));
  const out = path.join(dir, 'out');
  const code = path.join(dir, 'code');
  const quoted = [process.execPath, cliPath, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const child = spawn('setsid', ['-f', 'sh', '-c', `${quoted} > '${out}' 2>&1; echo $? > '${code}'`], { stdio: 'ignore' });
  await new Promise((r) => child.once('exit', r));
  const done = await poll(() => (existsSync(code) && readFileSync(code, 'utf8').trim() !== '' ? true : null), { deadlineMs: 120_000, intervalMs: 200 });
  if (!done) throw new Error(`the unrelated command did not finish: ${args.join(' ')}`);
  return { code: Number(readFileSync(code, 'utf8').trim()), out: readFileSync(out, 'utf8') };
}

async function partitionRules(host: string): Promise<number> {
  const h = readRigState().hosts.find((x) => x.name === host)!;
  const r = await remoteFor(h).exec(`iptables -w 5 -S | grep -c 'clink-qual' || true`, { check: false });
  return Number(r.stdout.trim() || 0);
}

t.test('a second campaign run is refused while one runs, naming the holder, and the first run keeps its partition', async (t) => {
  const holder = rigHolder();
  t.ok(holder, `the rig lock is held while the rig tests run (${holder ? `pid ${holder.pid}, ${holder.command}` : 'no holder'})`);
  const runId = `lock-first-${Date.now()}`;
  const runDir = path.join(process.cwd(), 'runs', runId);
  let second: { code: number; out: string } | undefined;
  let rulesBefore = -1;
  let rulesAfter = -1;
  let status = '';
  let checking = false;
  const watcher = setInterval(() => {
    if (checking || second) return;
    const chaos = chaosOf(runDir);
    const landed = chaos.find((r) => r.kind === 'partition' && r.phase === 'landed');
    if (!landed || chaos.some((r) => r.faultId === landed.faultId && r.phase === 'healed')) return;
    checking = true;
    void (async () => {
      rulesBefore = await partitionRules('worker-2');
      second = await unrelated(['campaign', 'run', first]);
      status = spawnSync(process.execPath, [cliPath, 'rig', 'status'], { encoding: 'utf8' }).stdout;
      rulesAfter = await partitionRules('worker-2');
    })();
  }, 500);
  // Cleared whatever happens: a live interval would keep this test's process running after a failure.
  t.teardown(() => clearInterval(watcher));
  const { verdict } = await runCampaign({ campaignFile: first, runId, progress: new Progress() });
  clearInterval(watcher);
  await poll(() => (second && rulesAfter >= 0 ? true : null), { deadlineMs: 60_000, intervalMs: 200 });
  t.ok(second, 'the second run was tried while the partition was in force');
  t.equal(second?.code, 2, `the second run exits 2: ${second?.out.trim().split('\n').pop()}`);
  t.match(second?.out ?? '', new RegExp(`the rig is in use by pid ${holder?.pid}`), 'and names the holder');
  t.match(status, new RegExp(`${holder?.pid}`), `rig status names the holder`);
  t.ok(rulesBefore > 0, `the partition's rules were in place before the second run (${rulesBefore})`);
  t.equal(rulesAfter, rulesBefore, "and after it: the second run's preflight did not heal the first run's fault");
  const chaos = chaosOf(runDir);
  const landed = chaos.find((r) => r.kind === 'partition' && r.phase === 'landed')!;
  const healed = chaos.find((r) => r.faultId === landed.faultId && r.phase === 'healed')!;
  const heldS = (Date.parse(healed.t) - Date.parse(landed.t)) / 1000;
  t.ok(heldS >= 29, `the partition was healed at its planned time, held ${heldS.toFixed(1)} s of 30`);
  t.notMatch(verdict.reasons.join('\n'), /recount: |oracle: /, 'the first run shows no counter raised');
});
