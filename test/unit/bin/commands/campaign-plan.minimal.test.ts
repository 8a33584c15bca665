import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

// Issue 29 item 6, through the CLI: campaigns/minimal.yaml (the README's first campaign)
// plans with no warning that it cannot PASS, and a campaign without `schedule` takes the
// default one instead of failing with "schedule: required".
const repo = path.join(import.meta.dirname, '../../../..');
const cli = path.join(repo, 'bin', 'clink-qual.ts');
const run = (...args: string[]) => spawnSync(process.execPath, [cli, ...args], { cwd: repo, encoding: 'utf8', timeout: 60_000 });

const MANDATORY = ['sink.before-prepare', 'sink.after-prepare', 'coordinator.before-complete-record', 'coordinator.after-complete-record', 'sink.before-commit', 'sink.after-commit'];

interface PlanJson {
  header: { schedule?: { startAfterS: number; spacingS: number } };
  faults: { atS: number; kind: string; point?: string }[];
}

t.test('campaigns/minimal.yaml plans every mandatory point, with no warning, in at most 15 lines of YAML', async (t) => {
  const r = run('campaign', 'plan', 'campaigns/minimal.yaml');
  t.equal(r.status, 0, r.stderr);
  t.equal(r.stderr, '', 'nothing on stderr: no warning that it cannot reach a PASS');
  t.notMatch(r.stdout, /warning|cannot|will FAIL/i);
  const j = run('campaign', 'plan', 'campaigns/minimal.yaml', '--json');
  t.equal(j.status, 0, j.stderr);
  const plan = JSON.parse(j.stdout) as PlanJson;
  t.same([...new Set(plan.faults.map((f) => f.point))].sort(), [...MANDATORY].sort(), 'the six mandatory protocol points, each planned');
  const { readFileSync } = await import('node:fs');
  const yamlLines = readFileSync(path.join(repo, 'campaigns', 'minimal.yaml'), 'utf8').split('\n').filter((l) => l.trim() && !l.trim().startsWith('#'));
  t.ok(yamlLines.length <= 15, `${yamlLines.length} lines of YAML besides comments`);
});

t.test('a campaign without schedule gets the default one: a slot every 15 s from 10 s', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cq-minimal-'));
  const file = path.join(dir, 'c.yaml');
  writeFileSync(file, 'name: c\nseed: s\nworkload: { rate: 100, soakS: 120 }\nfaults:\n  - { kind: worker-kill, count: 3 }\n');
  const r = run('campaign', 'plan', file, '--json');
  t.equal(r.status, 0, r.stderr);
  const plan = JSON.parse(r.stdout) as PlanJson;
  const at = plan.faults.map((f) => f.atS).sort((a, b) => a - b);
  t.equal(at.length, 3);
  // Slots at 10, 25, 40 s, each moved later by at most the default jitter (15 / 4 = 3 s).
  [10, 25, 40].forEach((slot, i) => t.ok(at[i]! >= slot && at[i]! <= slot + 3, `fault ${i + 1} at ${at[i]} s, in the slot at ${slot} s`));
});

t.test('a default schedule that does not fit the soak says what to add, with an example', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cq-minimal-'));
  const file = path.join(dir, 'c.yaml');
  writeFileSync(file, 'name: c\nseed: s\nworkload: { rate: 100, soakS: 60 }\nfaults:\n  - { kind: worker-kill, count: 5 }\n');
  const r = run('campaign', 'plan', file);
  t.equal(r.status, 254);
  t.match(r.stderr, /schedule\.spacingS: the schedule does not fit in the soak: startAfterS 10 s \+ 5 fault slots × spacingS 15 s = 85 s > workload\.soakS 60 s \(spacingS is the default, 15 s: give a longer workload\.soakS, or a schedule, e\.g\. 'schedule: \{ startAfterS: 10, spacingS: 10 \}'\)/);
  // The example it gives is itself a schedule that fits.
  writeFileSync(file, 'name: c\nseed: s\nworkload: { rate: 100, soakS: 60 }\nfaults:\n  - { kind: worker-kill, count: 5 }\nschedule: { startAfterS: 10, spacingS: 10 }\n');
  t.equal(run('campaign', 'plan', file).status, 0, 'the example fits');
});
