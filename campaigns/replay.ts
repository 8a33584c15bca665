/**
 * Replay: a stored run's exact schedule (campaign.resolved.json + plan.json), loaded so
 * `campaign run --replay runs/<id>` runs it again at the current revision, and so
 * `campaign shrink` can run sub-schedules of it.
 *
 * The stored resolved campaign carries run-specific fields the runner added (runId, topic,
 * the oracle's bucket/prefix/endpoint); they are dropped, so the replay gets its own run id,
 * topic and prefix. The plan is taken as stored, not re-planned: a planner change at the
 * current revision does not change what is replayed.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { QualError } from '../lib/errors.ts';
import { type PlannedFault } from '../lib/evidence.ts';
import { FAULT_KINDS } from '../chaos/kinds.ts';
import type { ResolvedCampaign } from './types.ts';
import { EVIDENCE } from '../lib/run-store.ts';

export interface StoredRun {
  /** The run directory as given. */
  dir: string;
  /** The stored run's id (from campaign.resolved.json, else provenance.json, else the directory name). */
  runId: string;
  campaign: ResolvedCampaign;
  plan: PlannedFault[];
  /** The stored campaign.yaml, when the run kept it. */
  campaignYaml?: string;
}

/** What a replayed run records in its replay.json (and provenance.json's `replays`). */
export interface ReplayRecord {
  /** The run whose schedule is replayed. */
  replays: string;
  /** Its directory, as given. */
  from: string;
  /** The fault ids of the stored plan that this run keeps (all of them for a plain replay). */
  faults: string[];
  /** The stored plan's fault count. */
  ofFaults: number;
  /** The soak, when a shrink shortened it (seconds), with the stored one. */
  soakS?: number;
  storedSoakS?: number;
}

function readJson(file: string): unknown {
  if (!existsSync(file)) throw new QualError('BAD_ARGUMENTS', `${file} does not exist: not a run directory with a stored schedule`);
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new QualError('BAD_INPUT_FILE', `${file}: not valid JSON (${(err as Error).message})`);
  }
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Checks a stored plan's shape: ids unique, known kinds, finite non-negative times. */
export function checkPlan(v: unknown, file: string): PlannedFault[] {
  if (!Array.isArray(v)) throw new QualError('BAD_INPUT_FILE', `${file}: a plan is a JSON array of faults`);
  const ids = new Set<string>();
  v.forEach((f, i) => {
    const where = `${file}: [${i}]`;
    if (!isObj(f)) throw new QualError('BAD_INPUT_FILE', `${where}: not an object`);
    if (typeof f.id !== 'string' || !f.id) throw new QualError('BAD_INPUT_FILE', `${where}.id: missing`);
    if (ids.has(f.id)) throw new QualError('BAD_INPUT_FILE', `${where}.id: ${f.id} appears twice`);
    ids.add(f.id);
    if (!(FAULT_KINDS as readonly unknown[]).includes(f.kind)) throw new QualError('BAD_INPUT_FILE', `${where}.kind: unknown fault kind ${JSON.stringify(f.kind)}`);
    if (typeof f.atS !== 'number' || !Number.isFinite(f.atS) || f.atS < 0) throw new QualError('BAD_INPUT_FILE', `${where}.atS: must be a number >= 0`);
  });
  return v as PlannedFault[];
}

function provenanceRunId(dir: string): string | undefined {
  try {
    const p = JSON.parse(readFileSync(path.join(dir, EVIDENCE.provenance.file), 'utf8')) as { runId?: unknown };
    return typeof p.runId === 'string' ? p.runId : undefined;
  } catch {
    return undefined;
  }
}

/** Loads a stored run's schedule for a replay. */
export function loadStoredRun(dir: string): StoredRun {
  const resolvedFile = path.join(dir, EVIDENCE.campaign.file);
  const raw = readJson(resolvedFile);
  if (!isObj(raw)) throw new QualError('BAD_INPUT_FILE', `${resolvedFile}: not an object`);
  for (const k of ['name', 'seed', 'engine', 'workload', 'schedule', 'deadlines', 'gate', 'oracle']) {
    if (raw[k] === undefined) throw new QualError('BAD_INPUT_FILE', `${resolvedFile}: ${k} is missing`);
  }
  const { runId, topic: _topic, oracle, ...rest } = raw as Record<string, unknown> & { oracle: Record<string, unknown> };
  const campaign = { ...rest, oracle: { sampleIntervalS: Number(oracle.sampleIntervalS) }, faults: rest.faults ?? [], compositions: rest.compositions ?? [] } as unknown as ResolvedCampaign;
  if (!Number.isFinite(campaign.oracle.sampleIntervalS)) throw new QualError('BAD_INPUT_FILE', `${resolvedFile}: oracle.sampleIntervalS is missing`);
  const planFile = path.join(dir, EVIDENCE.plan.file);
  const plan = checkPlan(readJson(planFile), planFile);
  const yamlFile = path.join(dir, EVIDENCE.campaignYaml.file);
  return {
    dir,
    runId: typeof runId === 'string' ? runId : provenanceRunId(dir) ?? path.basename(path.resolve(dir)),
    campaign,
    plan,
    ...(existsSync(yamlFile) ? { campaignYaml: readFileSync(yamlFile, 'utf8') } : {}),
  };
}

/** The end of a fault as planned: its time plus its hold (0 for instantaneous kinds). */
export function plannedEndS(f: PlannedFault): number {
  return f.atS + (f.durationS ?? 0);
}

/**
 * The soak for a sub-schedule: it ends `marginS` after the last kept fault ends (so its
 * recovery is watched), never longer than the stored soak, never shorter than `minS`.
 * The faults keep their own times.
 */
export function shortenedSoakS(plan: readonly PlannedFault[], storedSoakS: number, marginS: number, minS = 30): number {
  const last = plan.reduce((m, f) => Math.max(m, plannedEndS(f)), 0);
  return Math.min(storedSoakS, Math.max(minS, Math.ceil(last + marginS)));
}

/** What `runCampaign` takes to replay: the stored run, and for a shrink candidate a sub-plan and a soak. */
export interface ReplayInput {
  stored: StoredRun;
  /** A subset of the stored plan (default: all of it). Fault ids and times are kept. */
  plan?: PlannedFault[];
  /** The soak to use (default: the stored one). */
  soakS?: number;
}

/** The campaign, plan and record of a replay (run.ts stores the record as replay.json). */
export function replaySchedule(r: ReplayInput): { campaign: ResolvedCampaign; plan: PlannedFault[]; record: ReplayRecord } {
  const stored = r.stored;
  const plan = r.plan ?? stored.plan;
  const known = new Set(stored.plan.map((f) => f.id));
  for (const f of plan) if (!known.has(f.id)) throw new QualError('INTERNAL', `replay: fault ${f.id} is not in ${stored.runId}'s plan`);
  const storedSoakS = stored.campaign.workload.soakS;
  const soakS = r.soakS ?? storedSoakS;
  const { totalEvents: _total, ...workload } = stored.campaign.workload;
  const campaign: ResolvedCampaign = {
    ...stored.campaign,
    // A shortened soak keeps the rate; a fixed event total would no longer fit it.
    workload: soakS === storedSoakS ? stored.campaign.workload : { ...workload, soakS },
  };
  const record: ReplayRecord = {
    replays: stored.runId,
    from: stored.dir,
    faults: plan.map((f) => f.id),
    ofFaults: stored.plan.length,
    ...(soakS !== storedSoakS ? { soakS, storedSoakS } : {}),
  };
  return { campaign, plan, record };
}
