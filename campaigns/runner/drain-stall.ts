/**
 * A drain that has stopped making progress on a run the oracle has already shown wrong.
 *
 * The drain waits until everything produced is committed or its deadline passes
 * (campaigns/runner/phases.ts drain). A mutant that lost records (drop-restored-handles,
 * abort-on-unknown, keys-reused, unchecked-log in the kill table) never converges, so each of
 * its runs waited the whole deadline (60 s in campaigns/mutants.yaml) with nothing moving: in
 * CI's kill table at d7fcea3 every such drain froze within its first 2 s, while the engine went
 * on completing checkpoints (about 40 more each), and no counter changed after that.
 *
 * The drain may end early, unconverged, only when all of these hold, so no run's verdict can
 * change from it and no catch is lost:
 *  - a counter of the oracle's is above zero in the latest sample: the run is a FAIL whatever
 *    the drain does (a correct run has every counter at zero and always waits the deadline);
 *  - neither the committed objects nor the distinct committed events moved for at least
 *    `minS` seconds, two and a half of the campaign's checkpoint intervals (15 s in
 *    mutants.yaml: a quarter of its 60 s drain deadline);
 *  - at least `checkpoints` more checkpoints completed in that time (the engine ran and its
 *    barriers went through every subtask, each a chance to commit, and committed nothing).
 * The drain still counts as not converged (a liveness reason beside the safety ones).
 */
import type { Sample } from '../../lib/evidence.ts';

/** How long and over how many completed checkpoints nothing may move before an unsafe drain ends. */
export interface DrainStallRule {
  minS: number;
  checkpoints: number;
}

/** Completed checkpoints with nothing committed before an unsafe drain ends (the drain asks for one every 2 s). */
export const DRAIN_STALL_CHECKPOINTS = 3;

/** The rule the drain uses for a campaign's checkpoint interval: 2.5 intervals and 3 completed checkpoints. */
export function drainStallRule(checkpointIntervalS: number): DrainStallRule {
  return { minS: 2.5 * checkpointIntervalS, checkpoints: DRAIN_STALL_CHECKPOINTS };
}

/** Follows the drain's samples; `stalled` says when the drain may end early (see the module comment). */
export class DrainStall {
  readonly #rule: DrainStallRule;
  #since: { atMs: number; objects: number; events: number; checkpoints: number | undefined } | undefined;

  constructor(rule: DrainStallRule) {
    this.#rule = rule;
  }

  /** Takes one sample (at `nowMs`); true when the run is unsafe and nothing moved under the rule. */
  observe(s: Pick<Sample, 'objects' | 'events' | 'counters' | 'checkpoints'>, nowMs: number): boolean {
    const since = this.#since;
    if (!since || s.objects !== since.objects || s.events !== since.events || since.checkpoints === undefined) {
      this.#since = { atMs: nowMs, objects: s.objects, events: s.events, checkpoints: s.checkpoints };
      return false;
    }
    const unsafe = Object.values(s.counters).some((v) => v > 0);
    const still = nowMs - since.atMs >= this.#rule.minS * 1000;
    const checkpointed = s.checkpoints !== undefined && s.checkpoints - since.checkpoints >= this.#rule.checkpoints;
    return unsafe && still && checkpointed;
  }

  /** Seconds nothing has moved, for the log line. */
  stillS(nowMs: number): number {
    return this.#since ? (nowMs - this.#since.atMs) / 1000 : 0;
  }
}
