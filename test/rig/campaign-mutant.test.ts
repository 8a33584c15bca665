/**
 * A harness that cannot fail proves nothing: the quick campaign with a broken sink must
 * FAIL (exit 1) with the counter its mechanism must raise, seen by the separate recount.
 * CI runs one mutant here, no-fencing (a zombie worker commits after a partition cut it
 * off), and checks that the FAIL explains itself: findings.jsonl agrees with the recount's
 * counters, and the report's Findings section names the duplicate events' objects and a
 * preceding fault that can cut a worker off. `clink-qual qualify-mutants` runs them all.
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { COUNTER_NAMES, type Recount, type Verdict } from '../../lib/evidence.ts';
import { repoRoot, runsDir } from '../../lib/paths.ts';
import { readFindings } from '../../oracle/findings.ts';

const MUTANT = process.env.CLINK_QUAL_CI_MUTANT ?? 'no-fencing';
const MUST_RAISE = 'duplicates' as const;
/** Fault kinds that cut a worker off from the coordinator while it keeps running. */
const CUTS_OFF = ['partition', 'packet-loss', 'process-pause'];

t.test(`mutant ${MUTANT} is caught, and its findings say where and after what`, async (t) => {
  const runId = `ci-mutant-${MUTANT}-${Date.now()}`;
  const runDir = path.join(runsDir(), runId);
  const r = spawnSync(process.execPath, [path.join(repoRoot, 'bin/clink-qual.ts'), 'campaign', 'run', 'campaigns/quick.yaml', '--mutant', MUTANT, '--run-id', runId], {
    cwd: repoRoot,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    timeout: 20 * 60_000,
  });
  t.equal(r.status, 1, 'exit 1: FAIL');
  const verdict = JSON.parse(readFileSync(path.join(runDir, 'verdict.json'), 'utf8')) as Verdict;
  const recount = JSON.parse(readFileSync(path.join(runDir, 'recount.json'), 'utf8')) as Recount;
  t.equal(verdict.verdict, 'FAIL');
  t.ok(recount.counters[MUST_RAISE] > 0, `the recount counted ${MUST_RAISE}: ${recount.counters[MUST_RAISE]}`);
  t.ok(verdict.reasons.some((x) => x.startsWith(`recount: ${MUST_RAISE} = `)), 'the verdict names the counter');
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
  const dups = findings.filter((f) => f.counter === MUST_RAISE);
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
