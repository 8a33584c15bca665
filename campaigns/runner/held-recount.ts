/**
 * The recount around faults held through it (chaos/controller.ts, LandedFault.holdThroughRecount:
 * a committed object rotten on the store's disk). The demand: an object already
 * committed and judged, rotten, must be met by the recount, and the report must say which
 * object and what the store answered. So, when the chaos controller holds any fault:
 *
 *   1. the held pass: a full read of the settled bucket with the held faults still in force,
 *      recording what the store answers (recount-held.json; oracle/recount.ts `held`) instead
 *      of failing on an object it will not serve;
 *   2. the held faults healed (each fault's own heal, ChaosController.healHeld);
 *   3. the recount that decides the verdict (recount.json), on the healed store, exactly as
 *      when nothing is held: the engine is judged on what it committed, the store's own
 *      behaviour is reported as what it is.
 *
 * Without held faults only step 3 runs. The held faults are healed even when the held pass
 * fails, and before any error is passed on.
 */
import type { PlannedFault } from '../../lib/evidence.ts';

export interface HeldRecountSteps {
  /** The held faults still in force (ChaosController.heldFaults). */
  held(): readonly PlannedFault[];
  /** The held pass (writes recount-held.json). */
  heldPass(): Promise<void>;
  /** Heals the held faults (ChaosController.healHeld). */
  healHeld(): Promise<void>;
  /** The verdict's recount (writes recount.json). */
  recount(): Promise<void>;
  log(line: string): void;
}

/** Runs the held pass, heals the held faults, then the verdict's recount (only the recount when nothing is held). */
export async function recountAroundHeld(steps: HeldRecountSteps): Promise<void> {
  const held = steps.held();
  if (held.length) {
    steps.log(`recount: a held pass first, with ${held.map((f) => f.id).join(', ')} still in force (recount-held.json)`);
    try {
      await steps.heldPass();
    } finally {
      await steps.healHeld();
      steps.log(`recount: ${held.map((f) => f.id).join(', ')} healed; the verdict's recount reads the healed store`);
    }
  }
  await steps.recount();
}
