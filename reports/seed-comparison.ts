/**
 * The report's point-by-point comparison with the seed report QUAL-03 (../shared/QUAL-03.md),
 * shown for the campaigns that reproduce it: qual03 and flink-qual03 (on MinIO or on SeaweedFS)
 * against QUAL-03's two-hour run, qual03-smoke (the rehearsal) against QUAL-03's 45-minute rehearsal. The
 * seed's figures are written here once, each with where in QUAL-03.md it comes from; this
 * run's figures are read from its evidence.
 *
 * Like is compared with like. A figure that grows with time is compared per hour of soak
 * when the two durations differ. A row the campaign sets (checkpoint interval, soak, events
 * produced, oracle samples) is shown as "set", never as met. An outcome "meets" when this
 * run's figure (or rate) is at least the seed's. Transient sample errors are compared by
 * when they happened (QUAL-03's three were all during injected outages). Multipart uploads
 * left pending, and any figure the seed does not state, are shown as evidence only.
 */
import { type FaultKind } from '../lib/evidence.ts';
import { FAULT_KINDS } from '../chaos/kinds.ts';
import { phaseSpans, type RunEvidence } from './evidence.ts';
import type { FaultOutcome } from './faults.ts';
import { fmtDuration, fmtInt, plural, secondsBetween, table } from './format.ts';
import { storeDownDuringRecovery } from './claim.ts';
import { describeSampleErrorTiming, sampleErrorTiming } from './sample-errors.ts';

/** Campaigns whose report carries the comparison. */
export const SEED_CAMPAIGNS = ['qual03', 'qual03-smoke', 'flink-qual03', 'flink-qual03-seaweedfs'] as const;
/** The store QUAL-03 ran on (its Boundaries: "an S3-compatible store (MinIO, pinned release)"). */
const SEED_STORE = 'minio';
/** The rehearsal campaign: compared with QUAL-03's own rehearsal. */
const REHEARSAL_CAMPAIGN = 'qual03-smoke';

/** Durations within this share of each other are the same length: counts are compared as counts. */
const SAME_LENGTH = 0.01;

/** What QUAL-03 states of one of its runs; a figure it does not state is absent. */
export interface SeedFigures {
  /** How the comparison names it. */
  name: string;
  durationS: number;
  /** What the duration covers, and so what this run's rates are taken over: the soak, or the whole run from start to verdict. */
  durationOf: 'soak' | 'run';
  /** Where the fault rows' seed figures come from, when not from this seed's own words. */
  faultsNote?: string;
  events: number;
  distinct: number;
  objects?: number;
  checkpointIntervalS?: number;
  samples?: number;
  /** Transient sample errors, and QUAL-03's words on when they happened. */
  transientErrors?: { count: number; when: string };
  pendingUploads?: number;
  faults?: Partial<Record<FaultKind, number>>;
  workerPidChecks?: number;
  storeDownDuringRecovery?: number;
}

/** QUAL-03's two-hour run: Workload, Measured outcome, "What the engine survived", Caveats. */
export const SEED: SeedFigures = {
  name: "QUAL-03's two-hour run",
  durationS: 2 * 3600,
  durationOf: 'soak',
  events: 7_477_200,
  distinct: 7_477_200,
  objects: 3_688,
  checkpointIntervalS: 8,
  samples: 377,
  transientErrors: { count: 3, when: 'all during injected outages' },
  pendingUploads: 110,
  faults: {
    'worker-kill': 6,
    'protocol-point': 10,
    'store-outage': 4,
    partition: 4,
    'coordinator-kill': 3,
    'broker-restart': 3,
    'packet-loss': 2,
  },
  workerPidChecks: 7,
  storeDownDuringRecovery: 4,
};

/**
 * QUAL-03's provenance, "Preceded by": a 45-minute rehearsal of the same battery, 2,917,500
 * events, all committed exactly once. Its 45 minutes are the whole rehearsal; the same
 * battery means the two-hour run's fault counts.
 */
export const SEED_REHEARSAL: SeedFigures = {
  name: "QUAL-03's 45-minute rehearsal",
  durationS: 45 * 60,
  durationOf: 'run',
  events: 2_917_500,
  distinct: 2_917_500,
  faults: SEED.faults!,
  faultsNote: "the two-hour run's battery, which the rehearsal repeated",
  storeDownDuringRecovery: SEED.storeDownDuringRecovery!,
};

const FAULT_ROWS: Partial<Record<FaultKind, string>> = {
  'worker-kill': 'Worker SIGKILLs survived',
  'protocol-point': 'Kills at a named protocol point survived',
  'store-outage': 'Store outages survived',
  partition: 'Partitions from the coordinator survived',
  'coordinator-kill': 'Coordinator SIGKILLs survived',
  'broker-restart': 'Broker restarts survived',
  'packet-loss': 'Packet-loss windows survived',
};

/** How a row is judged. */
export type SeedJudgement =
  /** An outcome: meets when this run's figure (per hour, when `perHour`) is at least the seed's. */
  | 'atLeast'
  /** A setting of the campaign: shown, never met. */
  | 'set'
  /** Transient sample errors: compared by when they happened. */
  | 'timing'
  /** Shown, not judged (`why` says why). */
  | 'evidence';

export interface SeedRow {
  figure: string;
  seed: number | undefined;
  seedNote?: string;
  run: number | undefined;
  runNote?: string;
  format?: (n: number) => string;
  /** How the row is judged (default atLeast). */
  compare?: SeedJudgement;
  /** Compare per hour of soak (set by seedRows when the durations differ, for the figures that grow with time). */
  perHour?: boolean;
  /** Why an evidence row is not judged, or (timing) the comparison's words. */
  why?: string;
  /** timing rows: whether the run's errors all fell where the seed's did. */
  like?: boolean;
}

/** The durations the rates are taken over, when they differ. */
export interface RateBasis {
  seedS: number;
  runS: number;
}

/** A row's figure per hour of its run's soak. */
function perHour(n: number, s: number): number {
  return n / (s / 3600);
}

/** Whether a row meets the seed; undefined for a row that is not an outcome or lacks a figure. */
export function rowMeets(r: SeedRow, basis?: RateBasis): boolean | undefined {
  if ((r.compare ?? 'atLeast') !== 'atLeast' || r.run === undefined || r.seed === undefined) return undefined;
  if (r.perHour && basis) return perHour(r.run, basis.runS) >= perHour(r.seed, basis.seedS);
  return r.run >= r.seed;
}

/** The seed this run is compared with: the rehearsal for the rehearsal campaign, the two-hour run otherwise. */
export function seedFor(campaign: string): SeedFigures {
  return campaign === REHEARSAL_CAMPAIGN ? SEED_REHEARSAL : SEED;
}

/**
 * What this run's rates are taken over, like the seed's duration: the soak's measured length
 * (its phase marks), else the campaign's planned one (`planned`); or the run from its start
 * to its verdict.
 */
function measuredLength(ev: RunEvidence, of: SeedFigures['durationOf']): { s: number; planned: boolean } | undefined {
  if (of === 'run') {
    const s = secondsBetween(ev.verdict?.startedAt ?? ev.provenance?.startedAt, ev.verdict?.endedAt);
    return s !== undefined ? { s, planned: false } : undefined;
  }
  const span = phaseSpans(ev).find((s) => s.phase === 'soak');
  if (span?.endMs !== undefined) return { s: (span.endMs - span.startMs) / 1000, planned: false };
  return ev.campaign ? { s: ev.campaign.workload.soakS, planned: true } : undefined;
}

/** The rows, seed against this run; `run` undefined when the evidence lacks the figure. */
export function seedRows(ev: RunEvidence, outcomes: FaultOutcome[], produced: number | undefined, distinct: number | undefined, seed: SeedFigures = SEED): SeedRow[] {
  // The soak's faults only: the gate's fault is not part of the battery.
  const soak = outcomes.filter((o) => o.planned !== undefined && o.status === 'survived');
  const byKind = (k: FaultKind) => soak.filter((o) => o.kind === k).length;
  const pidChecks = soak
    .filter((o) => o.kind === 'coordinator-kill')
    .reduce((n, o) => n + (Array.isArray(o.landedEvidence?.['workerPids']) ? (o.landedEvidence!['workerPids'] as unknown[]).length : 0), 0);
  const length = measuredLength(ev, seed.durationOf);
  const rated = length !== undefined && Math.abs(length.s - seed.durationS) > SAME_LENGTH * seed.durationS;
  const notStated = `not stated for ${seed.name}`;
  /** A row whose seed figure may be absent: then it is evidence only. */
  const stated = (row: SeedRow): SeedRow =>
    row.seed !== undefined ? row : { ...row, seedNote: row.seedNote ?? notStated, ...(row.compare !== 'evidence' ? { compare: 'evidence' as const, why: notStated } : {}) };
  const timing = sampleErrorTiming(ev, outcomes);
  const errs = seed.transientErrors;
  const outsideOutage = timing.errors - (timing.byKind.find((k) => k.kind === 'store-outage')?.errors ?? 0);
  const rows: SeedRow[] = [
    { figure: 'Events produced', seed: seed.events, run: produced, compare: 'set', perHour: rated, why: 'the campaign sets the rate' },
    { figure: 'Distinct events committed (fresh full re-read)', seed: seed.distinct, run: distinct, perHour: rated },
    stated({ figure: 'Objects committed', seed: seed.objects, run: ev.recount?.objects, perHour: rated }),
    stated({ figure: 'Checkpoint interval', seed: seed.checkpointIntervalS, run: ev.campaign?.workload.checkpointIntervalS, compare: 'set', format: (n) => `${n} s` }),
    {
      figure: 'Completed checkpoints',
      seed: undefined,
      seedNote: 'not stated',
      run: ev.checkpoints.length,
      compare: 'evidence',
      perHour: rated,
      why: 'QUAL-03 states no count',
    },
    stated({ figure: 'Oracle samples', seed: seed.samples, run: ev.samples.length, compare: 'set', perHour: rated, why: 'the campaign sets the sample interval' }),
    errs
      ? {
          figure: 'Transient sample errors (met and retried)',
          seed: errs.count,
          seedNote: errs.when,
          run: timing.errors,
          runNote: describeSampleErrorTiming(timing),
          compare: 'timing',
          like: outsideOutage === 0,
          why:
            timing.errors === 0
              ? `none met; QUAL-03 met ${fmtInt(errs.count)}, ${errs.when}`
              : outsideOutage === 0
                ? `like QUAL-03's (${errs.when}): all inside store-outage windows`
                : `unlike QUAL-03's (${errs.when}): ${fmtInt(outsideOutage)} outside any store-outage window`,
        }
      : stated({ figure: 'Transient sample errors (met and retried)', seed: undefined, run: timing.errors, ...(timing.errors ? { runNote: describeSampleErrorTiming(timing) } : {}), compare: 'timing' }),
    stated({
      figure: 'Multipart uploads left pending',
      seed: seed.pendingUploads,
      run: ev.verdict?.pendingUploads,
      compare: 'evidence',
      why: 'QUAL-03 records it as evidence, not as a fault; fewer is no shortfall',
    }),
    {
      figure: seed.durationOf === 'soak' ? 'Soak duration' : 'Duration, start to verdict',
      seed: seed.durationS,
      run: length?.s,
      ...(length?.planned ? { runNote: 'planned; no soak marks in the evidence' } : {}),
      compare: 'set',
      why: 'the campaign sets it',
      format: (n) => fmtDuration(n),
    },
    ...FAULT_KINDS.filter((k) => FAULT_ROWS[k] !== undefined).map((k) =>
      stated({ figure: FAULT_ROWS[k]!, seed: seed.faults?.[k], ...(seed.faultsNote ? { seedNote: seed.faultsNote } : {}), run: ev.chaos.length ? byKind(k) : undefined }),
    ),
    stated({ figure: 'Worker-PID stability checks after coordinator kills', seed: seed.workerPidChecks, run: ev.chaos.length ? pidChecks : undefined, runNote: 'worker PIDs recorded before each surviving kill and found unchanged after it' }),
    stated({ figure: 'Store down during a worker recovery (decisive composition) survived', seed: seed.storeDownDuringRecovery, ...(seed.faultsNote ? { seedNote: seed.faultsNote } : {}), run: ev.chaos.length ? storeDownDuringRecovery(outcomes.filter((o) => o.planned !== undefined)) : undefined }),
  ];
  return rows;
}

/** The comparison's verdict on one row, as the table's last column shows it. */
export function judgementCell(r: SeedRow, basis?: RateBasis): string {
  const c = r.compare ?? 'atLeast';
  if (c === 'set') return 'set';
  if (c === 'timing') return r.seed === undefined ? `not compared: ${r.why ?? 'not stated'}` : (r.why ?? 'n/a');
  if (c === 'evidence') return `not compared: ${r.why ?? 'evidence only'}`;
  const m = rowMeets(r, basis);
  return m === undefined ? 'n/a' : m ? 'meets' : '**short**';
}

/** The section, or nothing for a campaign that does not reproduce QUAL-03. */
export function seedComparisonSection(ev: RunEvidence, outcomes: FaultOutcome[], produced: number | undefined, distinct: number | undefined): string[] {
  const name = ev.campaign?.name ?? ev.provenance?.campaign;
  if (!name || !(SEED_CAMPAIGNS as readonly string[]).includes(name)) return [];
  const seed = seedFor(name);
  const rows = seedRows(ev, outcomes, produced, distinct, seed);
  const length = measuredLength(ev, seed.durationOf);
  const basis = rows.some((r) => r.perHour) && length ? { seedS: seed.durationS, runS: length.s } : undefined;
  const out = ['## Compared with QUAL-03', ''];
  out.push(
    `This run is compared with ${seed.name} (${fmtDuration(seed.durationS)}${seed.durationOf === 'soak' ? ' of soak' : ', start to finish'})${basis ? `. The durations differ (${fmtDuration(basis.runS)} here), so the figures that grow with time are compared per hour${seed.durationOf === 'soak' ? ' of soak' : ''}` : ''}. A row the campaign sets is marked "set"; an outcome meets the seed when this run's figure${basis ? ' (or rate)' : ''} is at least QUAL-03's. Fault rows count the soak's faults that landed and recovered (the gate's fault is not counted).${storeSentence(ev)}`,
    '',
  );
  const f = (r: SeedRow, n: number | undefined, s: number | undefined) => {
    if (n === undefined) return 'n/a';
    const v = r.format ? r.format(n) : fmtInt(n);
    return r.perHour && basis && s !== undefined ? `${v} (${fmtInt(perHour(n, s))} per hour)` : v;
  };
  const seedCell = (r: SeedRow) => (r.seed === undefined ? (r.seedNote ?? 'n/a') : `${f(r, r.seed, seed.durationS)}${r.seedNote ? ` (${r.seedNote})` : ''}`);
  const runCell = (r: SeedRow) => `${f(r, r.run, length?.s)}${r.runNote ? `: ${r.runNote}` : ''}`;
  out.push(table(['Figure', 'QUAL-03', 'This run', 'Judged'], rows.map((r) => [r.figure, seedCell(r), runCell(r), judgementCell(r, basis)])), '');
  out.push(seedSummary(rows, basis), '');
  out.push(objectsPerCheckpoint(ev), '');
  return out;
}

/**
 * When this run's store is not QUAL-03's (provenance.json `store`), one sentence saying so: the
 * rows then compare the engine under the same battery on another store, not the store.
 */
function storeSentence(ev: RunEvidence): string {
  const store = ev.provenance?.store;
  if (!store || store.name.toLowerCase() === SEED_STORE) return '';
  return ` QUAL-03's store was MinIO (a pinned release); this run's was ${store.name} ${store.version} (provenance.json), so the rows compare the engine under the same battery on another store.`;
}

/** What the table says, in one paragraph: how many outcomes meet, which fall short, what is set and what is evidence. */
export function seedSummary(rows: SeedRow[], basis?: RateBasis): string {
  const judged = rows.filter((r) => (r.compare ?? 'atLeast') === 'atLeast');
  const meets = judged.filter((r) => rowMeets(r, basis) === true);
  const short = judged.filter((r) => rowMeets(r, basis) === false);
  const set = rows.filter((r) => r.compare === 'set').length;
  const timing = rows.filter((r) => r.compare === 'timing' && r.seed !== undefined);
  const evidence = rows.filter((r) => r.compare === 'evidence' || (r.compare === 'timing' && r.seed === undefined)).length;
  const parts = [`${meets.length} of the ${plural(judged.length, 'outcome')} compared meet${meets.length === 1 ? 's' : ''} or exceed${meets.length === 1 ? 's' : ''} QUAL-03${short.length ? `; ${short.length} fall${short.length === 1 ? 's' : ''} short: ${short.map((r) => r.figure[0]!.toLowerCase() + r.figure.slice(1) + (r.perHour && basis ? ' (per hour)' : '')).join(', ')}` : ''}`];
  if (judged.length - meets.length - short.length > 0) parts.push(`${judged.length - meets.length - short.length} lack this run's figure`);
  if (timing.length) parts.push(`the transient sample errors fell ${timing.every((r) => r.like) ? 'where' : 'not only where'} QUAL-03's did`);
  parts.push(`${plural(set, 'row')} ${set === 1 ? 'is a setting' : 'are settings'} of the campaign and ${plural(evidence, 'more row')} ${evidence === 1 ? 'is' : 'are'} evidence only`);
  return `${parts.join('; ')}.`;
}

/** Objects against checkpoints, from the evidence, with the engine plug's own statement of how many a checkpoint commits (provenance). */
function objectsPerCheckpoint(ev: RunEvidence): string {
  const objects = ev.recount?.objects;
  const cps = ev.checkpoints.length;
  const cadence = ev.provenance?.engine.commitCadence;
  const declared = cadence ? `The engine plug declares that ${cadence}. ` : '';
  if (objects === undefined || cps === 0) return `${declared}This run has no ${objects === undefined ? 'recount' : 'completed checkpoint'} to set objects against checkpoints.`;
  const partitions = ev.campaign?.workload.partitions;
  return `${declared}This run committed ${fmtInt(objects)} objects over ${fmtInt(cps)} completed checkpoints: ${fmtInt(objects / cps, 2)} a checkpoint${partitions ? ` with ${plural(partitions, 'partition')}` : ''}.`;
}
