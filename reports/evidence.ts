/**
 * Reading a run's evidence (lib/evidence.ts) for the report: every file is optional, a
 * missing one is named, a JSON Lines file with a torn last line (a run killed mid-write)
 * keeps its good lines and says which were skipped. Nothing here reads anything but the
 * run directory.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type { ResolvedCampaign } from '../campaigns/types.ts';
import { parseJsonl } from '../lib/jsonl.ts';
import { normalizeVerdictName, RUN_PHASES, type ChaosRecord, type GateResult, type LedgerEntry, type PhaseMark, type PlannedFault, type Provenance, type Recount, type Rehearsal, type ResourceSample, type RunPhase, type Sample, type Verdict } from '../lib/evidence.ts';

export interface CheckpointSeen {
  id: number;
  epoch: number;
  at: string;
}

/** Files the report writes (and `runs html`'s report.html): never listed as evidence, never read back. */
export const REPORT_OUTPUTS = ['report.md', 'timeline.svg', 'junit.xml', 'report.html'] as const;

/** The evidence files a complete run leaves, in the order the report lists them. */
export const EVIDENCE_FILES = [
  'campaign.yaml',
  'campaign.resolved.json',
  'provenance.json',
  'plan.json',
  'gate.json',
  'chaos.jsonl',
  'samples.jsonl',
  'ledger.jsonl',
  'checkpoints.jsonl',
  'recount.json',
  'verdict.json',
] as const;

export const EVIDENCE_DESCRIPTIONS: Record<string, string> = {
  'campaign.yaml': 'the campaign as given',
  'campaign.resolved.json': 'the campaign with every default filled, as the run used it',
  'provenance.json': 'run id, engine revision, component versions and sha256s, rig hosts',
  'plan.json': 'the seeded fault timeline',
  'gate.json': 'the functional gate: each condition and its evidence',
  'chaos.jsonl': 'every fault as it moved: planned, landed (with evidence), healed, recovered',
  'samples.jsonl': "the oracle's periodic samples: objects, events, counters, transient errors",
  'ledger.jsonl': "the oracle's ETag ledger: every committed object it judged",
  'checkpoints.jsonl': 'every completed checkpoint seen',
  'recount.json': 'the separate full re-read of the settled bucket',
  'verdict.json': 'the verdict and its reasons',
  'produced.json': 'events the generator produced, per partition (what the recount judges against)',
  'input-audit.json': "the input topic read back in full: duplicates, holes or mismatched lines in the input itself",
  'pending-uploads.json': "multipart uploads still pending in the store after the run (from the engine's journal of started uploads, or counted as its plug's method says)",
  'phases.jsonl': 'when each phase (gate, soak, drain, settle, recount) started and ended',
  'rehearsal.json': 'the rehearsal this run follows (its run id, campaign, verdict and revision), recorded by report --rehearsal',
  'resources.jsonl': "resource samples: RSS and CPU of every rig process and the controller, store and broker disk, the oracle's lag, each sample's duration",
};

export interface RunEvidence {
  /** The run directory's own name (never its absolute path: reports must not depend on where the run is stored). */
  dirName: string;
  campaign?: ResolvedCampaign;
  provenance?: Provenance;
  /** rehearsal.json (optional: recorded by `report --rehearsal`). */
  rehearsal?: Rehearsal;
  plan?: PlannedFault[];
  gate?: GateResult;
  chaos: ChaosRecord[];
  samples: Sample[];
  ledger: LedgerEntry[];
  checkpoints: CheckpointSeen[];
  /** Phase marks and resource samples (optional: runs before they were recorded have none). */
  phases: PhaseMark[];
  resources: ResourceSample[];
  recount?: Recount;
  verdict?: Verdict;
  /** The input topic's audit (optional: older runs and aborted ones have none). */
  inputAudit?: { records: number; clean: boolean; duplicates: number; holes: number; mismatched: number; misplaced: number; findings: string[] };
  /** pending-uploads.json (optional: an aborted run may have none); `method` says how an engine without a journal of started uploads counted them. */
  pendingUploads?: { pending: number; started?: number; method?: string };
  /** Evidence files that are not there. */
  missing: string[];
  /** Files or lines that could not be read, with why. */
  unreadable: string[];
  /** Every file in the run directory except the report's own outputs, sorted, with sizes. */
  files: { path: string; size: number }[];
}

function readJson<T>(dir: string, name: string, ev: RunEvidence): T | undefined {
  const p = path.join(dir, name);
  if (!existsSync(p)) {
    ev.missing.push(name);
    return undefined;
  }
  try {
    return JSON.parse(readFileSync(p, 'utf8')) as T;
  } catch (err) {
    ev.unreadable.push(`${name}: ${(err as Error).message}`);
    return undefined;
  }
}

function readJsonl<T>(dir: string, name: string, ev: RunEvidence): T[] {
  const p = path.join(dir, name);
  if (!existsSync(p)) {
    ev.missing.push(name);
    return [];
  }
  const bad: number[] = [];
  const out = parseJsonl<T>(readFileSync(p, 'utf8'), (n) => bad.push(n));
  if (bad.length) ev.unreadable.push(`${name}: ${bad.length} unreadable line${bad.length === 1 ? '' : 's'} (line ${bad.join(', ')}), skipped`);
  return out;
}

function listFiles(dir: string): { path: string; size: number }[] {
  const out: { path: string; size: number }[] = [];
  const walk = (rel: string) => {
    for (const name of readdirSync(path.join(dir, rel)).sort()) {
      const r = rel ? `${rel}/${name}` : name;
      const st = statSync(path.join(dir, r));
      if (st.isDirectory()) walk(r);
      else if (!(REPORT_OUTPUTS as readonly string[]).includes(r)) out.push({ path: r, size: st.size });
    }
  };
  walk('');
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Reads everything a run left; missing or torn files are recorded, never fatal. */
export function readRunEvidence(runDir: string): RunEvidence {
  const ev: RunEvidence = {
    dirName: path.basename(path.resolve(runDir)),
    chaos: [],
    samples: [],
    ledger: [],
    checkpoints: [],
    phases: [],
    resources: [],
    missing: [],
    unreadable: [],
    files: [],
  };
  if (!existsSync(path.join(runDir, 'campaign.yaml'))) ev.missing.push('campaign.yaml');
  ev.campaign = readJson<ResolvedCampaign>(runDir, 'campaign.resolved.json', ev);
  ev.provenance = readJson<Provenance>(runDir, 'provenance.json', ev);
  if (existsSync(path.join(runDir, 'rehearsal.json'))) ev.rehearsal = readJson<Rehearsal>(runDir, 'rehearsal.json', ev);
  ev.plan = readJson<PlannedFault[]>(runDir, 'plan.json', ev);
  ev.gate = readJson<GateResult>(runDir, 'gate.json', ev);
  if (existsSync(path.join(runDir, 'pending-uploads.json'))) ev.pendingUploads = readJson(runDir, 'pending-uploads.json', ev);
  ev.chaos = readJsonl<ChaosRecord>(runDir, 'chaos.jsonl', ev);
  ev.samples = readJsonl<Sample>(runDir, 'samples.jsonl', ev);
  ev.ledger = readJsonl<LedgerEntry>(runDir, 'ledger.jsonl', ev);
  ev.checkpoints = readJsonl<CheckpointSeen>(runDir, 'checkpoints.jsonl', ev);
  ev.recount = readJson<Recount>(runDir, 'recount.json', ev);
  ev.verdict = readJson<Verdict>(runDir, 'verdict.json', ev);
  if (ev.verdict?.verdict) ev.verdict.verdict = normalizeVerdictName(ev.verdict.verdict) as Verdict['verdict'];
  if (existsSync(path.join(runDir, 'phases.jsonl'))) ev.phases = readJsonl<PhaseMark>(runDir, 'phases.jsonl', ev);
  if (existsSync(path.join(runDir, 'resources.jsonl'))) ev.resources = readJsonl<ResourceSample>(runDir, 'resources.jsonl', ev);
  if (existsSync(path.join(runDir, 'input-audit.json'))) ev.inputAudit = readJson(runDir, 'input-audit.json', ev);
  ev.missing.sort((a, b) => EVIDENCE_FILES.indexOf(a as never) - EVIDENCE_FILES.indexOf(b as never));
  ev.files = listFiles(runDir);
  return ev;
}

export interface PhaseSpan {
  phase: RunPhase;
  startMs: number;
  /** Absent when the phase never ended (an aborted run). */
  endMs?: number;
}

/** The phases as spans, in the order they started. */
export function phaseSpans(ev: RunEvidence): PhaseSpan[] {
  const out: PhaseSpan[] = [];
  for (const m of [...ev.phases].sort((a, b) => Date.parse(a.t) - Date.parse(b.t))) {
    if (!(RUN_PHASES as readonly string[]).includes(m.phase) || !Number.isFinite(Date.parse(m.t))) continue;
    if (m.edge === 'start') out.push({ phase: m.phase, startMs: Date.parse(m.t) });
    else {
      const open = [...out].reverse().find((s) => s.phase === m.phase && s.endMs === undefined);
      if (open) open.endMs = Date.parse(m.t);
    }
  }
  return out;
}

/**
 * The soak's start (ms), which the plan's atS and the fault log count from: the soak's
 * phase mark, or, for runs without phases.jsonl, the earliest 'planned' chaos record of a
 * plan fault (the chaos controller records the whole plan as planned when the soak starts).
 * `how` says which.
 */
export function soakStart(ev: RunEvidence): { ms: number; how: 'phase mark' | 'plan' } | undefined {
  const mark = phaseSpans(ev).find((s) => s.phase === 'soak');
  if (mark) return { ms: mark.startMs, how: 'phase mark' };
  const ids = new Set((ev.plan ?? []).map((f) => f.id));
  const cands = ev.chaos.filter((c) => c.phase === 'planned' && ids.has(c.faultId)).map((c) => Date.parse(c.t)).filter(Number.isFinite);
  return cands.length ? { ms: Math.min(...cands), how: 'plan' } : undefined;
}
