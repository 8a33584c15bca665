/** Helpers for campaign tests on the live rig: write a campaign file, read a run's evidence, check the rig is clean. */
import type { Test } from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChaosRecord, Verdict } from '../../lib/evidence.ts';
import { repoRoot, runsDir } from '../../lib/paths.ts';
import { remoteFor } from '../../rig/ssh.ts';
import { readRigState } from '../../rig/state.ts';

export function writeCampaign(name: string, yaml: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cq-campaign-'));
  const file = path.join(dir, `${name}.yaml`);
  writeFileSync(file, yaml);
  return file;
}

export function readJsonl<T>(file: string): T[] {
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as T);
}

export function chaosOf(runDir: string): ChaosRecord[] {
  return readJsonl<ChaosRecord>(path.join(runDir, 'chaos.jsonl'));
}

/** Per host: clink-qual iptables rules left, and processes in state T (stopped) among the rig's services. */
export async function leftovers(): Promise<{ host: string; rules: number; stopped: string[] }[]> {
  const rig = readRigState();
  return Promise.all(
    rig.hosts.map(async (h) => {
      const r = remoteFor(h);
      const rules = await r.exec(`iptables -w 5 -S | grep -c 'clink-qual' || true`, { check: false });
      const stopped = await r.exec(
        `for f in ${h.dataDir}/services/*/pid; do [ -f "$f" ] || continue; p=$(cat "$f"); [ -r /proc/$p/stat ] || continue; s=$(sed 's/.*) //' /proc/$p/stat | cut -d' ' -f1); [ "$s" = T ] && echo "$(basename $(dirname $f)):$p"; done; true`,
        { check: false },
      );
      return { host: h.name, rules: Number(rules.stdout.trim() || 0), stopped: stopped.stdout.split('\n').filter(Boolean) };
    }),
  );
}

/**
 * Runs `clink-qual campaign run <campaign> --run-id <runId>` through the real CLI, as a user
 * does, and asserts what every passing campaign shows: exit 0, a PASS verdict, no protocol
 * point left uncovered, and every produced event committed exactly once. Returns the run's
 * directory, its verdict, its chaos log and the ids of the faults that recovered.
 */
export function runPassingCampaign(t: Test, campaign: string, runId: string, timeoutMs: number): { runDir: string; verdict: Verdict; chaos: ChaosRecord[]; recovered: Set<string> } {
  const runDir = path.join(runsDir(), runId);
  const r = spawnSync(process.execPath, [path.join(repoRoot, 'bin/clink-qual.ts'), 'campaign', 'run', campaign, '--run-id', runId], {
    cwd: repoRoot,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    timeout: timeoutMs,
  });
  t.equal(r.status, 0, `exit 0 (stdout: ${r.stdout.slice(-1500)})`);
  const verdict = JSON.parse(readFileSync(path.join(runDir, 'verdict.json'), 'utf8')) as Verdict;
  t.equal(verdict.verdict, 'PASS', verdict.reasons.join('; '));
  t.same(verdict.uncoveredFaultPoints, []);
  t.equal(verdict.committedDistinct, verdict.produced);
  const chaos = chaosOf(runDir);
  const recovered = new Set(chaos.filter((c) => c.phase === 'recovered').map((c) => c.faultId));
  return { runDir, verdict, chaos, recovered };
}

/**
 * Asserts the decisive composition (store-down-during-worker-recovery) landed in order: the
 * worker killed while the store (`store`, as the message names it) was down.
 */
export function assertDecisiveComposition(t: Test, chaos: ChaosRecord[], store = 'the store'): void {
  const comp = chaos.filter((c) => c.composition?.startsWith('store-down-during-worker-recovery'));
  const storeLanded = comp.find((c) => c.kind === 'store-outage' && c.phase === 'landed');
  const storeHealed = comp.find((c) => c.kind === 'store-outage' && c.phase === 'healed');
  const killLanded = comp.find((c) => c.kind === 'worker-kill' && c.phase === 'landed');
  t.ok(storeLanded && storeHealed && killLanded, 'the composition landed');
  t.ok(storeLanded!.t <= killLanded!.t && killLanded!.t < storeHealed!.t, `the worker was killed while ${store} was down`);
}
