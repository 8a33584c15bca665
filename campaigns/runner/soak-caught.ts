/**
 * A mutant's soak that has already caught the mutant (issue 31 item 3).
 *
 * A run of a mutant (the engine's deliberately broken variant, as qualify-mutants runs it) is
 * a FAIL the moment the oracle counts what the mutant must raise (MutantInfo.caughtBy); the
 * rest of its soak cannot change that, only delay the verdict: in CI's kill table at d7fcea3
 * the mutants' soaks (campaigns/mutants.yaml perMutant, 1,030 s in all) were most of its
 * 27 min. The soak may end before its planned length only when all of these hold, so no run's
 * verdict can change from it and no catch is lost:
 *  - the run is a mutant's: never the correct engine's, never the control's (`soakCaughtRule`
 *    gives no rule then);
 *  - the oracle's latest sample shows a counter the mutant must raise above zero. A count
 *    (duplicates, foreign, corrupted, mutations) never falls, so one sample suffices. A gauge
 *    (gaps, pastProduced: oracle/tally.ts) can fall when a late object fills a hole, so it
 *    must have stayed above zero in every sample over `gaugeHoldS`, two and a half of the
 *    campaign's checkpoint intervals, as the drain's stall rule waits (drain-stall.ts).
 *    acceptedForeign is the verdict's store-tamper judgement, not a counter: a mutant caught
 *    only by it runs its full soak;
 *  - every fault the plan scheduled at or before the moment the catch was seen has ended its
 *    episode (`faultsInFlight`: landed and healed and its recovery measured, or not landed):
 *    no fault is cut mid-flight. The chaos controller starts no episode planned after that
 *    moment (ChaosController.stopWalk) and records each of its faults as not landed, with
 *    the reason.
 * Then the run goes on as usual: the drain (which ends early itself on a run shown wrong),
 * the settle, and the separate recount that decides the verdict. A fault not started is a
 * warning, never a reason (campaigns/runner/verdict.ts), so a mutant's FAIL stays a FAIL.
 */
import type { MutantInfo } from '../../engine/engine.ts';
import { COUNTER_NAMES, type ChaosRecord, type CounterName, type PlannedFault, type Sample } from '../../lib/evidence.ts';

/** The counters that can fall between samples (oracle/tally.ts: computed at sample time). */
export const GAUGE_COUNTERS: readonly CounterName[] = ['gaps', 'pastProduced'];

/** What may end a mutant's soak early: the counters it must raise, and how long a gauge must hold. */
export interface SoakCaughtRule {
  mutant: string;
  counters: CounterName[];
  gaugeHoldS: number;
}

/** What the soak saw: the counter, its value, the sample that showed it and when (seconds into the soak). */
export interface SoakCatch {
  counter: CounterName;
  value: number;
  sampleT: string;
  seenAtS: number;
}

/**
 * The rule for a run of `mutant` (its MutantInfo from the engine's registry), or null: for the
 * correct engine ('none', absent, or a name the registry does not hold), and for a mutant
 * caught by no counter (acceptedForeign alone).
 */
export function soakCaughtRule(mutant: string | undefined, registry: readonly MutantInfo[], checkpointIntervalS: number): SoakCaughtRule | null {
  if (!mutant || mutant === 'none') return null;
  const info = registry.find((m) => m.name === mutant);
  const counters = (info?.caughtBy ?? []).filter((c): c is CounterName => (COUNTER_NAMES as readonly string[]).includes(c));
  return counters.length ? { mutant, counters, gaugeHoldS: 2.5 * checkpointIntervalS } : null;
}

/** Follows the soak's samples; `observe` gives the catch once a sample shows it (see the module comment), and keeps it. */
export class SoakCaught {
  readonly #rule: SoakCaughtRule;
  /** Since when (sample time, ms) each gauge has been above zero in every sample. */
  readonly #gaugeSince = new Map<CounterName, number>();
  #lastT: string | undefined;
  #caught: SoakCatch | undefined;

  constructor(rule: SoakCaughtRule) {
    this.#rule = rule;
  }

  /** The catch, once seen. */
  get caught(): SoakCatch | undefined {
    return this.#caught;
  }

  /** Takes the latest sample (the same one again is ignored), `seenAtS` seconds into the soak. */
  observe(s: Pick<Sample, 't' | 'counters'> | undefined, seenAtS: number): SoakCatch | undefined {
    if (this.#caught || !s || s.t === this.#lastT) return this.#caught;
    this.#lastT = s.t;
    const at = Date.parse(s.t);
    for (const counter of this.#rule.counters) {
      const value = s.counters[counter] ?? 0;
      if (GAUGE_COUNTERS.includes(counter)) {
        if (value <= 0) {
          this.#gaugeSince.delete(counter);
          continue;
        }
        const since = this.#gaugeSince.get(counter) ?? at;
        this.#gaugeSince.set(counter, since);
        if (at - since < this.#rule.gaugeHoldS * 1000) continue;
      } else if (value <= 0) continue;
      this.#caught = { counter, value, sampleT: s.t, seenAtS };
      break;
    }
    return this.#caught;
  }
}

/** The chaos log's phases that end a fault's episode: after one of them nothing more happens to it in the soak. */
const EPISODE_ENDS: readonly ChaosRecord['phase'][] = ['not-landed', 'recovered', 'not-recovered', 'heal-failed'];

/**
 * The faults of the plan scheduled at or before `cutoffS` (seconds into the soak) whose
 * episode has not ended in the chaos log: not landed yet, or landed and not yet healed and
 * recovered. The soak may end early only when there are none.
 */
export function faultsInFlight(plan: readonly PlannedFault[], chaos: readonly ChaosRecord[], cutoffS: number): PlannedFault[] {
  const ended = new Set(chaos.filter((r) => EPISODE_ENDS.includes(r.phase)).map((r) => r.faultId));
  return plan.filter((f) => f.atS <= cutoffS && !ended.has(f.id));
}

/** The reason a fault planned after the catch was not started, as chaos.jsonl records it. */
export function notStartedReason(c: SoakCatch): string {
  return `not started: the soak ended early, the mutant already caught (the oracle's sample at ${c.sampleT} showed ${c.counter} = ${c.value})`;
}
