/**
 * Per-mutant schedules: a campaign file's `perMutant` map gives a mutant its own short
 * schedule (faults, compositions, soak), used instead of the base one when that mutant
 * runs; the base schedule is what the correct engine (the control) runs. The loader
 * (campaigns/load.ts) checks that every fault, protocol point and composition a mutant's
 * schedule uses is in the base schedule, so that the control's PASS covers it, and that
 * the schedule fits its soak.
 *
 * `campaignForMutant` gives the campaign one run uses: the chosen schedule in place, the
 * map dropped, and `overrides.mutantSchedule` recording what replaced what, so
 * campaign.resolved.json and `campaign plan --json`'s header say that the run did not
 * use the file's base schedule.
 */
import type { Engine, MutantInfo } from '../engine/engine.ts';
import { ENGINE_NAMES, loadEngine } from '../engine/index.ts';
import { QualError } from '../lib/errors.ts';
import type { FaultKind } from '../lib/evidence.ts';
import { countSlots, loadCampaign } from './load.ts';
import type { OverriddenCampaign } from './overrides.ts';
import type { ResolvedCampaign, ResolvedMutantSchedule } from './types.ts';

/** The schedule a mutant has of its own in this campaign, if any ('none' and undefined have none). */
export function mutantSchedule(c: ResolvedCampaign, mutant: string | undefined): ResolvedMutantSchedule | undefined {
  if (!mutant || mutant === 'none' || !c.perMutant) return undefined;
  return Object.prototype.hasOwnProperty.call(c.perMutant, mutant) ? c.perMutant[mutant] : undefined;
}

/**
 * The campaign a run of `mutant` uses (undefined or 'none': the correct engine): with the
 * mutant's own schedule in place of the base faults, compositions and soak when the
 * campaign gives it one, and recorded under `overrides.mutantSchedule`; always without
 * the perMutant map. A new object; the input is not changed.
 */
export function campaignForMutant(c: OverriddenCampaign, mutant: string | undefined): OverriddenCampaign {
  const { perMutant: _perMutant, ...rest } = c;
  const m = mutantSchedule(c, mutant);
  if (!m) return rest;
  const soakS = m.soakS ?? c.workload.soakS;
  const { totalEvents, ...workload } = c.workload;
  // A fixed event total was spread over the base soak; a different soak keeps the rate and drops it (as --soak does).
  const dropTotal = soakS !== c.workload.soakS && totalEvents !== undefined;
  return {
    ...rest,
    workload: dropTotal ? { ...workload, soakS } : { ...c.workload, soakS },
    faults: m.faults,
    compositions: m.compositions,
    overrides: {
      ...(c.overrides ?? {}),
      ...(dropTotal ? { totalEvents: { old: totalEvents, new: null } } : {}),
      mutantSchedule: {
        mutant: mutant!,
        soakS: { old: c.workload.soakS, new: soakS },
        faultSlots: { old: countSlots(c.faults, c.compositions), new: countSlots(m.faults, m.compositions) },
      },
    },
  };
}

/** The fault kinds a campaign's timeline holds (battery entries and composition steps). */
export function scheduledKinds(c: Pick<ResolvedCampaign, 'faults' | 'compositions'>): Set<FaultKind> {
  return new Set([...c.faults.map((f) => f.kind), ...c.compositions.flatMap((x) => x.steps.map((s) => s.kind))]);
}

/**
 * Whether the schedule a mutant will run (its own, else the base) holds a fault kind that
 * can expose it (`exposedBy`; a mutant without that list: any schedule can).
 * `qualify-mutants` skips, saying so, a mutant for which this is false.
 */
export function exposable(c: ResolvedCampaign, m: Pick<MutantInfo, 'name' | 'exposedBy'>): boolean {
  if (!m.exposedBy) return true;
  const kinds = scheduledKinds(campaignForMutant(c, m.name));
  return m.exposedBy.some((k) => kinds.has(k));
}

/**
 * Loads a campaign checked against its engine's own fault points and mutants (the engine
 * the campaign names, or `plug`), perMutant map included: no rig, nothing touched.
 */
export function loadForEngine(file: string, plug?: Engine): { campaign: ResolvedCampaign; engine: Engine } {
  // engine.name is checked as a field of the file (file:line: engine.name) before it is looked up.
  const named = plug ?? loadEngine(loadCampaign(file, { engines: ENGINE_NAMES }).engine.name);
  // engine.profile is checked as a field of the file against the plug's profiles (refused for a plug with none).
  const campaign = loadCampaign(file, { faultPoints: named.faultPoints, mutants: named.mutants.map((m) => m.name), profiles: named.jobProfiles ?? [] });
  const profile = campaign.engine.profile;
  if (profile === undefined || profile === named.jobProfile) return { campaign, engine: named };
  // A given plug is used as it is: it must already deploy the profile the campaign names.
  if (plug) throw new QualError('BAD_ARGUMENTS', `campaign ${file} names job profile '${profile}', the given ${plug.name} plug deploys '${plug.jobProfile ?? 'its only job'}'`);
  return { campaign, engine: loadEngine(campaign.engine.name, { profile }) };
}
