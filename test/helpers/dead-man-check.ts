/**
 * The dead-man check of issue 30 item 4, shared by the local rig's test (test/rig/dead-man.test.ts)
 * and the bare inventory hosts' (test/rig/inventory-bare.test.ts): a campaign run in its own
 * process lands a partition of one host, and the process is SIGKILLed at once, so no heal of
 * its own ever runs. The host's dead-man timer (rig/dead-man.ts), set when the partition
 * landed, must remove the rules by itself: not before the partition's planned duration, and
 * by the duration plus DEAD_MAN_MARGIN_S (plus a few seconds of polling). Afterwards no timer
 * is left on the host.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import { repoRoot, runsDir } from '../../lib/paths.ts';
import { poll } from '../../lib/retry.ts';
import { DEAD_MAN_MARGIN_S } from '../../rig/dead-man.ts';
import { chaosOf, writeCampaign } from './campaign.ts';

/** The partition's planned duration. */
export const DEAD_MAN_PARTITION_S = 10;

/** A campaign whose one fault is a DEAD_MAN_PARTITION_S partition of `target`; `rig` is its rig line (the local rig when omitted). */
export function deadManCampaign(target: string, rig?: string): string {
  return writeCampaign(
    'dead-man',
    `name: dead-man
seed: dead-man-1
${rig ? `rig: ${rig}\n` : ''}workload: { rate: 100, partitions: 4, keys: 1000, checkpointIntervalS: 4, soakS: 60 }
gate: { deadlineS: 90, fault: worker-kill }
faults:
  - { kind: partition, count: 1, targets: [${target}], durationS: ${DEAD_MAN_PARTITION_S} }
schedule: { startAfterS: 2, spacingS: 20 }
deadlines: { recoveryS: 60, drainS: 60, recountS: 60, sampleStuckS: 60 }
oracle: { sampleIntervalS: 3 }
`,
  );
}

/**
 * Runs `campaign` through the CLI, SIGKILLs it the moment its partition landed, and checks
 * that the partitioned host healed itself by its own timer. `onHost` runs a command on that
 * host and returns its standard output.
 */
export async function checkControllerKillHeals(t: Test, campaign: string, onHost: (cmd: string) => Promise<string>, runIdPrefix = 'dead-man'): Promise<void> {
  const runId = `${runIdPrefix}-${Date.now()}`;
  const runDir = path.join(runsDir(), runId);
  // The run's own output, kept for the message when it ends before its partition landed.
  const outFile = path.join(os.tmpdir(), `${runId}.out`);
  const out = openSync(outFile, 'w');
  const child = spawn(process.execPath, [path.join(repoRoot, 'bin', 'clink-qual.ts'), 'campaign', 'run', campaign, '--run-id', runId], { stdio: ['ignore', out, out] });
  closeSync(out);
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(outFile, { force: true });
  });
  // poll goes on past a false: a run that ended is an answer of its own.
  const seen = await poll(() => chaosOf(runDir).find((r) => r.kind === 'partition' && r.phase === 'landed') ?? (child.exitCode !== null ? ('ended' as const) : null), { deadlineMs: 300_000, intervalMs: 200 });
  const landed = seen && seen !== 'ended' ? seen : undefined;
  t.ok(landed, `the partition landed${landed ? '' : ` (the run ${seen === 'ended' ? `ended with exit ${child.exitCode}` : 'did not land it within 300 s'}: ${readFileSync(outFile, 'utf8').slice(-1500)})`}`);
  if (!landed) return;
  child.kill('SIGKILL');
  const killedAt = Date.now();
  await new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r(null) : child.once('exit', r)));
  const deadMan = (landed.evidence as { deadMan?: { host: string; pid: number; afterS: number } }).deadMan;
  t.ok(deadMan && deadMan.pid > 1, `the landing evidence names the host's timer: ${JSON.stringify(deadMan)}`);
  t.equal(deadMan?.afterS, DEAD_MAN_PARTITION_S + DEAD_MAN_MARGIN_S, 'set for the duration plus the margin');
  const landedAt = Date.parse(landed.t);
  const rules = async () => Number((await onHost(`iptables -w 5 -S | grep -c 'clink-qual:${landed.faultId}' || true`)) || 0);
  t.ok((await rules()) > 0, 'the rules are in place after the controller died');
  t.notOk(chaosOf(runDir).some((r) => r.faultId === landed.faultId && r.phase === 'healed'), 'and no heal was ever recorded');
  const gone = await poll(async () => ((await rules()) === 0 ? Date.now() : null), { deadlineMs: (DEAD_MAN_PARTITION_S + DEAD_MAN_MARGIN_S + 30) * 1000, intervalMs: 500 });
  t.ok(gone, 'the host removed the rules by itself');
  if (gone) {
    const afterS = (gone - landedAt) / 1000;
    t.ok(afterS >= DEAD_MAN_PARTITION_S, `not before the partition's planned end (${afterS.toFixed(1)} s after it landed)`);
    t.ok(afterS <= DEAD_MAN_PARTITION_S + DEAD_MAN_MARGIN_S + 10, `within its duration plus the margin (${afterS.toFixed(1)} s; the controller died ${((killedAt - landedAt) / 1000).toFixed(1)} s after the landing)`);
  }
  t.equal(await onHost(`pgrep -f -- '[c]link-qual-deadman:${landed.faultId};' | wc -l`), '0', 'no timer is left');
}
