/**
 * Command-line overrides of a loaded campaign: `--seed S`, `--soak DURATION`, `--rate N`
 * (campaign plan and campaign run). They are parsed and checked here (a bad value is
 * QualError('BAD_ARGUMENTS'), exit 254, with a message naming the option), applied to the
 * resolved campaign before it is planned, and recorded in it as `overrides` (each
 * overridden field with its old and new value), so runs/<id>/campaign.resolved.json says
 * what the file said and what ran; a replay of that run reads the overridden seed, soak
 * and rate from it.
 *
 * - `--seed S`: any non-empty string without control characters; the fault order, jitter,
 *   targets and the generator's events all derive from it.
 * - `--soak DURATION`: seconds (`300`), or with units `s`, `m`, `h`, `d`, combinable
 *   (`5m`, `2h`, `1h30m`, `90s`); whole seconds from 1 to 604800 (7 days). A longer soak
 *   stretches the schedule with it: spacingS and jitterS are scaled by new soak / old soak
 *   (rounded down), so the faults spread over the whole soak as they did over the file's,
 *   instead of all landing in its first minutes and leaving the rest faultless (quick.yaml
 *   under --soak 2h: one slot every 360 s, not every 15 s). startAfterS, the faults' own
 *   afterS and durationS stay. A shorter soak keeps the spacing, and the schedule must still
 *   fit in it (startAfterS + fault slots × spacingS ≤ soak, and no fault held past its end),
 *   else the message says the least soak that fits.
 * - `--rate N`: events per second, a number > 0 and ≤ 1000000.
 *
 * A campaign that gives `workload.totalEvents` (the rate is derived from it) keeps its
 * rate under `--soak` and drops the fixed total, which would no longer fit the new soak;
 * under `--rate` the total is dropped too. Either way `overrides.totalEvents` records it
 * (new value null).
 *
 * The same record holds `mutantSchedule` when the run's mutant has a schedule of its own in
 * the file (`perMutant`, campaigns/per-mutant.ts), which replaces the base one before these
 * overrides apply: `--soak` then overrides the mutant's soak.
 */
import { QualError } from '../lib/errors.ts';
import type { OptionSpec } from '../lib/cli.ts';
import { countSlots, heldPastSoak } from './load.ts';
import type { ResolvedCampaign } from './types.ts';

/** The overrides, parsed. */
export interface Overrides {
  seed?: string;
  soakS?: number;
  rate?: number;
}

/** What `campaign.resolved.json` records under `overrides`: each field overridden, old and new. */
export interface OverrideRecord {
  seed?: { old: string; new: string };
  soakS?: { old: number; new: number };
  rate?: { old: number; new: number };
  /** The schedule's spacing and jitter, stretched by a longer --soak (each scaled by new soak / old soak). */
  schedule?: { spacingS: { old: number; new: number }; jitterS: { old: number; new: number } };
  /** A fixed event total the file gave, dropped because --soak, --rate or a mutant's own soak replaced it. */
  totalEvents?: { old: number; new: null };
  /**
   * The run's mutant has a schedule of its own in the file (`perMutant`), used instead of
   * the base one (campaigns/per-mutant.ts): the mutant, the soak and the fault slots, base
   * (old) and the mutant's (new).
   */
  mutantSchedule?: { mutant: string; soakS: { old: number; new: number }; faultSlots: { old: number; new: number } };
}

/** A resolved campaign, with the record of its overrides when it has any. */
export type OverriddenCampaign = ResolvedCampaign & { overrides?: OverrideRecord };

export const MAX_SOAK_S = 604_800;
export const MAX_RATE = 1_000_000;

/** The options both commands declare (their --help lists them). */
export const OVERRIDE_OPTIONS: Record<'seed' | 'soak' | 'rate', OptionSpec> = {
  seed: { type: 'string', valueName: 'S', description: "Override the campaign's seed (fault order, jitter, targets and the events all derive from it)" },
  soak: { type: 'string', valueName: 'DURATION', description: 'Override the soak: seconds, or with units, e.g. 300, 90s, 5m, 2h, 1h30m (a longer soak stretches the fault spacing with it)' },
  rate: { type: 'string', valueName: 'N', description: "Override the workload's rate, in events per second (> 0, at most 1000000)" },
};

/** What --soak does to the schedule, for both commands' --help (part of OVERRIDES_HELP). */
export const SOAK_SCALING_HELP = `A --soak longer than the file's stretches the schedule with it: spacingS and jitterS
are scaled by new soak / old soak, so the faults spread over the whole soak as they do
over the file's (quick.yaml with --soak 2h: one slot every 360 s, not 20 faults in the
first 5 minutes and then 1 h 55 min without any). A shorter --soak keeps the spacing; the
schedule must still fit in it.`;

/** The help paragraph on the overrides, shared by both commands. */
export const OVERRIDES_HELP = `--seed, --soak and --rate override the campaign file's seed, workload.soakS and
workload.rate before planning; campaign.resolved.json records each one under
"overrides" with its old and new value (and a replay of the run re-uses them). A file
that gives workload.totalEvents keeps its rate under --soak and drops the fixed total.

${SOAK_SCALING_HELP}`;

const UNIT_S: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/**
 * A duration in whole seconds: `300`, `90s`, `5m`, `2h`, `1h30m`, `1.5m`. Throws an Error
 * (without the option's name) on anything else, on fractions of a second, or outside
 * 1..604800.
 */
export function parseDuration(text: string): number {
  const s = text.trim().toLowerCase();
  let total: number;
  if (/^\d+(\.\d+)?$/.test(s)) total = Number(s);
  else if (/^(\d+(\.\d+)?[smhd])+$/.test(s)) {
    total = 0;
    for (const m of s.matchAll(/(\d+(?:\.\d+)?)([smhd])/g)) total += Number(m[1]) * UNIT_S[m[2]!]!;
  } else throw new Error(`'${text}' is not a duration (seconds, or e.g. 90s, 5m, 2h, 1h30m)`);
  // 1.5m is exactly 90 s; 0.1h is 360.00000000000006 in floating point: round off the noise.
  const rounded = Math.round(total * 1000) / 1000;
  if (!Number.isInteger(rounded)) throw new Error(`'${text}' is ${rounded} s: a soak is whole seconds`);
  if (rounded < 1 || rounded > MAX_SOAK_S) throw new Error(`'${text}' is ${rounded} s: a soak is from 1 s to ${MAX_SOAK_S} s (7 days)`);
  return rounded;
}

const bad = (option: string, message: string) => new QualError('BAD_ARGUMENTS', `--${option}: ${message}`);

/** Parses the raw option values (strings from the command line; absent ones are absent). */
export function parseOverrides(values: { seed?: unknown; soak?: unknown; rate?: unknown }): Overrides {
  const out: Overrides = {};
  if (values.seed !== undefined) {
    const seed = values.seed;
    if (typeof seed !== 'string' || seed.length === 0) throw bad('seed', 'give a non-empty seed');
    // eslint-disable-next-line no-control-regex
    if (/[\x00-\x1f\x7f]/.test(seed)) throw bad('seed', `${JSON.stringify(seed)} has control characters`);
    if (seed.trim() === '') throw bad('seed', 'a seed of only blanks is a mistake more often than a choice');
    out.seed = seed;
  }
  if (values.soak !== undefined) {
    if (typeof values.soak !== 'string') throw bad('soak', 'give a duration, e.g. 300, 5m, 2h');
    try {
      out.soakS = parseDuration(values.soak);
    } catch (err) {
      throw bad('soak', (err as Error).message);
    }
  }
  if (values.rate !== undefined) {
    const text = typeof values.rate === 'string' ? values.rate.trim() : '';
    if (!/^\d+(\.\d+)?$/.test(text)) throw bad('rate', `'${String(values.rate)}' is not a number of events per second (e.g. 300)`);
    const rate = Number(text);
    if (!(rate > 0) || rate > MAX_RATE) throw bad('rate', `${text} events/s: give more than 0 and at most ${MAX_RATE}`);
    out.rate = rate;
  }
  return out;
}

/** True when nothing is overridden. */
export function noOverrides(o: Overrides): boolean {
  return o.seed === undefined && o.soakS === undefined && o.rate === undefined;
}

/**
 * The campaign with the overrides applied and recorded (a new object; the input is not
 * changed). With no overrides, the campaign itself. Throws QualError('BAD_ARGUMENTS') naming
 * --soak when the schedule does not fit in the new soak.
 */
export function applyOverrides(c: OverriddenCampaign, o: Overrides): OverriddenCampaign {
  if (noOverrides(o)) return c;
  const prev = c.overrides ?? {};
  const record: OverrideRecord = { ...prev };
  let workload = { ...c.workload };
  let schedule = { ...c.schedule };
  let seed = c.seed;
  if (o.seed !== undefined) {
    record.seed = { old: prev.seed?.old ?? c.seed, new: o.seed };
    seed = o.seed;
  }
  if (o.soakS !== undefined) {
    const slots = countSlots(c.faults, c.compositions);
    if (o.soakS > c.workload.soakS) {
      // Stretch the schedule with the soak: the faults keep their share of it.
      const factor = o.soakS / c.workload.soakS;
      const spacingS = Math.max(c.schedule.spacingS, Math.floor(c.schedule.spacingS * factor));
      const jitterS = Math.min(spacingS - 1, Math.max(c.schedule.jitterS, Math.floor(c.schedule.jitterS * factor)));
      if (spacingS !== c.schedule.spacingS || jitterS !== c.schedule.jitterS) {
        record.schedule = {
          spacingS: { old: prev.schedule?.spacingS.old ?? c.schedule.spacingS, new: spacingS },
          jitterS: { old: prev.schedule?.jitterS.old ?? c.schedule.jitterS, new: jitterS },
        };
        schedule = { ...schedule, spacingS, jitterS };
      }
    }
    const needed = schedule.startAfterS + slots * schedule.spacingS;
    const late = heldPastSoak(schedule, slots, c.faults, c.compositions, o.soakS)[0];
    if (needed <= o.soakS && late) throw bad('soak', `campaign ${c.name}'s schedule does not fit in ${o.soakS} s: a fault ${late.message.replace(/workload\.soakS/, '--soak')} (give at least ${late.endS} s)`);
    if (needed > o.soakS) {
      throw bad(
        'soak',
        `campaign ${c.name}'s schedule does not fit in ${o.soakS} s: startAfterS ${c.schedule.startAfterS} s + ${slots} fault slots × spacingS ${c.schedule.spacingS} s = ${needed} s (give at least ${needed} s)`,
      );
    }
    record.soakS = { old: prev.soakS?.old ?? c.workload.soakS, new: o.soakS };
    workload.soakS = o.soakS;
  }
  if (o.rate !== undefined) {
    record.rate = { old: prev.rate?.old ?? c.workload.rate, new: o.rate };
    workload.rate = o.rate;
  }
  if (workload.totalEvents !== undefined && (o.soakS !== undefined || o.rate !== undefined)) {
    const { totalEvents, ...rest } = workload;
    record.totalEvents = { old: totalEvents, new: null };
    workload = rest;
  }
  return { ...c, seed, workload, schedule, overrides: record };
}

/**
 * One line for people: `seed "quick-1" → "x", soak 300 s → 600 s, rate 300 → 50 events/s`;
 * a mutant's own schedule first (`mutant X's own schedule (perMutant): soak 240 s → 90 s,
 * fault slots 13 → 2`), since --soak then applies to it.
 */
export function describeOverrides(r: OverrideRecord | undefined): string {
  if (!r) return '';
  const parts: string[] = [];
  const ms = r.mutantSchedule;
  if (ms) parts.push(`mutant ${ms.mutant}'s own schedule (perMutant): soak ${ms.soakS.old} s → ${ms.soakS.new} s, fault slots ${ms.faultSlots.old} → ${ms.faultSlots.new}`);
  if (r.seed) parts.push(`seed ${JSON.stringify(r.seed.old)} → ${JSON.stringify(r.seed.new)}`);
  if (r.soakS) parts.push(`soak ${r.soakS.old} s → ${r.soakS.new} s`);
  if (r.schedule) parts.push(`spacing ${r.schedule.spacingS.old} s → ${r.schedule.spacingS.new} s, jitter ${r.schedule.jitterS.old} s → ${r.schedule.jitterS.new} s (stretched with the soak)`);
  if (r.rate) parts.push(`rate ${r.rate.old} → ${r.rate.new} events/s`);
  if (r.totalEvents) parts.push(`totalEvents ${r.totalEvents.old} dropped`);
  return parts.join(', ');
}
