/**
 * `campaign run --repeat N` / `--until-fail` (campaigns/runner/repeat.ts), driven by a fake
 * runOnce: when the series stops, the summary lines, the tally and the exit code (the worst
 * verdict's). Through the CLI, only the argument checks, with no rig reachable (an empty
 * state directory): a bad --repeat, overrides with --replay, a bad override, a repeat's run
 * id already used all exit 254.
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { UNTIL_FAIL_DEFAULT_CAP, parseRepeat, repeatRuns, runSummaryLine, tallyLines, verdictRank, type RepeatPlan, type RunOutcome } from '../../../../campaigns/runner/repeat.ts';
import { QualError } from '../../../../lib/errors.ts';
import { repoRoot } from '../../../../lib/paths.ts';

const CODE: Record<string, number> = { PASS: 0, FAIL: 1, 'GATE FAILED': 1, ABORTED: 2, UNKNOWN: 2 };

function outcome(i: number, verdict: string): RunOutcome {
  return {
    runDir: `runs/quick-${i}`,
    verdict: {
      runId: `quick-${i}`,
      verdict,
      exitCode: CODE[verdict]!,
      produced: 1000,
      committedDistinct: verdict === 'FAIL' ? 998 : 1000,
      startedAt: '2026-12-03T10:00:00.000Z',
      endedAt: '2026-12-03T10:07:12.000Z',
      reasons: verdict === 'PASS' ? [] : [`${verdict.toLowerCase()} reason ${i}`],
    },
  };
}

/** Runs the series over a fixed list of verdicts; returns the result, the calls made and the lines. */
async function series(plan: RepeatPlan, verdicts: string[]) {
  const calls: number[] = [];
  const lines: string[] = [];
  const r = await repeatRuns(
    plan,
    async (i) => {
      calls.push(i);
      const v = verdicts[i - 1];
      if (!v) throw new Error(`run ${i} was not expected`);
      return outcome(i, v);
    },
    (l) => lines.push(l),
  );
  return { r, calls, lines };
}

t.test('parsing: neither option is a plain run; --until-fail alone has the default cap; bad --repeat is 254', async (t) => {
  t.equal(parseRepeat({}), null);
  t.same(parseRepeat({ repeat: '3' }), { count: 3, untilFail: false });
  t.same(parseRepeat({ 'until-fail': true }), { count: UNTIL_FAIL_DEFAULT_CAP, untilFail: true, defaultCap: true });
  t.same(parseRepeat({ repeat: '5', 'until-fail': true }), { count: 5, untilFail: true });
  for (const bad of ['0', '-1', 'x', '2.5', '1001', '']) {
    let e: unknown;
    try {
      parseRepeat({ repeat: bad });
    } catch (err) {
      e = err;
    }
    t.ok(e instanceof QualError && e.code === 'BAD_ARGUMENTS' && /^--repeat: /.test(e.message), `--repeat ${JSON.stringify(bad)}: ${String(e)}`);
  }
});

t.test('--repeat N: all N runs through PASS and FAIL; exit code of the worst', async (t) => {
  const { r, calls, lines } = await series({ count: 4, untilFail: false }, ['PASS', 'FAIL', 'PASS', 'PASS']);
  t.same(calls, [1, 2, 3, 4], 'a FAIL does not stop --repeat');
  t.equal(r.runs.length, 4);
  t.equal(r.exitCode, 1);
  t.equal(r.worst.verdict.runId, 'quick-2');
  t.equal(lines.length, 4, 'one line a run');
  t.equal(lines[1], 'run 2/4 quick-2: FAIL, 998 of 1000 events committed, 7 min 12 s (runs/quick-2/report.md); fail reason 2');
  t.equal(lines[0], 'run 1/4 quick-1: PASS, 1000 of 1000 events committed, 7 min 12 s (runs/quick-1/report.md)');
  t.same(tallyLines(r), ['4 runs: 3 PASS, 1 FAIL; all 4 runs done', 'worst: FAIL (quick-2); exit 1']);
});

t.test('--repeat N: stops at the first ABORTED', async (t) => {
  const { r, calls } = await series({ count: 5, untilFail: false }, ['PASS', 'ABORTED', 'PASS']);
  t.same(calls, [1, 2]);
  t.equal(r.exitCode, 2);
  t.match(r.stopped, /stopped at run 2: ABORTED/);
  t.same(tallyLines(r), ['2 runs: 1 PASS, 1 ABORTED; stopped at run 2: ABORTED', 'worst: ABORTED (quick-2); exit 2']);
});

t.test('all PASS: exit 0', async (t) => {
  const { r } = await series({ count: 3, untilFail: false }, ['PASS', 'PASS', 'PASS']);
  t.equal(r.exitCode, 0);
  t.equal(r.worst.verdict.verdict, 'PASS');
});

t.test('a FAIL outranks a later ABORTED: the series exits 1 with the FAIL as worst', async (t) => {
  const { r } = await series({ count: 5, untilFail: false }, ['FAIL', 'PASS', 'ABORTED']);
  t.equal(r.runs.length, 3);
  t.equal(r.worst.verdict.runId, 'quick-1');
  t.equal(r.exitCode, 1);
  t.ok(verdictRank({ verdict: 'FAIL', exitCode: 1 }) > verdictRank({ verdict: 'GATE FAILED', exitCode: 1 }));
  t.ok(verdictRank({ verdict: 'GATE FAILED', exitCode: 1 }) > verdictRank({ verdict: 'ABORTED', exitCode: 2 }));
  t.ok(verdictRank({ verdict: 'UNKNOWN', exitCode: 2 }) > verdictRank({ verdict: 'ABORTED', exitCode: 2 }));
  t.ok(verdictRank({ verdict: 'ABORTED', exitCode: 2 }) > verdictRank({ verdict: 'PASS', exitCode: 0 }));
});

t.test('--until-fail: stops at the first verdict that is not PASS (GATE FAILED counts)', async (t) => {
  const a = await series({ count: 10, untilFail: true }, ['PASS', 'PASS', 'FAIL']);
  t.same(a.calls, [1, 2, 3]);
  t.equal(a.r.exitCode, 1);
  t.match(a.r.stopped, /until-fail: stopped at run 3/);
  t.match(a.lines[0], /^run 1\/≤10 quick-1: PASS/);
  const g = await series({ count: 10, untilFail: true }, ['PASS', 'GATE FAILED']);
  t.same(g.calls, [1, 2]);
  t.equal(g.r.exitCode, 1);
  t.equal(g.r.worst.verdict.verdict, 'GATE FAILED');
});

t.test('--until-fail: bounded by the cap (default or --repeat), every run PASS: exit 0', async (t) => {
  const capped = await series({ count: 3, untilFail: true }, ['PASS', 'PASS', 'PASS', 'FAIL']);
  t.same(capped.calls, [1, 2, 3], 'the fourth run (a FAIL) is never made');
  t.equal(capped.r.exitCode, 0);
  t.equal(tallyLines(capped.r)[0], '3 runs: 3 PASS; no failure in 3 runs (the cap)');
  const plan = parseRepeat({ 'until-fail': true })!;
  const all = await series(plan, Array.from({ length: UNTIL_FAIL_DEFAULT_CAP + 1 }, () => 'PASS'));
  t.equal(all.calls.length, UNTIL_FAIL_DEFAULT_CAP);
  t.match(all.r.stopped, /the default cap/);
});

t.test('an error from a run propagates (after the earlier runs were reported)', async (t) => {
  const lines: string[] = [];
  await t.rejects(
    repeatRuns(
      { count: 3, untilFail: false },
      async (i) => {
        if (i === 2) throw new QualError('PRECONDITION', 'no rig is up');
        return outcome(i, 'PASS');
      },
      (l) => lines.push(l),
    ),
    /no rig is up/,
  );
  t.equal(lines.length, 1);
});

t.test('a summary line with an unknown duration', async (t) => {
  const o = outcome(1, 'PASS');
  o.verdict.endedAt = 'not a time';
  t.match(runSummaryLine(1, { count: 1, untilFail: false }, o), /committed, \? \(/);
});

t.test('CLI: bad --repeat, overrides with --replay, a bad override: 254 before any rig is looked for', async (t) => {
  // No rig is reachable: an empty state directory and runs directory (a mistake here cannot start a run).
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'cq-repeat-'));
  mkdirSync(path.join(tmp, 'state'));
  mkdirSync(path.join(tmp, 'runs'));
  mkdirSync(path.join(tmp, 'runs', 'taken-2'));
  const env = { ...process.env, CLINK_QUAL_STATE: path.join(tmp, 'state'), CLINK_QUAL_RUNS: path.join(tmp, 'runs') };
  const run = (args: string[]) => spawnSync(process.execPath, [path.join(repoRoot, 'bin', 'clink-qual.ts'), 'campaign', 'run', ...args], { cwd: repoRoot, env, encoding: 'utf8', timeout: 60_000 });
  const cases: [string[], RegExp][] = [
    [['campaigns/quick.yaml', '--repeat', '0'], /--repeat: '0' is not a whole number/],
    [['campaigns/quick.yaml', '--until-fail', '--repeat', 'many'], /--repeat: /],
    [['--replay', 'test/fixtures/run-fail', '--seed', 'x'], /--seed and --rate do not go with --replay: a replay runs the stored seed and rate/],
    [['campaigns/quick.yaml', '--soak', '2 hours'], /--soak: '2 hours' is not a duration/],
    [['campaigns/quick.yaml', '--soak', '1m'], /--soak: .*does not fit in 60 s/],
    [['campaigns/quick.yaml', '--rate', 'lots'], /--rate: /],
    // --run-id ID with repeats: ID-1, ID-2, ... each checked before the first run.
    [['campaigns/quick.yaml', '--run-id', 'taken', '--repeat', '3'], /--run-id 'taken-2': .* already exists/],
  ];
  for (const [args, re] of cases) {
    const r = run(args);
    t.equal(r.status, 254, args.join(' '));
    t.match(r.stderr, re, args.join(' '));
  }
  const h = run(['--help']);
  t.match(h.stdout, /--repeat N\s/);
  t.match(h.stdout, /--until-fail\s/);
  t.match(h.stdout, /Every repetition uses the\s+same seed/);
});
