/**
 * The mutant kill table: what `clink-qual qualify-mutants` concludes from each run's
 * verdict and samples. Pure: the runs happen elsewhere; this decides "caught", finds the
 * first sample that showed a finding, and renders the Markdown.
 */
import type { MutantInfo } from '../../engine/engine.ts';
import type { Sample, Verdict } from '../../lib/evidence.ts';
import { fmtDuration, table } from '../../reports/format.ts';

export interface KillRow {
  /** null for the control run of the correct engine. */
  mutant: MutantInfo | null;
  verdict: Verdict['verdict'];
  /** Recount counters above zero, `name=value`, and the verdict's `acceptedForeign=n` (see catchesOf). */
  raised: string[];
  /** Seconds into the run and the counter of the first sample that showed the finding, or null. */
  firstFinding: { elapsedS: number; counter: string } | null;
  /** Mutant: FAIL with one of its counters raised by the recount. Control: PASS. */
  ok: boolean;
  runId: string;
  wallS: number;
  /** The soak's length when it ended early because the mutant was already caught (verdict.soakEndedEarly), and its planned length. */
  soakEndedEarly?: { endedAtS: number; plannedS: number };
}

/**
 * A mutant is caught when the run FAILs and the separate recount raised one of the counters
 * its mechanism must raise (or, for 'acceptedForeign', the verdict found a store-tamper the
 * engine accepted as its own object).
 */
export function isCaught(mutant: MutantInfo, verdict: Pick<Verdict, 'verdict' | 'recount'> & Partial<Pick<Verdict, 'tamper'>>): boolean {
  return verdict.verdict === 'FAIL' && mutant.caughtBy.some((c) => (c === 'acceptedForeign' ? (verdict.tamper?.acceptedForeign ?? 0) > 0 : verdict.recount[c] > 0));
}

/**
 * What showed a raised finding: the separate recount, counting the settled bucket, or the
 * verdict's store-tamper judgement of the engine's reaction (it recovered through a foreign
 * object at a key it re-completed and took it as its own: `acceptedForeign`), which no
 * counter of the recount shows.
 */
export type CatchSource = 'recount' | 'store-tamper judgement';

export interface Catch {
  by: CatchSource;
  /** The counter (duplicates, gaps, ...) or acceptedForeign. */
  name: string;
  value: number;
}

/** The raised list of a row (`name=value`, as qualify-mutants writes it), each with what showed it. */
export function catchesOf(raised: readonly string[]): Catch[] {
  return raised.map((r) => {
    const [name = r, value = ''] = r.split('=');
    return { by: name === 'acceptedForeign' ? 'store-tamper judgement' : 'recount', name, value: Number(value) };
  });
}

/** A catch in the table's words: "recount: duplicates=3160", "store-tamper judgement: accepted a foreign object". */
export function catchWords(c: Catch): string {
  if (c.by === 'store-tamper judgement') return `${c.by}: accepted ${c.value === 1 ? 'a foreign object' : `${c.value} foreign objects`} as its own`;
  return `${c.by}: ${c.name}=${c.value}`;
}

/** The first sample (samples.jsonl text) in which one of the counters is above zero. */
export function firstFinding(samplesText: string, counters: readonly string[]): { elapsedS: number; counter: string } | null {
  for (const line of samplesText.split('\n')) {
    if (!line.trim()) continue;
    let s: Sample;
    try {
      s = JSON.parse(line) as Sample;
    } catch {
      continue; // a torn last line of an interrupted run
    }
    const hit = counters.find((c) => ((s.counters as unknown as Record<string, number>)[c] ?? 0) > 0);
    if (hit) return { elapsedS: s.elapsedS, counter: hit };
  }
  return null;
}

export function renderKillTable(o: { campaign: string; engine: string; rows: KillRow[]; wallS: number }): string {
  const aborted = o.rows.some((r) => r.verdict === 'ABORTED');
  const mutants = o.rows.filter((r) => r.mutant);
  const survivors = mutants.filter((r) => !r.ok && r.verdict !== 'ABORTED');
  const control = o.rows.find((r) => !r.mutant);
  const lines = [
    '# Mutant kill table',
    '',
    `Campaign: ${o.campaign}; engine ${o.engine}; ${mutants.length} mutant(s)${control ? ' and a control run of the correct engine' : ''}; wall time ${fmtDuration(o.wallS)}.`,
    '',
  ];
  const rows = o.rows.map((r) => {
    const catches = catchesOf(r.raised);
    // With no sample showing it, the finding came after the soak: from the recount, or from
    // the store-tamper judgement alone (the engine's reaction at the tamper's heal).
    const lateBy = catches.length && catches.every((c) => c.by === 'store-tamper judgement') ? 'the verdict (store-tamper judgement)' : 'the drain (recount)';
    const first = r.mutant ? (r.firstFinding ? `${r.firstFinding.elapsedS} s (${r.firstFinding.counter})` : `after ${lateBy}`) : '—';
    const result = r.verdict === 'ABORTED' ? '**ABORTED**' : r.mutant ? (r.ok ? 'caught' : '**SURVIVED**') : r.ok ? 'passed' : '**CONTROL FAILED**';
    return [
      r.mutant ? r.mutant.name : '(none: the correct engine)',
      r.mutant ? r.mutant.mechanism : 'control',
      r.mutant ? `FAIL with ${r.mutant.caughtBy.join(' or ')}` : 'PASS',
      r.verdict,
      catches.map(catchWords).join(', ') || 'none',
      first,
      result,
      r.runId,
      r.soakEndedEarly ? `${fmtDuration(r.soakEndedEarly.endedAtS)} of ${fmtDuration(r.soakEndedEarly.plannedS)} (ended once caught)` : 'whole',
      fmtDuration(r.wallS),
    ];
  });
  lines.push(table(['mutant', 'mechanism', 'expected', 'verdict', 'what caught it', 'first finding', 'result', 'run', 'soak', 'wall'], rows));
  lines.push('');
  if (aborted) lines.push(`ABORTED: the command was stopped during ${o.rows.find((r) => r.verdict === 'ABORTED')!.runId}; the mutants after it were not run, and nothing is shown for them.`);
  if (survivors.length) lines.push(`${survivors.length} mutant(s) survived (${survivors.map((r) => r.mutant!.name).join(', ')}): the harness has a defect to fix — a schedule that never hits the mutant's window, or a counter the oracle does not raise.`);
  else if (mutants.length && !aborted) lines.push('Every mutant run was caught.');
  if (control && !control.ok && control.verdict !== 'ABORTED') lines.push('The control run of the correct engine did not PASS: the catches above cannot be told apart from noise.');
  lines.push('');
  return lines.join('\n');
}

/** The kill table for programs (mutants-<time>.json beside the Markdown): one row per run, the mutant by name. */
export interface KillTableJson {
  campaign: string;
  engine: string;
  wallS: number;
  rows: {
    mutant: string | null;
    /** What the mutant must raise (counters, or acceptedForeign). */
    caughtBy: string[];
    verdict: Verdict['verdict'];
    /** What the run raised, `name=value`: the recount's counters and the verdict's acceptedForeign. */
    raised: string[];
    /** The same, each with what showed it (the recount or the store-tamper judgement). */
    shownBy: Catch[];
    firstFinding: KillRow['firstFinding'];
    ok: boolean;
    runId: string;
    wallS: number;
    /** Present when the soak ended early because the mutant was already caught. */
    soakEndedEarly?: { endedAtS: number; plannedS: number };
  }[];
}

export function killTableJson(o: { campaign: string; engine: string; rows: KillRow[]; wallS: number }): KillTableJson {
  return {
    campaign: o.campaign,
    engine: o.engine,
    wallS: o.wallS,
    rows: o.rows.map((r) => ({ mutant: r.mutant?.name ?? null, caughtBy: r.mutant ? [...r.mutant.caughtBy] : [], verdict: r.verdict, raised: r.raised, shownBy: catchesOf(r.raised), firstFinding: r.firstFinding, ok: r.ok, runId: r.runId, wallS: r.wallS, ...(r.soakEndedEarly ? { soakEndedEarly: r.soakEndedEarly } : {}) })),
  };
}

/** Exit status of the command: 2 if it was aborted, 1 if a mutant survived or the control failed, else 0. */
export function killTableExit(rows: readonly KillRow[]): 0 | 1 | 2 {
  if (rows.some((r) => r.verdict === 'ABORTED')) return 2;
  return rows.some((r) => !r.ok) ? 1 : 0;
}
