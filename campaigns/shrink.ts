/**
 * Shrinking a FAILed run's schedule to a minimal one that still FAILs with the same counter:
 * delta debugging (Zeller and Hildebrandt's ddmin) over the plan's faults, a composition's
 * faults kept together as one unit.
 *
 * Each candidate is a replay (campaigns/replay.ts) of the stored run with the same seed,
 * workload and mutant, only the chosen faults at their own times, and the soak cut to end
 * shortly after the last chosen fault. A candidate "fails" when its verdict is FAIL and its
 * recount raised the counter the original run failed on; anything else (PASS, a FAIL on
 * another counter, UNKNOWN, ABORTED, a crash) counts as not failing, so the result is
 * never smaller than the evidence supports.
 *
 * Resumable: every candidate is recorded in runs/<id>/shrink/state.json before it runs
 * (its run id) and after (its verdict and outcome). ddmin is deterministic, so a rerun
 * walks the same steps and answers the recorded candidates from the state without running
 * them; it continues at the first candidate with no outcome. A candidate interrupted
 * mid-run is read from its run directory when it got as far as verdict.json, else run again
 * under a new run id.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { QualError } from '../lib/errors.ts';
import type { PlannedFault } from '../lib/evidence.ts';
import type { StoredRun } from './replay.ts';
import { shortenedSoakS } from './replay.ts';
import { EVIDENCE } from '../lib/run-store.ts';

/** A unit of the search: a lone fault, or a whole composition (all its faults). */
export interface Unit {
  /** The fault id, or the composition id (`<name>#<n>`). */
  id: string;
  faults: string[];
}

/** The units of a plan, in plan order (a composition at its first fault). */
export function unitsOf(plan: readonly PlannedFault[]): Unit[] {
  const units: Unit[] = [];
  const byComp = new Map<string, Unit>();
  for (const f of plan) {
    if (f.composition) {
      let u = byComp.get(f.composition);
      if (!u) {
        u = { id: f.composition, faults: [] };
        byComp.set(f.composition, u);
        units.push(u);
      }
      u.faults.push(f.id);
    } else units.push({ id: f.id, faults: [f.id] });
  }
  return units;
}

export type Outcome = 'fail' | 'pass';

/** Thrown by a test function when the budget is spent; ddmin stops and keeps its best. */
export class BudgetSpent extends Error {
  readonly why: string;
  constructor(why: string) {
    super(why);
    this.why = why;
  }
}

function split<T>(c: readonly T[], n: number): T[][] {
  const out: T[][] = [];
  let start = 0;
  for (let i = 0; i < n; i++) {
    const end = start + Math.floor((c.length - start) / (n - i));
    out.push(c.slice(start, end));
    start = end;
  }
  return out.filter((s) => s.length > 0);
}

export interface DdminResult<T> {
  /** The smallest failing configuration found (1-minimal when `complete`). */
  minimal: T[];
  /** True when ddmin ran to its end; false when the budget stopped it. */
  complete: boolean;
  /** Why it stopped early, when it did. */
  stoppedBy?: string;
}

/**
 * ddmin: `all` is known to fail; returns a 1-minimal failing subset (removing any one
 * element makes it pass) unless the budget (BudgetSpent from `test`) stops it first, then
 * the smallest failing subset seen. `test` is given subsets in the original order; the
 * sequence of calls depends only on the answers, so a cached replay of earlier answers
 * walks the same path (resume).
 */
export async function ddmin<T>(all: readonly T[], test: (c: T[]) => Promise<Outcome>): Promise<DdminResult<T>> {
  let c = [...all];
  let n = 2;
  try {
    while (c.length >= 2) {
      const subsets = split(c, n);
      let reduced = false;
      for (const s of subsets) {
        if ((await test(s)) === 'fail') {
          c = s;
          n = 2;
          reduced = true;
          break;
        }
      }
      if (!reduced && subsets.length > 2) {
        for (const s of subsets) {
          const comp = c.filter((x) => !s.includes(x));
          if ((await test(comp)) === 'fail') {
            c = comp;
            n = Math.max(n - 1, 2);
            reduced = true;
            break;
          }
        }
      }
      if (!reduced) {
        if (n >= c.length) break;
        n = Math.min(2 * n, c.length);
      }
    }
    // A single unit left: the empty schedule is not tried (a failure without faults is not a chaos finding to shrink).
    return { minimal: c, complete: true };
  } catch (err) {
    if (err instanceof BudgetSpent) return { minimal: c, complete: false, stoppedBy: err.why };
    throw err;
  }
}

/** One candidate as recorded in state.json. */
export interface CandidateRecord {
  /** The units it keeps (ids), in plan order. */
  units: string[];
  faults: string[];
  soakS: number;
  /** The replay's run id(s): the last is the one whose verdict counts. */
  runIds: string[];
  verdict?: string;
  /** The counter's value in the candidate's recount. */
  counterValue?: number;
  outcome?: Outcome;
  startedAt: string;
  endedAt?: string;
  wallS?: number;
}

export interface ShrinkState {
  version: 1;
  source: string;
  counter: string;
  units: Unit[];
  marginS: number;
  startedAt: string;
  /** Wall seconds spent in earlier invocations (the time budget counts all of them). */
  spentS: number;
  candidates: CandidateRecord[];
  result?: { minimal: string[]; complete: boolean; stoppedBy?: string; endedAt: string };
}

export function keyOf(units: readonly string[]): string {
  return [...units].sort().join(',');
}

/** What running one candidate gives back (the run's verdict, read from its verdict.json). */
export interface CandidateRun {
  verdict: string;
  counterValue: number;
}

export interface ShrinkOptions {
  stored: StoredRun;
  /** runs/<id>/shrink */
  dir: string;
  /** The counter the candidates must raise (default: the source run's first raised recount counter). */
  counter: string;
  maxRuns: number;
  maxTimeS: number;
  /** Seconds of soak kept after the last chosen fault ends. */
  marginS: number;
  /** A fresh run id for a candidate (never used before). */
  newRunId: (k: number) => string;
  /** Runs one candidate to its verdict; null when the run produced no verdict (crash). */
  runCandidate: (runId: string, plan: PlannedFault[], soakS: number) => Promise<CandidateRun | null>;
  /** Reads a run's verdict when it has one (resume of an interrupted candidate). */
  readRun: (runId: string) => CandidateRun | null;
  log: (line: string) => void;
  now?: () => number;
}

export function readState(dir: string): ShrinkState | undefined {
  const f = path.join(dir, 'state.json');
  if (!existsSync(f)) return undefined;
  return JSON.parse(readFileSync(f, 'utf8')) as ShrinkState;
}

function writeState(dir: string, s: ShrinkState): void {
  const f = path.join(dir, 'state.json');
  writeFileSync(f + '.tmp', JSON.stringify(s, null, 2) + '\n');
  renameSync(f + '.tmp', f);
}

/** The first counter the source run's recount raised (recount.json, else verdict.json). */
export function failingCounter(runDir: string): string | undefined {
  for (const [file, pick] of [
    [EVIDENCE.recount.file, (j: Record<string, unknown>) => j.counters],
    [EVIDENCE.verdict.file, (j: Record<string, unknown>) => j.recount],
  ] as const) {
    try {
      const counters = pick(JSON.parse(readFileSync(path.join(runDir, file), 'utf8')) as Record<string, unknown>) as Record<string, number> | undefined;
      const raised = Object.entries(counters ?? {}).find(([, v]) => typeof v === 'number' && v > 0);
      if (raised) return raised[0];
    } catch {
      /* try the next file */
    }
  }
  return undefined;
}

/** Runs (or resumes) the shrink; writes state.json, report.md and minimal.yaml into opts.dir. */
export async function shrink(opts: ShrinkOptions): Promise<ShrinkState> {
  const now = opts.now ?? Date.now;
  const t0 = now();
  mkdirSync(opts.dir, { recursive: true });
  const units = unitsOf(opts.stored.plan);
  let state = readState(opts.dir);
  if (state) {
    if (state.counter !== opts.counter) throw new QualError('BAD_ARGUMENTS', `${opts.dir}/state.json shrinks for counter ${state.counter}, not ${opts.counter}; remove the shrink directory to start over`);
    if (keyOf(state.units.map((u) => u.id)) !== keyOf(units.map((u) => u.id))) throw new QualError('BAD_INPUT_FILE', `${opts.dir}/state.json was made for another plan`);
    opts.log(`resuming: ${state.candidates.filter((c) => c.outcome).length} candidates already decided`);
    delete state.result;
  } else {
    state = { version: 1, source: opts.stored.runId, counter: opts.counter, units, marginS: opts.marginS, startedAt: new Date(t0).toISOString(), spentS: 0, candidates: [] };
  }
  const st = state;
  const spentBefore = st.spentS;
  writeState(opts.dir, st);
  const unitById = new Map(units.map((u) => [u.id, u]));
  let ranNow = 0;
  let k = st.candidates.reduce((m, c) => m + c.runIds.length, 0);

  const test = async (chosen: Unit[]): Promise<Outcome> => {
    const ids = chosen.map((u) => u.id);
    const key = keyOf(ids);
    let rec = st.candidates.find((c) => keyOf(c.units) === key);
    if (rec?.outcome) return rec.outcome;
    const faultIds = new Set(chosen.flatMap((u) => u.faults));
    const plan = opts.stored.plan.filter((f) => faultIds.has(f.id));
    const soakS = shortenedSoakS(plan, opts.stored.campaign.workload.soakS, opts.marginS);
    // An interrupted candidate: its run may have reached a verdict.
    if (rec) {
      const last = rec.runIds[rec.runIds.length - 1];
      const got = last ? opts.readRun(last) : null;
      if (got) return decide(rec, got);
    }
    const used = st.candidates.reduce((m, c) => m + c.runIds.length, 0);
    if (used >= opts.maxRuns) throw new BudgetSpent(`the run budget (--max-runs ${opts.maxRuns}) is spent`);
    const elapsedS = spentBefore + (now() - t0) / 1000;
    if (elapsedS >= opts.maxTimeS) throw new BudgetSpent(`the time budget (--max-time ${opts.maxTimeS} s) is spent`);
    const runId = opts.newRunId(++k);
    if (!rec) {
      rec = { units: ids, faults: plan.map((f) => f.id), soakS, runIds: [], startedAt: new Date(now()).toISOString() };
      st.candidates.push(rec);
    }
    rec.runIds.push(runId);
    writeState(opts.dir, st);
    ranNow++;
    opts.log(`candidate ${st.candidates.length} (run ${ranNow} now, ${Math.round(elapsedS)} s spent): ${ids.length} of ${units.length} units [${ids.join(' ')}] = faults ${rec.faults.join(' ')}, soak ${soakS} s, run ${runId}`);
    const started = now();
    const got = await opts.runCandidate(runId, plan, soakS);
    rec.wallS = Math.round((now() - started) / 1000);
    return decide(rec, got ?? { verdict: 'NO VERDICT', counterValue: 0 });
  };
  const decide = (rec: CandidateRecord, got: CandidateRun): Outcome => {
    rec.verdict = got.verdict;
    rec.counterValue = got.counterValue;
    rec.outcome = got.verdict === 'FAIL' && got.counterValue > 0 ? 'fail' : 'pass';
    rec.endedAt = new Date(now()).toISOString();
    st.spentS = spentBefore + (now() - t0) / 1000;
    writeState(opts.dir, st);
    opts.log(`  → ${got.verdict}, ${opts.counter} = ${got.counterValue}: ${rec.outcome === 'fail' ? 'still fails' : 'does not fail'}${rec.wallS !== undefined ? ` (${rec.wallS} s)` : ''}`);
    return rec.outcome;
  };

  const res = await ddmin(units, test);
  st.spentS = spentBefore + (now() - t0) / 1000;
  st.result = { minimal: res.minimal.map((u) => u.id), complete: res.complete, ...(res.stoppedBy ? { stoppedBy: res.stoppedBy } : {}), endedAt: new Date(now()).toISOString() };
  writeState(opts.dir, st);
  const minimalUnits = res.minimal.map((u) => unitById.get(u.id)!);
  const faultIds = new Set(minimalUnits.flatMap((u) => u.faults));
  const minimalPlan = opts.stored.plan.filter((f) => faultIds.has(f.id));
  const soakS = shortenedSoakS(minimalPlan, opts.stored.campaign.workload.soakS, opts.marginS);
  writeFileSync(path.join(opts.dir, 'minimal.yaml'), minimalCampaignYaml(opts.stored, minimalPlan, soakS));
  writeFileSync(path.join(opts.dir, 'report.md'), shrinkReport(st, minimalPlan, soakS));
  return st;
}

/**
 * The minimal schedule as a campaign file: the stored campaign's seed, workload (soak cut)
 * and mutant, no battery, and one composition whose steps are the kept faults, each pinned
 * to its planned target and its planned time (startAfterS is the first fault's time, the
 * steps' afterS the offsets from it, no jitter). `campaign plan` on it gives the same
 * kinds, targets, points and times (ids renumbered, all in composition `minimal#1`).
 */
export function minimalCampaignYaml(stored: StoredRun, plan: readonly PlannedFault[], soakS: number): string {
  const c = stored.campaign;
  const first = plan.length ? Math.min(...plan.map((f) => f.atS)) : 0;
  const steps = plan.map((f) => ({
    kind: f.kind,
    ...(f.atS - first > 0 ? { afterS: f.atS - first } : {}),
    ...(f.target !== undefined && !(f.kind === 'protocol-point' && f.point?.startsWith('coordinator.')) ? { targets: [f.target] } : {}),
    ...(f.point !== undefined ? { point: f.point } : {}),
    ...(f.durationS !== undefined ? { durationS: f.durationS } : {}),
    ...(f.share !== undefined ? { share: f.share } : {}),
    ...(f.variant !== undefined ? { variant: f.variant } : {}),
    ...(f.offsetS !== undefined ? { offsetS: f.offsetS } : {}),
  }));
  const { totalEvents: _t, ...workload } = c.workload;
  const doc = {
    name: `${c.name}-minimal`,
    description: `The minimal schedule shrunk from run ${stored.runId}: faults ${plan.map((f) => f.id).join(', ')} of its plan, at their planned times and targets.`,
    seed: c.seed,
    rig: c.rig,
    // The store the shrunk run ran on (a run stored before campaigns named one: absent, MinIO).
    ...(c.store !== undefined ? { store: c.store } : {}),
    engine: c.engine,
    workload: { ...workload, soakS },
    gate: c.gate,
    faults: [],
    compositions: [{ name: 'minimal', count: 1, steps }],
    schedule: { startAfterS: first, spacingS: 1, jitterS: 0 },
    deadlines: c.deadlines,
    oracle: { sampleIntervalS: c.oracle.sampleIntervalS },
  };
  return `# Written by 'clink-qual campaign shrink ${stored.dir}'.\n` + stringify(doc);
}

function describeFault(f: PlannedFault): string {
  return `${f.id} ${f.kind}${f.point ? ` ${f.point}` : ''}${f.target ? ` on ${f.target}` : ''} at ${f.atS} s${f.durationS !== undefined ? ` for ${f.durationS} s` : ''}${f.composition ? ` (composition ${f.composition})` : ''}`;
}

export function shrinkReport(st: ShrinkState, minimalPlan: readonly PlannedFault[], soakS: number): string {
  const r = st.result;
  const ran = st.candidates.reduce((m, c) => m + c.runIds.length, 0);
  const lines = [
    `# Shrink of run ${st.source}`,
    '',
    `Counter: **${st.counter}**. The source schedule has ${st.units.length} units (${st.units.reduce((m, u) => m + u.faults.length, 0)} faults, compositions kept whole).`,
    '',
    r?.complete && st.units.length === 1
      ? `The schedule has a single unit, so there was nothing to remove: ${minimalPlan.map(describeFault).join('; ')}.`
      : r?.complete
      ? `The failure needs only these faults: ${minimalPlan.map(describeFault).join('; ')}. Removing any one of these units made the failure go away (1-minimal by ddmin).`
      : `The search stopped early (${r?.stoppedBy ?? 'not finished'}); the smallest schedule shown to fail so far has these faults: ${minimalPlan.map(describeFault).join('; ')}. It is not shown to be minimal.`,
    '',
    `Candidates run: ${ran} replays, ${Math.round(st.spentS)} s of wall time in all. The minimal schedule, as a campaign file (soak ${soakS} s): minimal.yaml.`,
    '',
    '| # | units | faults | soak (s) | run | verdict | ' + st.counter + ' | the failure | wall (s) |',
    '|---|---|---|---|---|---|---|---|---|',
    ...st.candidates.map((c, i) => `| ${i + 1} | ${c.units.join(' ')} | ${c.faults.join(' ')} | ${c.soakS} | ${c.runIds.join(', ')} | ${c.verdict ?? 'not finished'} | ${c.counterValue ?? ''} | ${c.outcome === 'fail' ? 'still fails' : c.outcome === 'pass' ? 'gone' : ''} | ${c.wallS ?? ''} |`),
    '',
  ];
  return lines.join('\n');
}
