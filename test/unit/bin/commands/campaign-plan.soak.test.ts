import t from 'tap';
import { spawnSync } from 'node:child_process';
import path from 'node:path';

// Issue 29 item 4, through the CLI: `--soak` longer than the file's stretches the schedule
// with it, so quick.yaml under --soak 2h spreads its faults over the two hours instead of
// keeping them all in the first five minutes; both commands' --help say so.
const repo = path.join(import.meta.dirname, '../../../..');
const cli = path.join(repo, 'bin', 'clink-qual.ts');
const run = (...args: string[]) => spawnSync(process.execPath, [cli, ...args], { cwd: repo, encoding: 'utf8', timeout: 60_000 });

interface PlanJson {
  header: { overrides: { soakS: { old: number; new: number }; schedule: { spacingS: { old: number; new: number }; jitterS: { old: number; new: number } } } };
  faults: { atS: number; composition?: string }[];
}

t.test('plan quick.yaml --soak 2h: the slots are 415 s apart and the faults reach past the first hour', async (t) => {
  const base = run('campaign', 'plan', 'campaigns/quick.yaml', '--json');
  t.equal(base.status, 0, base.stderr);
  const baseFaults = (JSON.parse(base.stdout) as PlanJson).faults;
  const r = run('campaign', 'plan', 'campaigns/quick.yaml', '--soak', '2h', '--json');
  t.equal(r.status, 0, r.stderr);
  const plan = JSON.parse(r.stdout) as PlanJson;
  t.same(plan.header.overrides.soakS, { old: 260, new: 7200 });
  t.same(plan.header.overrides.schedule, { spacingS: { old: 15, new: 415 }, jitterS: { old: 3, new: 83 } }, 'spacing and jitter scaled by 7200 / 260, rounded');
  t.equal(plan.faults.length, baseFaults.length, 'the same faults');
  const last = Math.max(...plan.faults.map((f) => f.atS));
  t.ok(last > 7200 / 2, `the last fault lands in the second half of the soak (at ${last} s)`);
  t.ok(last <= 7200, 'and inside it');
  // The same share of the soak as in the file: the file's last fault at x s of 260, this one near (7200 / 260)x of 7200.
  const baseLast = Math.max(...baseFaults.map((f) => f.atS));
  t.ok(Math.abs(last / 7200 - baseLast / 260) < 0.1, `faults end at ${(last / 72).toFixed(0)}% of the soak, as at ${((baseLast / 260) * 100).toFixed(0)}% in the file`);
  const slotStarts = [...new Set(plan.faults.filter((f) => !f.composition).map((f) => f.atS))].sort((a, b) => a - b);
  for (let i = 1; i < slotStarts.length; i++) t.ok(slotStarts[i]! - slotStarts[i - 1]! >= 415 - 83, `lone faults ${slotStarts[i - 1]} s and ${slotStarts[i]} s are a stretched slot apart`);
  const text = run('campaign', 'plan', 'campaigns/quick.yaml', '--soak', '2h');
  t.match(text.stdout, /overrides: soak 260 s → 7200 s, spacing 15 s → 415 s, jitter 3 s → 83 s \(stretched with the soak\)/);
});

t.test('a shorter --soak keeps the spacing and must still fit', async (t) => {
  const r = run('campaign', 'plan', 'campaigns/quick.yaml', '--soak', '200');
  t.equal(r.status, 254);
  t.match(r.stderr, /--soak: campaign quick's schedule does not fit in 200 s: .*give at least 250 s/);
});

t.test('campaign plan --help and campaign run --help say what --soak does to the schedule', async (t) => {
  for (const cmd of ['plan', 'run']) {
    const h = run('campaign', cmd, '--help');
    t.equal(h.status, 0, h.stderr);
    t.match(h.stdout, /A --soak longer than the file's stretches the schedule with it: spacingS and jitterS\s+are scaled by new soak \/ old soak/, cmd);
  }
});
