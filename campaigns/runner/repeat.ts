/**
 * `campaign run --repeat N` and `--until-fail`: the same campaign run again and again, each
 * run with a fresh run id and the same seed (the same schedule and events: what repeats
 * explore is the system's own nondeterminism: thread timing, the network, the store).
 *
 * - `--repeat N`: N runs; the series stops early at the first ABORTED run (the operator's
 *   Ctrl-C, a dropped session, an error: the rest would not be wanted).
 * - `--until-fail`: runs until a verdict that is not PASS (that run is the last), at most
 *   `--repeat N` runs when given, else UNTIL_FAIL_DEFAULT_CAP.
 *
 * One summary line per run, then a tally. The series' exit code is the worst verdict's code,
 * worst first: FAIL, GATE_FAILED, UNKNOWN, ABORTED, PASS (a FAIL found is not undone by a
 * later run being stopped).
 *
 * Pure: the runs are made by an injected `runOnce`, so the loop is tested with fake verdicts.
 */
import { QualError } from '../../lib/errors.ts';

/** --until-fail without --repeat: at most this many runs. */
export const UNTIL_FAIL_DEFAULT_CAP = 20;
/** --repeat's upper bound (a typo of an extra zero should not book the rig for a month). */
export const MAX_REPEAT = 1000;

export interface RepeatPlan {
  /** Runs at most. */
  count: number;
  untilFail: boolean;
  /** The cap is UNTIL_FAIL_DEFAULT_CAP because --repeat was not given. */
  defaultCap?: boolean;
}

/** What one run gives back: enough of its verdict for the summary and the exit code. */
export interface RunOutcome {
  runDir: string;
  verdict: { runId: string; verdict: string; exitCode: number; produced: number; committedDistinct: number; startedAt: string; endedAt: string; reasons: string[] };
}

export interface RepeatResult {
  runs: RunOutcome[];
  /** Why the series ended. */
  stopped: string;
  /** The run with the worst verdict (the first of equals). */
  worst: RunOutcome;
  exitCode: number;
}

/** Parses --repeat and --until-fail; null when neither is given (a single plain run). */
export function parseRepeat(values: { repeat?: unknown; 'until-fail'?: unknown }): RepeatPlan | null {
  const untilFail = values['until-fail'] === true;
  if (values.repeat === undefined) return untilFail ? { count: UNTIL_FAIL_DEFAULT_CAP, untilFail, defaultCap: true } : null;
  const text = typeof values.repeat === 'string' ? values.repeat.trim() : '';
  const n = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > MAX_REPEAT) throw new QualError('BAD_ARGUMENTS', `--repeat: '${String(values.repeat)}' is not a whole number of runs from 1 to ${MAX_REPEAT}`);
  return { count: n, untilFail };
}

const RANK: Record<string, number> = { PASS: 0, ABORTED: 1, UNKNOWN: 2, 'GATE FAILED': 3, GATE_FAILED: 3, FAIL: 4 };

/** How bad a verdict is, for the series' exit code (unknown names ranked by their exit code). */
export function verdictRank(v: { verdict: string; exitCode: number }): number {
  return RANK[v.verdict] ?? (v.exitCode === 0 ? 0 : v.exitCode === 1 ? 3.5 : 1.5);
}

/** "7 min 12 s" from two ISO times ('?' when either is missing or bad). */
function took(a: string, b: string): string {
  const ms = Date.parse(b) - Date.parse(a);
  if (!Number.isFinite(ms) || ms < 0) return '?';
  const s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return [h ? `${h} h` : '', m ? `${m} min` : '', `${s % 60} s`].filter(Boolean).join(' ');
}

/** The one line a run gets in the series: `run 2/5 quick-…: FAIL, 11990 of 12000 events committed, 7 min 12 s; first reason: …`. */
export function runSummaryLine(i: number, plan: RepeatPlan, o: RunOutcome): string {
  const v = o.verdict;
  const of = plan.untilFail ? `${i}/≤${plan.count}` : `${i}/${plan.count}`;
  const reason = v.verdict !== 'PASS' && v.reasons[0] ? `; ${v.reasons[0]}` : '';
  return `run ${of} ${v.runId}: ${v.verdict}, ${v.committedDistinct} of ${v.produced} events committed, ${took(v.startedAt, v.endedAt)} (${o.runDir}/report.md)${reason}`;
}

/** The final tally: counts by verdict, why it stopped, the worst run and the exit code. */
export function tallyLines(r: RepeatResult): string[] {
  const counts = new Map<string, number>();
  for (const o of r.runs) counts.set(o.verdict.verdict, (counts.get(o.verdict.verdict) ?? 0) + 1);
  const byRank = [...counts].sort((a, b) => verdictRank({ verdict: a[0], exitCode: 0 }) - verdictRank({ verdict: b[0], exitCode: 0 }));
  return [
    `${r.runs.length} run${r.runs.length === 1 ? '' : 's'}: ${byRank.map(([v, n]) => `${n} ${v}`).join(', ')}; ${r.stopped}`,
    `worst: ${r.worst.verdict.verdict} (${r.worst.verdict.runId}); exit ${r.exitCode}`,
  ];
}

/**
 * Runs `runOnce(i)` (i from 1) as the plan says, giving each run's summary line to `onRun`
 * as it ends. Throws what `runOnce` throws (the earlier runs' lines were given already).
 */
export async function repeatRuns(plan: RepeatPlan, runOnce: (i: number) => Promise<RunOutcome>, onRun: (line: string, o: RunOutcome) => void = () => {}): Promise<RepeatResult> {
  const runs: RunOutcome[] = [];
  let stopped = plan.untilFail ? `no failure in ${plan.count} runs (the ${plan.defaultCap ? 'default ' : ''}cap)` : `all ${plan.count} runs done`;
  for (let i = 1; i <= plan.count; i++) {
    const o = await runOnce(i);
    runs.push(o);
    onRun(runSummaryLine(i, plan, o), o);
    if (o.verdict.verdict === 'ABORTED') {
      stopped = `stopped at run ${i}: ABORTED`;
      break;
    }
    if (plan.untilFail && o.verdict.verdict !== 'PASS') {
      stopped = `until-fail: stopped at run ${i}, the first not to PASS`;
      break;
    }
  }
  const worst = runs.reduce((w, o) => (verdictRank(o.verdict) > verdictRank(w.verdict) ? o : w), runs[0]!);
  return { runs, stopped, worst, exitCode: worst.verdict.exitCode };
}
