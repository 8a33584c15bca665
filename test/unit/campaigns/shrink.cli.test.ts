import t from 'tap';
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// The command end to end with a fake `clink-qual` in place of the rig: it records its
// arguments and writes the candidate run's verdict.json (FAIL with duplicates when the
// chosen faults include f002 and f004), so the child invocation, the run ids, the verdict
// reading, the state, the exit codes and the resume are the real ones.
const repo = path.join(import.meta.dirname, '../../..');
const cli = path.join(repo, 'bin', 'clink-qual.ts');

function setup() {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'cq-shrink-cli-'));
  const runs = path.join(tmp, 'runs');
  const src = path.join(runs, 'src');
  cpSync(path.join(repo, 'test/fixtures/run-fail'), src, { recursive: true });
  const calls = path.join(tmp, 'calls.jsonl');
  const fake = path.join(tmp, 'fake-clink-qual');
  writeFileSync(
    fake,
    `#!/usr/bin/env node
const fs = require('node:fs'), path = require('node:path');
const a = process.argv.slice(2);
const get = (k) => a[a.indexOf(k) + 1];
fs.appendFileSync(${JSON.stringify(calls)}, JSON.stringify(a) + '\\n');
const id = get('--run-id'), faults = get('--faults').split(',');
if (process.env.FAKE_CRASH === id) process.exit(255);
const dir = path.join(process.env.CLINK_QUAL_RUNS, id);
fs.mkdirSync(dir);
const fail = faults.includes('f002') && faults.includes('f004');
fs.writeFileSync(path.join(dir, 'verdict.json'), JSON.stringify({ verdict: fail ? 'FAIL' : 'PASS', recount: { duplicates: fail ? 4 : 0 } }));
console.log('fake run', id);
`,
  );
  chmodSync(fake, 0o755);
  const run = (extra: string[] = [], env: Record<string, string> = {}) =>
    spawnSync(process.execPath, [cli, 'campaign', 'shrink', src, ...extra], { cwd: repo, encoding: 'utf8', timeout: 120_000, env: { ...process.env, CLINK_QUAL_RUNS: runs, CLINK_QUAL_SHRINK_CLI: fake, ...env } });
  const callList = () => readFileSync(calls, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as string[]);
  return { src, runs, run, callList };
}

t.test('campaign shrink with a fake rig: budget stop (exit 2), a crashed candidate, then a resume to the minimal schedule (exit 0)', async (t) => {
  const { src, runs, run, callList } = setup();
  const first = run(['--max-runs', '2']);
  t.equal(first.status, 2, first.stderr);
  t.match(first.stdout, /stopped \(the run budget \(--max-runs 2\) is spent\)/);
  t.equal(callList().length, 2);
  const c0 = callList()[0]!;
  t.same(c0.slice(0, 4), ['campaign', 'run', '--replay', src]);
  t.equal(c0[c0.indexOf('--run-id') + 1], 'quick-20260821-113000-shrink-1');
  t.ok(existsSync(path.join(src, 'shrink', 'quick-20260821-113000-shrink-1.log')), 'the candidate\'s output is kept');
  // The next candidate crashes without a verdict: it counts as not failing, and is recorded.
  const crashed = run(['--max-runs', '3'], { FAKE_CRASH: 'quick-20260821-113000-shrink-3' });
  t.equal(crashed.status, 2);
  t.match(crashed.stderr, /without a verdict/);
  const resumed = run(['--max-runs', '40']);
  t.equal(resumed.status, 0, resumed.stderr);
  t.match(resumed.stderr, /resuming: 3 candidates already decided/);
  t.match(resumed.stdout, /minimal: f002 store-down-during-worker-recovery#1 of 16 units/);
  const state = JSON.parse(readFileSync(path.join(src, 'shrink', 'state.json'), 'utf8')) as { candidates: { runIds: string[]; verdict: string; outcome?: string }[] };
  const ids = state.candidates.flatMap((c) => c.runIds);
  t.equal(new Set(ids).size, ids.length, 'no run id used twice');
  t.equal(callList().length, ids.length, 'each recorded run id was run once; decided candidates were not re-run');
  t.ok(ids.every((id) => existsSync(path.join(runs, id)) || id.endsWith('-shrink-3')));
  const report = readFileSync(path.join(src, 'shrink', 'report.md'), 'utf8');
  t.match(report, /The failure needs only these faults: f002 partition on worker-3 at 28 s for 10 s; f004 store-outage/);
  t.match(report, /\| verdict \| \w+ \| the failure \| wall \(s\) \|/);
  const decided = report.split('\n').filter((l) => /\| (still fails|gone) \| [\d.]* \|$/.test(l));
  const outcomes = state.candidates.map((c) => c.outcome).filter(Boolean);
  t.ok(outcomes.includes('fail') && outcomes.includes('pass'), 'both outcomes occurred');
  t.equal(decided.length, outcomes.length, 'each decided candidate says whether the failure stayed or went');
  t.equal(decided.filter((l) => l.includes('| gone |')).length, outcomes.filter((o) => o === 'pass').length, "'gone' where the failure went away");
  const plan = spawnSync(process.execPath, [cli, 'campaign', 'plan', path.join(src, 'shrink', 'minimal.yaml')], { cwd: repo, encoding: 'utf8' });
  t.equal(plan.status, 0, plan.stderr);
  t.match(plan.stdout, /faults: 3 \(worker-kill 1, store-outage 1, partition 1\)/);
});
