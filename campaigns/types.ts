/**
 * The campaign's vocabulary: what a campaign file says (campaigns/schema.json is its
 * schema), and the resolved campaign (every default filled, targets expanded) that the
 * runner uses and stores as runs/<run-id>/campaign.resolved.json.
 */
import { MANDATORY_FAULT_POINTS } from '../engine/engine.ts';
import { LOCAL_HOSTS } from '../rig/hosts.ts';
import type { StoreKind } from '../rig/types.ts';
import type { FaultKind, FaultVariant } from '../lib/evidence.ts';

/** The protocol points every qualification must cover: the engine plug contract's list. */
export { MANDATORY_FAULT_POINTS };

/**
 * The protocol points the loader accepts when the caller does not pass the engine's own
 * list (Engine.faultPoints): the mandatory ones plus the two inside recovery's re-commit.
 */
export const DEFAULT_FAULT_POINTS: readonly string[] = [...MANDATORY_FAULT_POINTS, 'sink.recover.before-commit', 'sink.recover.after-commit'];

/** A host of the rig as the loader knows it: name and roles. */
export interface CampaignHost {
  name: string;
  roles: ('worker' | 'coordinator' | 'broker' | 'store')[];
}

/** The standard rig (DESIGN.md, "The rig"): 3 workers, a coordinator, 3 brokers, the store; the rig's own list (rig/hosts.ts). */
export const STANDARD_HOSTS: readonly CampaignHost[] = LOCAL_HOSTS.map(({ name, roles }) => ({ name, roles: [...roles] }));

/** The kind-specific settings a fault may carry (the schema says which kind takes which). */
export interface FaultParams {
  /** Seconds the fault is held before it heals. */
  durationS?: number;
  /** packet-loss: the share of packets dropped. */
  share?: number;
  /** store-tamper: what the foreign writer does. state-corruption: bitflip or torn. */
  variant?: FaultVariant;
  /** clock-step: the jump of the engine's wall clock, in seconds (negative: back). */
  offsetS?: number;
}

/** The FaultParams of any object that carries them, and nothing else (absent ones stay absent). */
export function faultParams(f: FaultParams): FaultParams {
  return {
    ...(f.durationS !== undefined ? { durationS: f.durationS } : {}),
    ...(f.share !== undefined ? { share: f.share } : {}),
    ...(f.variant !== undefined ? { variant: f.variant } : {}),
    ...(f.offsetS !== undefined ? { offsetS: f.offsetS } : {}),
  };
}

/** One battery entry, resolved: count and targets always present. */
export interface ResolvedBatteryEntry extends FaultParams {
  kind: FaultKind;
  count: number;
  /** Hosts the seed picks from; empty when the kind has no host to pick (protocol points of the coordinator, or any worker). */
  targets: string[];
  /** protocol-point: the points, each armed `count` times. */
  points?: string[];
}

export interface ResolvedCompositionStep extends FaultParams {
  kind: FaultKind;
  afterS: number;
  targets: string[];
  point?: string;
}

export interface ResolvedComposition {
  name: string;
  description?: string;
  count: number;
  /** Scheduled after every other slot (the schema's `last`). */
  last?: boolean;
  steps: ResolvedCompositionStep[];
}

/**
 * A mutant's own schedule (the campaign file's `perMutant.<mutant>`), resolved: it replaces
 * the base faults, compositions and (when given) soak for a run of that mutant. Its
 * compositions are the base's, by name, with their own count.
 */
export interface ResolvedMutantSchedule {
  /** The soak of the mutant's run (absent: the base soak). */
  soakS?: number;
  faults: ResolvedBatteryEntry[];
  compositions: ResolvedComposition[];
}

export interface ResolvedCampaign {
  name: string;
  description?: string;
  seed: string;
  /** The campaign file as given (relative to the working directory when inside it). */
  file: string;
  rig: { kind: 'local' } | { kind: 'inventory'; file: string };
  /** The S3 store the run's rig runs on its store host (the file's `store`, default minio). */
  store: StoreKind;
  /**
   * MinIO's drives on the store host (the file's `store: { kind: minio, drives: N }`): 1 (the
   * plain `store: minio`) or 4 erasure-coded (rig/store.ts MINIO_DRIVE_LAYOUTS). Absent in a
   * campaign resolved before layouts could be chosen: one drive.
   */
  storeDrives?: number;
  /** `profile`: the job profile the campaign names (engine.profile), absent when it names none (the plug's default runs). */
  engine: { name: string; mutant: string; profile?: string };
  workload: {
    /** Events per second (derived from totalEvents when that was given). */
    rate: number;
    totalEvents?: number;
    partitions: number;
    keys: number;
    checkpointIntervalS: number;
    soakS: number;
  };
  gate: { deadlineS: number; fault: FaultKind };
  faults: ResolvedBatteryEntry[];
  compositions: ResolvedComposition[];
  schedule: { startAfterS: number; spacingS: number; jitterS: number };
  deadlines: { recoveryS: number; drainS: number; recountS: number; sampleStuckS: number };
  oracle: { sampleIntervalS: number };
  /**
   * Each mutant's own schedule, by mutant name (the file's `perMutant`); the base above is the
   * control's. Only in a campaign as loaded: the campaign a run uses (campaigns/per-mutant.ts
   * `campaignForMutant`) has the chosen schedule in place and no map.
   */
  perMutant?: Record<string, ResolvedMutantSchedule>;
}
