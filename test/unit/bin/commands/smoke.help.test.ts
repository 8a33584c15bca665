/**
 * `smoke --help` names the fault kinds campaigns/quick.yaml really schedules, and of how many
 * (issue 29 item 6: it said "every fault kind" while quick schedules 7 of the 11).
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import t from 'tap';
import { loadCampaign } from '../../../../campaigns/load.ts';
import { FAULT_KINDS } from '../../../../chaos/kinds.ts';
import { repoRoot } from '../../../../lib/paths.ts';

t.test("smoke --help names the fault kinds quick.yaml really schedules, of how many", async (t) => {
  const c = loadCampaign(path.join(repoRoot, 'campaigns', 'quick.yaml'));
  const scheduled = new Set<string>([...c.faults.map((f) => f.kind), ...(c.compositions ?? []).flatMap((comp) => comp.steps.map((s) => s.kind))]);
  const r = spawnSync(process.execPath, [path.join(repoRoot, 'bin', 'clink-qual.ts'), 'smoke', '--help'], { cwd: repoRoot, encoding: 'utf8', timeout: 60_000 });
  t.equal(r.status, 0, r.stderr);
  const m = /(\d+) of the (\d+) fault kinds: ([a-z, -]+);/.exec(r.stdout.replace(/\s*\n\s*/g, ' '));
  t.ok(m, 'the help says how many kinds, and which');
  t.equal(Number(m?.[1]), scheduled.size, `quick.yaml schedules ${scheduled.size} kinds`);
  t.equal(Number(m?.[2]), FAULT_KINDS.length, `of ${FAULT_KINDS.length}`);
  t.same(m?.[3]!.split(', ').sort(), [...scheduled].sort(), 'the very kinds quick.yaml schedules');
  t.notMatch(r.stdout, /every fault kind/i);
});
