/**
 * Before a run: what keeps a campaign from ever reaching a PASS, however well the engine
 * does. `campaign plan` prints it as a warning, so a first campaign with one worker-kill is
 * not planned cleanly only to FAIL for coverage after the soak. Pure: from the campaign's
 * gate, its seeded plan and the engine plug's protocol points, mirroring what the verdict
 * will require (campaigns/runner/verdict.ts): every mandatory protocol point fired and
 * recovered, and a gate fault that landed and recovered.
 */
import { MANDATORY_FAULT_POINTS } from '../engine/engine.ts';
import type { FaultKind, PlannedFault } from '../lib/evidence.ts';

/**
 * Fault kinds that cannot land as the gate plans them, `{ kind, atS: 0 }` and no other field
 * (campaigns/runner/phases.ts): their injectors refuse them as not landed.
 */
const GATE_UNLANDABLE: Partial<Record<FaultKind, string>> = {
  'protocol-point': 'a protocol-point fault without a point is not landed (chaos/protocol-point.ts)',
  'clock-step': 'a clock step needs a non-zero offsetS (chaos/clock-step.ts)',
};

/** What the check needs of an engine plug (engine/engine.ts Engine). */
export interface PassEngine {
  name: string;
  mandatoryFaultPoints: readonly string[];
  faultPointsNotApplicable?: Readonly<Record<string, string>>;
}

/** Each reason the campaign cannot PASS with this engine, in words; [] when nothing stands in the way. */
export function passBlockers(campaign: { gate: { fault: FaultKind } }, plan: readonly PlannedFault[], engine: PassEngine): string[] {
  const out: string[] = [];
  // The verdict falls back on the harness's list when a plug names none (campaigns/runner/phases.ts).
  const mandatory = engine.mandatoryFaultPoints.length ? engine.mandatoryFaultPoints : MANDATORY_FAULT_POINTS;
  const scheduled = new Set(plan.filter((f) => f.kind === 'protocol-point' && f.point).map((f) => f.point));
  const notApplicable = mandatory.filter((p) => engine.faultPointsNotApplicable?.[p] !== undefined);
  for (const p of notApplicable) out.push(`mandatory protocol point ${p} cannot be reached by ${engine.name}: ${engine.faultPointsNotApplicable![p]}`);
  const missing = mandatory.filter((p) => !scheduled.has(p) && !notApplicable.includes(p));
  if (missing.length) {
    out.push(`${missing.length === 1 ? 'a mandatory protocol point is' : `${missing.length} of the ${mandatory.length} mandatory protocol points are`} not scheduled (${missing.join(', ')}): the verdict requires each to fire and recover, so the run will FAIL for coverage; add a protocol-point fault with these points`);
  }
  const unlandable = GATE_UNLANDABLE[campaign.gate.fault];
  if (unlandable) out.push(`the gate fault ${campaign.gate.fault} cannot land: the gate plans it with its kind alone, and ${unlandable}, so the gate fails and nothing soaks (GATE_FAILED); use worker-kill, coordinator-kill or broker-restart`);
  return out;
}
