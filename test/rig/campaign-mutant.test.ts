/**
 * A harness that cannot fail proves nothing: the quick campaign with a broken sink must
 * FAIL (exit 1) with the counter its mechanism must raise, seen by the separate recount.
 * CI runs one mutant here; `clink-qual qualify-mutants` runs them all.
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Recount, Verdict } from '../../lib/evidence.ts';
import { repoRoot, runsDir } from '../../lib/paths.ts';

const MUTANT = process.env.CLINK_QUAL_CI_MUTANT ?? 'commit-at-prepare';
const MUST_RAISE = 'duplicates' as const;

t.test(`mutant ${MUTANT} is caught`, async (t) => {
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
  t.match(readFileSync(path.join(runDir, 'report.md'), 'utf8'), /FAIL/);
});
