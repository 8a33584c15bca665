/**
 * What a crashed controller leaves behind does not carry into the next run.
 *
 * 1. SIGHUP (the operator's SSH session dropped) is handled like SIGINT: a campaign run in
 *    its own process, hung up while a long partition is active, heals it, marks the run
 *    ABORTED and exits 2, leaving no tagged rule.
 * 2. The preflight every run goes through (campaigns/runner/preflight.ts, called by
 *    runCampaign before the gate) heals a tagged iptables rule and a SIGSTOPped broker left
 *    on the rig, records both, and then finds every service as it should be.
 */
import t from 'tap';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { preflight } from '../../campaigns/runner/preflight.ts';
import type { Verdict } from '../../lib/evidence.ts';
import { poll } from '../../lib/retry.ts';
import { healAll, pauseService } from '../../rig/faults.ts';
import { KAFKA_SERVICE } from '../../rig/kafka.ts';
import { listServices } from '../../rig/services.ts';
import { closeAllRemotes, remoteFor } from '../../rig/ssh.ts';
import { readRigState } from '../../rig/state.ts';
import { chaosOf, leftovers, writeCampaign } from '../helpers/campaign.ts';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const rig = readRigState();
const remote = (n: string) => remoteFor(rig.hosts.find((h) => h.name === n)!);
t.teardown(async () => {
  await healAll(rig);
  await closeAllRemotes();
});

t.test('SIGHUP aborts a run like SIGINT: the active partition is healed, ABORTED, exit 2', async (t) => {
  const file = writeCampaign(
    'hup-test',
    `name: hup-test
seed: hup-1
workload: { rate: 50, partitions: 4, keys: 100, checkpointIntervalS: 3, soakS: 120 }
gate: { deadlineS: 90, fault: worker-kill }
faults:
  - { kind: partition, count: 1, targets: [worker-2], durationS: 100 }
schedule: { startAfterS: 1, spacingS: 60 }
deadlines: { recoveryS: 60, drainS: 30, recountS: 60, sampleStuckS: 200 }
oracle: { sampleIntervalS: 3 }
`,
  );
  const runId = `hup-test-${Date.now()}`;
  const runDir = path.join(repo, 'runs', runId);
  const child = spawn(process.execPath, [path.join(repo, 'bin', 'clink-qual.ts'), 'campaign', 'run', file, '--run-id', runId], { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.on('exit', (code, signal) => r({ code, signal })));
  const seen = await poll(
    () => (child.exitCode !== null ? 'exited' : chaosOf(runDir).some((r) => r.kind === 'partition' && r.phase === 'landed' && r.faultId !== 'g001') ? 'landed' : null),
    { deadlineMs: 240_000, intervalMs: 500 },
  );
  const hungUp = seen === 'landed';
  if (hungUp) child.kill('SIGHUP');
  t.ok(hungUp, `the partition landed and the run was hung up (${err.slice(-500)})`);
  const { code, signal } = await exited;
  t.equal(signal, null, 'the process was not killed by the signal');
  t.equal(code, 2, `exit 2 (${err.slice(-500)})`);
  const v = existsSync(path.join(runDir, 'verdict.json')) ? (JSON.parse(readFileSync(path.join(runDir, 'verdict.json'), 'utf8')) as Verdict) : null;
  t.equal(v?.verdict, 'ABORTED');
  const landed = chaosOf(runDir).find((r) => r.kind === 'partition' && r.phase === 'landed' && r.faultId !== 'g001');
  t.ok(chaosOf(runDir).some((r) => r.faultId === landed?.faultId && r.phase === 'healed'), 'the partition was healed on SIGHUP');
  t.same((await leftovers()).filter((l) => l.rules > 0 || l.stopped.length > 0), [], 'no rule and no stopped process left');
});

t.test("the next run's preflight heals a leftover tagged rule and a SIGSTOPped broker, then checks every service", async (t) => {
  // What a SIGKILLed controller would leave: a tagged DROP rule on worker-1, broker-2 stopped.
  const w = remote('worker-1');
  await w.exec(`iptables -w 5 -I OUTPUT -d 10.231.0.254 -m comment --comment clink-qual:leftover-t1 -j DROP`);
  const b = remote('broker-2');
  const paused = await pauseService(b, KAFKA_SERVICE);
  t.equal(paused.state, 'T', 'broker-2 is stopped (T) before the preflight');
  const before = await leftovers();
  t.ok(before.find((l) => l.host === 'worker-1')!.rules > 0, 'the rule is in place before the preflight');
  t.ok(before.find((l) => l.host === 'broker-2')!.stopped.length > 0, 'the stopped broker shows before the preflight');

  const lines: string[] = [];
  const pre = await preflight(rig, remote, (l) => lines.push(l));
  t.equal(pre.leftovers, true, 'leftovers were found');
  t.equal(pre.healed.find((h) => h.host === 'worker-1')?.rules, 1, 'the rule on worker-1 was removed and recorded');
  t.same(pre.healed.find((h) => h.host === 'broker-2')?.resumed, [KAFKA_SERVICE], 'broker-2 was resumed and recorded');
  t.ok(lines.some((l) => /healed leftovers on worker-1: 1 iptables rule/.test(l)), lines.join('\n'));
  t.same(pre.checks.map((c) => [c.name, c.passed]), [
    ['no clink-qual iptables rule', true],
    ['no stopped process', true],
    ['every broker up', true],
    ['store answering', true],
  ]);
  t.match(pre.checks.find((c) => c.name === 'every broker up')!.evidence, /registered, quorum leader/);
  t.same((await leftovers()).filter((l) => l.rules > 0 || l.stopped.length > 0), [], 'nothing left after the preflight');
  t.equal((await listServices(b)).find((s) => s.name === KAFKA_SERVICE)?.state, 'running');

  // A clean rig: nothing to heal, the same checks pass.
  const again = await preflight(rig, remote, () => {});
  t.equal(again.leftovers, false, 'a clean rig has no leftovers');
  t.ok(again.checks.every((c) => c.passed));
});
