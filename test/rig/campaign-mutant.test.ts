/**
 * A harness that cannot fail proves nothing. CI runs the whole kill table:
 * `clink-qual qualify-mutants --campaign campaigns/mutants.yaml`, the correct engine under
 * the base schedule (the control, which must PASS) and every engine mutant under its own
 * short schedule, each of which must FAIL with one of the counters its mechanism must raise,
 * seen by the separate recount. Then one catch must explain itself: no-fencing's (a zombie
 * worker commits after a partition cut it off) findings.jsonl agrees with the recount's
 * counters, and the report's Findings section names the duplicate events' objects and a
 * preceding fault that can cut a worker off.
 *
 * CLINK_QUAL_CI_MUTANTS=a,b runs only those mutants (a developer's shortcut; CI runs all).
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { KillTableJson } from '../../campaigns/runner/kill-table.ts';
import { CLINK_MUTANTS } from '../../engine/clink/mutants/index.ts';
import { COUNTER_NAMES, type Recount, type Verdict } from '../../lib/evidence.ts';
import { repoRoot, runsDir } from '../../lib/paths.ts';
import { readFindings } from '../../oracle/findings.ts';

const ONLY = process.env.CLINK_QUAL_CI_MUTANTS?.split(',').map((s) => s.trim()).filter(Boolean);
const EXPLAINED = 'no-fencing';
/** Fault kinds that cut a worker off from the coordinator while it keeps running. */
const CUTS_OFF = ['partition', 'packet-loss', 'process-pause'];

const r = spawnSync(process.execPath, [path.join(repoRoot, 'bin/clink-qual.ts'), 'qualify-mutants', '--campaign', 'campaigns/mutants.yaml', ...(ONLY ? ['--only', ONLY.join(',')] : [])], {
  cwd: repoRoot,
  encoding: 'utf8',
  stdio: ['ignore', 'pipe', 'inherit'],
  timeout: 55 * 60_000,
});
const tableAt = /kill table: (\S+\.md) \(and (\S+\.json)\)/.exec(r.stdout ?? '');
const kill = tableAt ? (JSON.parse(readFileSync(path.join(path.dirname(tableAt[1]!), tableAt[2]!), 'utf8')) as KillTableJson) : null;

t.test('qualify-mutants over campaigns/mutants.yaml: the control PASSes and every mutant is caught', async (t) => {
  t.equal(r.status, 0, `exit 0 (${r.signal ? `signal ${r.signal}` : `status ${r.status}`})`);
  t.ok(kill, 'the kill table was written, with its JSON beside it');
  if (!kill) return;
  const control = kill.rows.find((x) => x.mutant === null);
  t.equal(control?.verdict, 'PASS', `the control (${control?.runId}) passed under the base schedule`);
  const expected = CLINK_MUTANTS.map((m) => m.name).filter((n) => !ONLY || ONLY.includes(n));
  t.strictSame(kill.rows.filter((x) => x.mutant).map((x) => x.mutant), expected, 'every mutant ran, in the registry order');
  for (const row of kill.rows.filter((x) => x.mutant)) {
    const raised = row.raised.map((x) => x.split('=')[0]!);
    t.ok(row.ok && row.verdict === 'FAIL' && raised.some((c) => row.caughtBy.includes(c)), `${row.mutant}: FAIL with ${raised.join(', ') || 'nothing'} (must raise ${row.caughtBy.join(' or ')}; ${row.wallS} s)`);
    // What showed each raised finding: the recount for counters, the store-tamper judgement for acceptedForeign.
    t.strictSame(row.shownBy.map((c) => `${c.name}=${c.value}`), row.raised, `${row.mutant}: every raised finding names what showed it`);
    t.ok(row.shownBy.every((c) => (c.name === 'acceptedForeign') === (c.by === 'store-tamper judgement')), `${row.mutant}: ${row.shownBy.map((c) => `${c.by}: ${c.name}`).join(', ') || 'nothing'}`);
  }
  t.match(readFileSync(tableAt![1]!, 'utf8'), 'Every mutant run was caught.', 'the Markdown table says so');
  // A mutant's soak ends once it is caught (campaigns/runner/soak-caught.ts): at d4a4642, 10 of 13 did; never the control's.
  t.notOk(control?.soakEndedEarly, "the control's soak ran its length");
  const early = kill.rows.filter((x) => x.mutant && x.soakEndedEarly);
  t.ok(early.length > 0, `mutant soaks that ended once caught: ${early.map((x) => `${x.mutant} ${x.soakEndedEarly!.endedAtS} of ${x.soakEndedEarly!.plannedS} s`).join(', ') || 'none'}`);
});

t.test(`${EXPLAINED}'s catch explains itself: findings where and after what`, { skip: ONLY && !ONLY.includes(EXPLAINED) ? `${EXPLAINED} not in CLINK_QUAL_CI_MUTANTS` : false }, async (t) => {
  const row = kill?.rows.find((x) => x.mutant === EXPLAINED);
  t.ok(row, `the kill table has ${EXPLAINED}'s run`);
  if (!row) return;
  const runDir = path.join(runsDir(), row.runId);
  const verdict = JSON.parse(readFileSync(path.join(runDir, 'verdict.json'), 'utf8')) as Verdict;
  const recount = JSON.parse(readFileSync(path.join(runDir, 'recount.json'), 'utf8')) as Recount;
  t.equal(verdict.verdict, 'FAIL');
  t.ok(recount.counters.duplicates > 0, `the recount counted duplicates: ${recount.counters.duplicates}`);
  t.ok(verdict.reasons.some((x) => x.startsWith('recount: duplicates = ')), 'the verdict names the counter');
  const report = readFileSync(path.join(runDir, 'report.md'), 'utf8');
  t.match(report, /FAIL/);

  // findings.jsonl matches the recount: a counter has findings iff it was raised, and each
  // finding carries the recount's total for its counter.
  const findings = readFindings(path.join(runDir, 'findings.jsonl'));
  for (const c of COUNTER_NAMES) {
    const fs = findings.filter((f) => f.counter === c);
    if (recount.counters[c] > 0) {
      t.ok(fs.length > 0, `findings for ${c} (${recount.counters[c]} in the recount)`);
      t.ok(fs.every((f) => f.total === recount.counters[c]), `every ${c} finding carries the recount's total ${recount.counters[c]}`);
      t.same(fs.map((f) => f.n), fs.map((_, i) => i + 1), `${c} findings are numbered 1..${fs.length}`);
    } else {
      t.equal(fs.length, 0, `no findings for ${c}, which the recount did not raise`);
    }
  }

  // The duplicates: each names its event and at least two objects holding it, with the
  // epoch and checkpoint the key encodes, and the report's Findings section names them.
  const dups = findings.filter((f) => f.counter === 'duplicates');
  const section = report.slice(report.indexOf('## Findings'));
  t.ok(report.includes('## Findings'), 'the report has a Findings section');
  for (const f of dups.slice(0, 3)) {
    t.ok(f.event, `duplicate ${f.n} names its event`);
    t.ok(f.objects.length >= 2, `duplicate ${f.n} names the objects holding it twice: ${f.objects.map((o) => o.key).join(', ')}`);
    for (const o of f.objects) {
      t.ok(o.epoch !== null && o.checkpoint !== null, `${o.key}: epoch and checkpoint from the key`);
      t.ok(section.includes(o.key), `the Findings section names ${o.key}`);
    }
  }
  // After what: some duplicate's nearest preceding faults include one that cuts a worker off.
  const suspects = dups.flatMap((f) => f.cause?.faults ?? []);
  const cut = suspects.find((w) => CUTS_OFF.includes(w.kind));
  t.ok(cut, `a fault that cuts a worker off precedes a duplicate (suspects: ${[...new Set(suspects.map((w) => `${w.faultId} ${w.kind}`))].join(', ')})`);
  if (cut) t.ok(section.includes(`${cut.faultId} ${cut.kind}`), `the Findings section names ${cut.faultId} ${cut.kind}`);
});
