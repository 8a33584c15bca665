/**
 * `campaign plan --json`: the seeded timeline under a header that says what it is the
 * timeline of, `{ "header": {...}, "faults": [...] }`. `faults` is exactly the array a run
 * stores as plan.json (formatPlanJson); plan.json itself stays a bare array (replays and
 * the reports read it).
 */
import { spawnSync } from 'node:child_process';
import type { PlannedFault } from '../lib/evidence.ts';
import { repoRoot } from '../lib/paths.ts';
import type { OverriddenCampaign, OverrideRecord } from './overrides.ts';
import { expectedWallTime } from './plan.ts';

export interface PlanHeader {
  campaign: string;
  /** The campaign file as given. */
  file: string;
  seed: string;
  /** `profile`: the job profile the campaign names (engine.profile), absent when it names none. */
  engine: { name: string; mutant: string; profile?: string };
  /** Seconds. */
  soakS: number;
  /** Events per second. */
  rate: number;
  totalEvents?: number;
  /** Faults on the timeline (composition steps counted one each). */
  faultCount: number;
  /** Composition runs on the timeline. */
  compositionCount: number;
  /** Wall time at most, by the deadlines: gate + soak + drain + recount (seconds). */
  expectedWallS: number;
  /** The harness's git revision (12 hex digits, `-dirty` with uncommitted changes), or 'unknown'. */
  revision: string;
  /** What --seed, --soak, --rate and a mutant's own schedule (perMutant) changed, old and new ({} when nothing). */
  overrides: OverrideRecord;
}

/** The checkout's revision, `abc123def456` or `abc123def456-dirty`; 'unknown' outside git. */
export function harnessRevision(cwd = repoRoot): string {
  const rev = spawnSync('git', ['-C', cwd, 'rev-parse', '--short=12', 'HEAD'], { encoding: 'utf8' });
  if (rev.status !== 0) return 'unknown';
  const st = spawnSync('git', ['-C', cwd, 'status', '--porcelain', '--untracked-files=no'], { encoding: 'utf8' });
  return rev.stdout.trim() + (st.status === 0 && st.stdout.trim() === '' ? '' : '-dirty');
}

export function planHeader(c: OverriddenCampaign, plan: readonly PlannedFault[], revision: string): PlanHeader {
  return {
    campaign: c.name,
    file: c.file,
    seed: c.seed,
    engine: { name: c.engine.name, mutant: c.engine.mutant, ...(c.engine.profile !== undefined ? { profile: c.engine.profile } : {}) },
    soakS: c.workload.soakS,
    rate: c.workload.rate,
    ...(c.workload.totalEvents !== undefined ? { totalEvents: c.workload.totalEvents } : {}),
    faultCount: plan.length,
    compositionCount: new Set(plan.filter((f) => f.composition).map((f) => f.composition)).size,
    expectedWallS: expectedWallTime(c).totalS,
    revision,
    overrides: c.overrides ?? {},
  };
}

/** `campaign plan --json`'s text. */
export function formatPlanWithHeader(c: OverriddenCampaign, plan: readonly PlannedFault[], revision: string): string {
  return JSON.stringify({ header: planHeader(c, plan, revision), faults: plan }, null, 2) + '\n';
}
