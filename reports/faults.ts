/**
 * What happened to each fault, from plan.json and chaos.jsonl alone.
 *
 * A fault counts as survived only when it landed (with evidence) and a completed
 * checkpoint followed its heal within the recovery deadline (a `recovered` record). A
 * fault that did not land, or landed and did not recover, or whose heal failed (heal-failed:
 * it may have stayed in force), or whose story the log does not
 * finish (an aborted run), is listed apart and never counted.
 *
 * A fault's recovery is timed from its own heal. A composition's own recovery, from its last
 * heal, is a record of its own (composition-recovered / composition-not-recovered, written
 * once per composition episode); chaos.jsonl files from before those records timed every
 * step of a composition from the composition's last heal, and `compositionRecoveries` then
 * finds none.
 */
import { type ChaosRecord, type FaultKind, type PlannedFault } from '../lib/evidence.ts';
import { FAULT_KINDS } from '../chaos/kinds.ts';
import { soakStart, type RunEvidence } from './evidence.ts';

export type FaultStatus = 'survived' | 'not landed' | 'heal failed' | 'not recovered' | 'no recovery recorded' | 'not attempted';

export interface FaultOutcome {
  id: string;
  kind: FaultKind;
  target?: string;
  point?: string;
  composition?: string;
  planned?: PlannedFault;
  landedAt?: string;
  /** When it landed, in seconds from the soak's start (reports/evidence.ts soakStart), like the plan's atS; negative before the soak (the gate's fault). */
  landedS?: number;
  healedAt?: string;
  endedAt?: string;
  landedEvidence?: Record<string, unknown>;
  recoveryS?: number;
  detail?: string;
  status: FaultStatus;
}

/** One outcome per fault: the plan's faults in plan order, then any the chaos log adds. */
export function faultOutcomes(ev: RunEvidence): FaultOutcome[] {
  const byId = new Map<string, ChaosRecord[]>();
  for (const r of ev.chaos) {
    const list = byId.get(r.faultId) ?? [];
    list.push(r);
    byId.set(r.faultId, list);
  }
  const soak = soakStart(ev);
  const ids = [...(ev.plan ?? []).map((f) => f.id)];
  for (const id of byId.keys()) if (!ids.includes(id)) ids.push(id);
  return ids.map((id) => {
    const planned = ev.plan?.find((f) => f.id === id);
    const recs = byId.get(id) ?? [];
    const first = recs[0];
    const phase = (p: ChaosRecord['phase']) => recs.find((r) => r.phase === p);
    const landed = phase('landed');
    const notLanded = phase('not-landed');
    const healed = phase('healed');
    const recovered = phase('recovered');
    const notRecovered = phase('not-recovered');
    const healFailed = phase('heal-failed');
    let status: FaultStatus;
    if (notLanded) status = 'not landed';
    else if (healFailed) status = 'heal failed';
    else if (notRecovered) status = 'not recovered';
    else if (recovered && landed) status = 'survived';
    else if (landed) status = 'no recovery recorded';
    else status = 'not attempted';
    const last = recs.filter((r) => !isCompositionPhase(r.phase)).at(-1);
    const detail = (notLanded ?? healFailed ?? notRecovered)?.detail;
    return {
      id,
      kind: (planned?.kind ?? first!.kind) as FaultKind,
      ...pick('target', planned?.target ?? landed?.target ?? first?.target),
      ...pick('point', planned?.point ?? first?.point),
      ...pick('composition', planned?.composition ?? first?.composition),
      ...pick('planned', planned),
      ...pick('landedAt', landed?.t),
      ...pick('landedS', soak && landed && Number.isFinite(Date.parse(landed.t)) ? (Date.parse(landed.t) - soak.ms) / 1000 : undefined),
      ...pick('healedAt', healed?.t),
      ...pick('endedAt', last?.t),
      ...pick('landedEvidence', landed?.evidence),
      ...pick('recoveryS', recovered?.recoveryS),
      ...pick('detail', detail),
      status,
    };
  });
}

/** A record about a whole composition (which carries one of its steps' ids), not about that step. */
export function isCompositionPhase(phase: ChaosRecord['phase']): boolean {
  return phase === 'composition-recovered' || phase === 'composition-not-recovered';
}

/** One composition episode's own recovery, from chaos.jsonl. */
export interface CompositionRecovery {
  /** The composition's id (`<name>#<n>`). */
  composition: string;
  /** The step whose heal was the composition's last, which the recovery is timed from. */
  lastHealed: string;
  recovered: boolean;
  /** From the composition's last heal to the first completed checkpoint after it. */
  recoveryS?: number;
  detail?: string;
}

/** The composition records of a run's chaos.jsonl, in log order (none in files that predate them). */
export function compositionRecoveries(chaos: readonly ChaosRecord[]): CompositionRecovery[] {
  return chaos
    .filter((r) => isCompositionPhase(r.phase) && r.composition)
    .map((r) => ({
      composition: r.composition!,
      lastHealed: r.faultId,
      recovered: r.phase === 'composition-recovered',
      ...pick('recoveryS', r.recoveryS),
      ...pick('detail', r.detail),
    }));
}

function pick<K extends string, V>(k: K, v: V | undefined): { [P in K]?: V } {
  return (v === undefined ? {} : { [k]: v }) as { [P in K]?: V };
}

export interface KindSummary {
  kind: FaultKind;
  planned: number;
  landed: number;
  survived: number;
  notLanded: number;
  notRecovered: number;
  healFailed: number;
  unfinished: number;
  /** Recovery times of the soak's survived faults (the gate's fault is left out: the gate asks for its checkpoint). */
  recoveryS: number[];
}

/** Counts per kind, every kind in FAULT_KINDS order (zeros included). */
export function summaryByKind(outcomes: FaultOutcome[]): KindSummary[] {
  return FAULT_KINDS.map((kind) => {
    const of = outcomes.filter((o) => o.kind === kind);
    return {
      kind,
      planned: of.length,
      landed: of.filter((o) => o.landedAt !== undefined).length,
      survived: of.filter((o) => o.status === 'survived').length,
      notLanded: of.filter((o) => o.status === 'not landed').length,
      notRecovered: of.filter((o) => o.status === 'not recovered').length,
      healFailed: of.filter((o) => o.status === 'heal failed').length,
      unfinished: of.filter((o) => o.status === 'no recovery recorded' || o.status === 'not attempted').length,
      recoveryS: of.filter((o) => o.status === 'survived' && o.recoveryS !== undefined && o.planned !== undefined).map((o) => o.recoveryS!),
    };
  });
}

export interface PointCoverage {
  point: string;
  mandatory: boolean;
  planned: number;
  survived: number;
}

/**
 * Protocol points: the engine's list from provenance.json when it is recorded, else the
 * points the plan scheduled plus those the verdict names as uncovered.
 */
export function pointCoverage(ev: RunEvidence, outcomes: FaultOutcome[]): { points: PointCoverage[]; mandatoryKnown: boolean } {
  const mandatory = ev.provenance?.engine.mandatoryFaultPoints;
  const names: string[] = [];
  const add = (p: string | undefined) => {
    if (p && !names.includes(p)) names.push(p);
  };
  (mandatory ?? []).forEach(add);
  (ev.verdict?.uncoveredFaultPoints ?? []).forEach(add);
  outcomes.filter((o) => o.kind === 'protocol-point').forEach((o) => add(o.point));
  return {
    mandatoryKnown: mandatory !== undefined,
    points: names.map((point) => {
      const of = outcomes.filter((o) => o.kind === 'protocol-point' && o.point === point);
      return {
        point,
        mandatory: mandatory ? mandatory.includes(point) : (ev.verdict?.uncoveredFaultPoints ?? []).includes(point),
        planned: of.length,
        survived: of.filter((o) => o.status === 'survived').length,
      };
    }),
  };
}

export interface CompositionSummary {
  name: string;
  runs: number;
  /** Runs whose every step landed. */
  landed: number;
  /** Runs whose every step landed and recovered. */
  survived: number;
  /** Runs in which a worker kill landed while a store outage of the same run was in force. */
  killDuringOutage: number;
  kinds: FaultKind[];
  /** Runs with a composition record; of them, those it recovered from, and their recovery times (from the last heal). */
  recorded: number;
  recovered: number;
  recoveryS: number[];
}

const ms = (t: string | undefined) => (t ? Date.parse(t) : NaN);

/**
 * Compositions by name (the id is `<name>#<n>`), in order of first appearance; with the
 * run's chaos records, each run's own recovery where chaos.jsonl recorded it.
 */
export function compositionSummaries(outcomes: FaultOutcome[], chaos: readonly ChaosRecord[] = []): CompositionSummary[] {
  const recoveries = compositionRecoveries(chaos);
  const runs = new Map<string, FaultOutcome[]>();
  for (const o of outcomes) {
    if (!o.composition) continue;
    const list = runs.get(o.composition) ?? [];
    list.push(o);
    runs.set(o.composition, list);
  }
  const byName = new Map<string, CompositionSummary>();
  for (const [id, steps] of runs) {
    const name = id.replace(/#\d+$/, '');
    const s = byName.get(name) ?? { name, runs: 0, landed: 0, survived: 0, killDuringOutage: 0, kinds: [], recorded: 0, recovered: 0, recoveryS: [] };
    s.runs++;
    if (steps.every((o) => o.landedAt !== undefined)) s.landed++;
    const own = recoveries.find((r) => r.composition === id);
    if (own) {
      s.recorded++;
      if (own.recovered) s.recovered++;
      if (own.recovered && own.recoveryS !== undefined) s.recoveryS.push(own.recoveryS);
    }
    if (steps.every((o) => o.status === 'survived')) s.survived++;
    for (const k of steps.map((o) => o.kind)) if (!s.kinds.includes(k)) s.kinds.push(k);
    const outage = steps.find((o) => o.kind === 'store-outage' && o.landedAt);
    const kill = steps.find((o) => o.kind === 'worker-kill' && o.landedAt);
    if (outage && kill) {
      const k = ms(kill.landedAt);
      const end = outage.healedAt ? ms(outage.healedAt) : Infinity;
      if (k >= ms(outage.landedAt) && k <= end) s.killDuringOutage++;
    }
    byName.set(name, s);
  }
  return [...byName.values()];
}

/** The decisive composition: a store outage with a worker kill inside it. */
export function isDecisive(c: CompositionSummary): boolean {
  return c.kinds.includes('store-outage') && c.kinds.includes('worker-kill');
}

/**
 * The bytes a landed lost-unsynced-writes fault cut from the engine's logs: the figure its
 * landing evidence records (lostBytes). Evidence recorded before that figure existed has only
 * each log's length before and after the cut, and the figure is derived from those; undefined
 * when the evidence has neither.
 */
export function unsyncedBytesLost(evidence: Record<string, unknown> | undefined): number | undefined {
  if (typeof evidence?.['lostBytes'] === 'number') return evidence['lostBytes'];
  const cuts = evidence?.['cuts'] as { bytesBefore: number; bytesAfter: number }[] | undefined;
  return Array.isArray(cuts) ? cuts.reduce((n, c) => n + Math.max(0, c.bytesBefore - c.bytesAfter), 0) : undefined;
}
