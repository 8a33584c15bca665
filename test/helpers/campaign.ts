/** Helpers for campaign tests on the live rig: write a campaign file, read a run's evidence, check the rig is clean. */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChaosRecord } from '../../lib/evidence.ts';
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
