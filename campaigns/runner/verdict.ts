/**
 * The verdict, as a pure function of what the run showed. PASS only when everything
 * holds; otherwise every reason is listed, each with its failure class (safety, liveness or
 * coverage: lib/failure-class.ts), which explains the verdict and never changes it. Exit codes: PASS 0, FAIL and GATE_FAILED 1,
 * ABORTED and UNKNOWN (a heal failed, nothing else wrong) 2.
 */
import { COUNTER_NAMES, VERDICT_SCHEMA_VERSION, type VerdictSubject, type ChaosRecord, type Counters, type GateResult, type LedgerEntry, type Recount, type ResourceSample, type SoakEarlyEnd, type Verdict } from '../../lib/evidence.ts';
import { reasonClass } from '../../lib/failure-class.ts';
import { exhaustionChecks } from '../../lib/resource-trend.ts';
import { acceptedForeign, attributeTamper, tamperWindows } from './tamper.ts';

export interface VerdictInput {
  runId: string;
  /** The campaign, seed, engine and revision, written into verdict.json (schemaVersion 2). */
  subject?: VerdictSubject;
  startedAt: string;
  endedAt: string;
  aborted: boolean;
  abortReason?: string;
  gate: GateResult | null;
  chaos: ChaosRecord[];
  mandatoryPoints: readonly string[];
  /** The oracle's running counters at the end of the drain. */
  oracle: Counters;
  /** The separate recount; null when it did not run or failed. */
  recount: Recount | null;
  recountError?: string;
  produced: number;
  drainConverged: boolean;
  /** Why the drain ended before its deadline, unconverged, when it did (campaigns/runner/drain-stall.ts). */
  drainStalled?: string;
  /** When a mutant's soak ended before its planned length (campaigns/runner/soak-caught.ts). */
  soakEndedEarly?: SoakEarlyEnd;
  pendingUploads: number;
  stuckOracle?: string;
  /** Set when no idle checkpoint completed after the drain (a warning: idle barriers were not exercised). */
  settleWarning?: string;
  /** The oracle's ledger (ledger.jsonl), to tell the harness's store-tamper mutations from the engine's. */
  ledger?: readonly LedgerEntry[];
  /** resources.jsonl, for the exhaustion warnings (lib/resource-trend.ts), and the soak's start (ms) the trends are fitted from. */
  resources?: readonly ResourceSample[];
  soakStartMs?: number;
}

const mib = (b: number) => `${Math.round(b / 1048576).toLocaleString('en-US')} MiB`;

/** A warning for each resource trend that would exhaust its machine within twice the campaign's length (never a FAIL). */
export function resourceWarnings(samples: readonly ResourceSample[], soakStartMs?: number): string[] {
  return exhaustionChecks(samples, soakStartMs)
    .filter((e) => e.exhausts)
    .map(
      (e) =>
        `resources: the ${e.what} grows ${mib(e.slopePerS * 3600)}/h and would reach its limit (${e.kind === 'memory' ? `MemTotal ${mib(e.limit)}` : `${mib(e.limit - e.last)} free`}) in about ${Math.round((e.secondsToLimit ?? 0) / 60)} min, within twice the campaign's length (${Math.round(e.horizonS / 60)} min)`,
    );
}

/** Fault ids that landed, and those of them that recovered. */
export function faultStates(chaos: ChaosRecord[]) {
  const landed = new Set<string>();
  const recovered = new Set<string>();
  const notLanded = new Set<string>();
  const notRecovered = new Set<string>();
  const healFailed = new Set<string>();
  for (const r of chaos) {
    if (r.phase === 'heal-failed') healFailed.add(r.faultId);
    if (r.phase === 'landed') landed.add(r.faultId);
    if (r.phase === 'recovered') recovered.add(r.faultId);
    if (r.phase === 'not-landed') notLanded.add(r.faultId);
    if (r.phase === 'not-recovered') notRecovered.add(r.faultId);
  }
  return { landed, recovered, notLanded, notRecovered, healFailed };
}

/** Mandatory points with no fault that fired there and recovered. */
export function uncoveredPoints(chaos: ChaosRecord[], mandatory: readonly string[]): string[] {
  const { recovered } = faultStates(chaos);
  const covered = new Set(chaos.filter((r) => r.kind === 'protocol-point' && r.phase === 'landed' && recovered.has(r.faultId)).map((r) => r.point));
  return mandatory.filter((p) => !covered.has(p));
}

/**
 * The recount's disagreement, counter by counter (oracle vs recount). After a drain that did
 * not converge it is expected and the reason says why: the bucket never settled, the oracle
 * (live) counts a gap only below a partition's highest committed sequence, while the recount
 * also counts the tail that was produced and never committed (oracle/tally.ts); the drain's
 * own reason fails the run.
 */
export function disagreement(oracle: Counters, recount: Counters, drainConverged: boolean): string {
  const diff = COUNTER_NAMES.filter((c) => oracle[c] !== recount[c]).map((c) => `${c} ${oracle[c]} vs ${recount[c]}`);
  const base = `the recount disagrees with the oracle (oracle vs recount: ${diff.join(', ')})`;
  return drainConverged ? base : `${base}, as expected when the drain did not converge: the live oracle counts a gap only below a partition's highest committed sequence, the recount also counts the produced tail that was never committed`;
}

/** A mutant's early soak end in words: when, of how long, the counter that caught it, and the faults not started. */
export function soakEarlyWords(e: SoakEarlyEnd): string {
  const n = e.notStarted.length;
  return `soak: ended early at ${e.endedAtS} s of its planned ${e.plannedS} s, the mutant already caught: the oracle's sample at ${e.sampleT} showed ${e.counter} = ${e.value} (seen ${e.caughtAtS} s into the soak), and every fault planned up to then had ended; ${n === 0 ? 'no planned fault was left' : `${n} planned fault${n === 1 ? ' was' : 's were'} not started (${e.notStarted.join(', ')})`}`;
}

export function decideVerdict(input: VerdictInput): Verdict {
  const reasons: string[] = [];
  const warnings: string[] = [];
  // Store-tamper: mutations on the keys the harness tampered with, inside its window, are
  // the harness's (reported apart); an engine that accepted a foreign object fails the run.
  const windows = tamperWindows(input.chaos);
  const harness = attributeTamper(windows, input.ledger ?? []);
  const less = (c: Counters, n: number): Counters => ({ ...c, mutations: Math.max(0, c.mutations - n) });
  const v: VerdictInput = windows.length
    ? {
        ...input,
        oracle: less(input.oracle, harness.oracleMutations),
        recount: input.recount ? { ...input.recount, counters: less(input.recount.counters, harness.recountMutations) } : null,
      }
    : input;
  const recountCounters = v.recount?.counters ?? null;
  let agrees = false;
  if (v.recount) {
    agrees = COUNTER_NAMES.every((c) => v.recount!.counters[c] === v.oracle[c]);
  }
  const uncovered = uncoveredPoints(v.chaos, v.mandatoryPoints);
  let verdict: Verdict['verdict'];
  if (v.aborted) {
    verdict = 'ABORTED';
    reasons.push(`the run was aborted${v.abortReason ? `: ${v.abortReason}` : ''}; nothing is certified`);
  } else if (!v.gate || !v.gate.passed) {
    verdict = 'GATE_FAILED';
    for (const c of v.gate?.conditions ?? []) if (!c.passed) reasons.push(`gate: ${c.name} not shown (${c.evidence})`);
    if (!v.gate) reasons.push('gate: did not run');
  } else {
    const { notLanded, notRecovered } = faultStates(v.chaos);
    if (recountCounters) for (const c of COUNTER_NAMES) if (recountCounters[c] > 0) reasons.push(`recount: ${c} = ${recountCounters[c]}`);
    for (const c of COUNTER_NAMES) if (v.oracle[c] > 0) reasons.push(`oracle: ${c} = ${v.oracle[c]}`);
    if (!v.recount) reasons.push(`the separate recount did not complete${v.recountError ? `: ${v.recountError}` : ''}`);
    else if (!agrees) reasons.push(disagreement(v.oracle, v.recount.counters, v.drainConverged));
    if (v.recount && v.recount.distinctEvents !== v.produced) reasons.push(`recount: ${v.recount.distinctEvents} distinct events committed of ${v.produced} produced`);
    for (const p of uncovered) reasons.push(`mandatory protocol point not covered: ${p}`);
    for (const id of notRecovered) reasons.push(`fault ${id} had no recovery within its deadline`);
    if (!v.drainConverged) reasons.push(v.drainStalled ? `the drain did not converge: ${v.drainStalled}` : 'the drain did not converge before its deadline');
    if (v.stuckOracle) reasons.push(`stuck oracle: ${v.stuckOracle}`);
    // A fault that did not land is not survived; it fails the run only through what it leaves
    // uncovered (above). One not started because a mutant's soak ended early says so.
    const notStarted = new Set(v.chaos.filter((r) => r.phase === 'not-landed' && r.evidence?.['notStarted'] === true).map((r) => r.faultId));
    if (v.soakEndedEarly) warnings.push(soakEarlyWords(v.soakEndedEarly));
    for (const id of notLanded) warnings.push(notStarted.has(id) ? `fault ${id} was not started (the soak ended early: the mutant was already caught) and is not counted as survived` : `fault ${id} did not land and is not counted as survived`);
    if (v.settleWarning) warnings.push(`settle: ${v.settleWarning}`);
    for (const w of acceptedForeign(windows)) reasons.push(`engine accepted a foreign object: store-tamper ${w.faultId} (${w.variant}) on ${w.keys.join(', ')} was recovered through without an integrity stop`);
    for (const f of harness.findings) warnings.push(`harness, not engine: ${f}`);
    // A fault whose heal failed may have stayed in force past its planned hold: what the run
    // showed is not what was planned, so a run that shows nothing wrong is UNKNOWN, never PASS.
    const { healFailed } = faultStates(v.chaos);
    const unhealed = [...healFailed].map((id) => `fault ${id} could not be healed (heal-failed); the run is not certified`);
    if (reasons.length) {
      verdict = 'FAIL';
      reasons.push(...unhealed);
    } else if (unhealed.length) {
      verdict = 'UNKNOWN';
      reasons.push(...unhealed);
    } else verdict = 'PASS';
  }
  if (v.resources?.length) warnings.push(...resourceWarnings(v.resources, v.soakStartMs));
  return {
    schemaVersion: VERDICT_SCHEMA_VERSION,
    runId: v.runId,
    ...(v.subject ?? {}),
    verdict,
    exitCode: verdict === 'PASS' ? 0 : verdict === 'ABORTED' || verdict === 'UNKNOWN' ? 2 : 1,
    reasons,
    classifiedReasons: reasons.map((reason) => ({ reason, class: reasonClass(reason, v.drainConverged) })),
    warnings,
    produced: v.produced,
    committedDistinct: v.recount?.distinctEvents ?? 0,
    oracle: v.oracle,
    recount: recountCounters ?? v.oracle,
    recountAgrees: agrees,
    pendingUploads: v.pendingUploads,
    drainConverged: v.drainConverged,
    ...(!v.drainConverged && v.drainStalled ? { drainStalled: v.drainStalled } : {}),
    ...(v.soakEndedEarly ? { soakEndedEarly: v.soakEndedEarly } : {}),
    uncoveredFaultPoints: uncovered,
    startedAt: v.startedAt,
    endedAt: v.endedAt,
    ...(windows.length
      ? {
          tamper: {
            reactions: windows.map((w) => ({ faultId: w.faultId, variant: w.variant, keys: w.keys, reaction: w.reaction })),
            harnessMutations: { oracle: harness.oracleMutations, recount: harness.recountMutations },
            acceptedForeign: acceptedForeign(windows).length,
          },
        }
      : {}),
  };
}
