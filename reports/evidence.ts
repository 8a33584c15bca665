/**
 * Reading a run's evidence (lib/evidence.ts) for the report: every file is optional, a
 * missing one is named, a JSON Lines file with a torn last line (a run killed mid-write)
 * keeps its good lines and says which were skipped. Nothing here reads anything but the
 * run directory.
 *
 * A published run (`clink-qual publish`) reads like the run it was published from: its
 * gzipped files read as the originals (lib/jsonl.ts), and its manifest (published.json)
 * gives the original directory's name and file list, so its report renders the same bytes.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { ResolvedCampaign } from '../campaigns/types.ts';
import { EVIDENCE, EVIDENCE_DESCRIPTIONS, REQUIRED_EVIDENCE, RunStore, type EvidenceValues, type JsonKey, type JsonlKey } from '../lib/run-store.ts';
import { normalizeVerdictName, RUN_PHASES, type ChaosRecord, type GateResult, type HeldRecount, type LedgerEntry, type PhaseMark, type PlannedFault, type Provenance, type Recount, type Rehearsal, type ResourceSample, type RunPhase, type Sample, type SoakEarlyEnd, type Verdict, type ZombieTrail } from '../lib/evidence.ts';

export interface CheckpointSeen {
  id: number;
  epoch: number;
  /** The engine's stamp, on its coordinator's clock. */
  at: string;
  /** When the harness's health poll first listed it, on the harness's clock (absent in runs before it was recorded). */
  seenAt?: string;
}

/** Files the report writes (and `runs html`'s report.html): never listed as evidence, never read back. */
export const REPORT_OUTPUTS = ['report.md', 'timeline.svg', 'junit.xml', 'report.html'] as const;

/** The manifest a published run carries beside its evidence (written by `clink-qual publish`). */
export const PUBLISHED_MANIFEST = 'published.json';

/** How one file of the run was published: copied as is, gzipped as `path.gz`, trimmed (a log, gzipped), or left out. */
export interface PublishedFile {
  path: string;
  /** The file's size in the run directory. */
  size: number;
  stored: 'copied' | 'gzipped' | 'trimmed' | 'left out';
  /** The name it has in the published folder (absent when left out). */
  as?: string;
  /** Lines a trimmed log lost. */
  linesCut?: number;
}

/** published.json: where the folder came from and every file the run directory had. */
export interface PublishedManifest {
  /** The run directory's own name, as its report names it. */
  dirName: string;
  files: PublishedFile[];
}

/** The manifest of a published run, or undefined for a run directory (or an unreadable manifest). */
export function readPublishedManifest(runDir: string): PublishedManifest | undefined {
  try {
    const m = JSON.parse(readFileSync(path.join(runDir, PUBLISHED_MANIFEST), 'utf8')) as PublishedManifest;
    return typeof m.dirName === 'string' && Array.isArray(m.files) ? m : undefined;
  } catch {
    return undefined;
  }
}

/** The evidence files a complete run leaves, in the order the report lists them (lib/run-store.ts). */
export const EVIDENCE_FILES = REQUIRED_EVIDENCE;
export { EVIDENCE_DESCRIPTIONS };

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
  /** recount-held.json: the recount's held pass (optional: only a run with a fault held through the recount has one). */
  recountHeld?: HeldRecount;
  verdict?: Verdict;
  /** The input topic's audit (optional: older runs and aborted ones have none). */
  inputAudit?: { records: number; clean: boolean; duplicates: number; holes: number; mismatched: number; misplaced: number; findings: string[]; tail?: { leftAtFinish: number; finishMs: number; reopened: number } };
  /** pending-uploads.json (optional: an aborted run may have none); `method` says how an engine without a journal of started uploads counted them. */
  /** `errors`: keys whose listing failed (the count is a lower bound); `error`: the count failed (no count). */
  pendingUploads?: { pending: number; started?: number; method?: string; errors?: number; error?: string };
  /** zombies.json (optional: only a run that held a process stopped and resumed it, or cut an engine host off and reconnected it, writes one). */
  zombies?: ZombieTrail[];
  /** run.log's first and last timestamped lines (optional: absent when run.log is missing or has no timestamped line). */
  runLog?: RunLogTimes;
  /** Evidence files that are not there. */
  missing: string[];
  /** Files or lines that could not be read, with why. */
  unreadable: string[];
  /** Every file in the run directory except the report's own outputs, sorted, with sizes. */
  files: { path: string; size: number }[];
}

/** When run.log's first and last timestamped lines were written, and their text (the first is the run's first step). */
export interface RunLogTimes {
  first: { t: string; line: string };
  last: { t: string; line: string };
}

/** A run.log line's leading ISO timestamp (campaigns/runner/run.ts writes one on every line it logs). */
const LOG_STAMP = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z) (.*)$/;

/** The first and last timestamped lines of run.log's text; undefined when it has none (a line without a stamp continues a message). */
export function runLogTimes(text: string): RunLogTimes | undefined {
  const lines = text.split('\n');
  const stamped = (l: string) => {
    const m = LOG_STAMP.exec(l);
    return m && Number.isFinite(Date.parse(m[1]!)) ? { t: m[1]!, line: m[2]! } : undefined;
  };
  let first: RunLogTimes['first'] | undefined;
  for (let i = 0; i < lines.length && !first; i++) first = stamped(lines[i]!);
  let last: RunLogTimes['last'] | undefined;
  for (let i = lines.length - 1; i >= 0 && !last; i--) last = stamped(lines[i]!);
  return first && last ? { first, last } : undefined;
}

function readJson<K extends JsonKey>(store: RunStore, key: K, ev: RunEvidence): EvidenceValues[K] | undefined {
  const r = store.read(key);
  if (r.ok) return r.value;
  if (r.missing) ev.missing.push(EVIDENCE[key].file);
  else ev.unreadable.push(`${EVIDENCE[key].file}: ${r.error}`);
  return undefined;
}

function readJsonl<K extends JsonlKey>(store: RunStore, key: K, ev: RunEvidence): EvidenceValues[K][] {
  const r = store.lines(key);
  const name = EVIDENCE[key].file;
  if (r.missing) ev.missing.push(name);
  const bad = r.skipped;
  if (bad.length) ev.unreadable.push(`${name}: ${bad.length} unreadable line${bad.length === 1 ? '' : 's'} (line ${bad.join(', ')}), skipped`);
  return r.values;
}

function listFiles(dir: string): { path: string; size: number }[] {
  const out: { path: string; size: number }[] = [];
  const walk = (rel: string) => {
    for (const name of readdirSync(path.join(dir, rel)).sort()) {
      const r = rel ? `${rel}/${name}` : name;
      const st = statSync(path.join(dir, r));
      if (st.isDirectory()) walk(r);
      else if (!(REPORT_OUTPUTS as readonly string[]).includes(r) && r !== PUBLISHED_MANIFEST) out.push({ path: r, size: st.size });
    }
  };
  walk('');
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/**
 * Reads everything a run left; missing or torn files are recorded, never fatal. A published
 * run's directory name and file list are the original run's, from its manifest.
 */
export function readRunEvidence(runDir: string): RunEvidence {
  const published = readPublishedManifest(runDir);
  const ev: RunEvidence = {
    dirName: published?.dirName ?? path.basename(path.resolve(runDir)),
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
  const store = new RunStore(runDir);
  const optional = <K extends JsonKey>(key: K) => (store.has(key) ? readJson(store, key, ev) : undefined);
  if (!store.has('campaignYaml')) ev.missing.push(EVIDENCE.campaignYaml.file);
  ev.campaign = readJson(store, 'campaign', ev);
  ev.provenance = readJson(store, 'provenance', ev);
  ev.rehearsal = optional('rehearsal');
  ev.plan = readJson(store, 'plan', ev);
  ev.gate = readJson(store, 'gate', ev);
  ev.pendingUploads = optional('pendingUploads');
  ev.zombies = optional('zombies');
  ev.chaos = readJsonl(store, 'chaos', ev);
  ev.samples = readJsonl(store, 'samples', ev);
  ev.ledger = readJsonl(store, 'ledger', ev);
  ev.checkpoints = readJsonl(store, 'checkpoints', ev);
  ev.recount = readJson(store, 'recount', ev);
  ev.recountHeld = optional('recountHeld');
  ev.verdict = readJson(store, 'verdict', ev);
  if (ev.verdict?.verdict) ev.verdict.verdict = normalizeVerdictName(ev.verdict.verdict) as Verdict['verdict'];
  if (store.has('phases')) ev.phases = readJsonl(store, 'phases', ev);
  if (store.has('resources')) ev.resources = readJsonl(store, 'resources', ev);
  ev.inputAudit = optional('inputAudit');
  if (store.has('runLog')) {
    try {
      ev.runLog = runLogTimes(store.text('runLog') ?? '');
    } catch (err) {
      ev.unreadable.push(`${EVIDENCE.runLog.file}: ${(err as Error).message}`);
    }
  }
  ev.missing.sort((a, b) => EVIDENCE_FILES.indexOf(a as never) - EVIDENCE_FILES.indexOf(b as never));
  ev.files = published ? published.files.map((f) => ({ path: f.path, size: f.size })) : listFiles(runDir);
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
 * When a mutant's soak ended before its planned length, and why (campaigns/runner/soak-caught.ts):
 * verdict.json's soakEndedEarly, or the soak's end mark in phases.jsonl when the verdict is missing.
 */
export function soakEndedEarly(ev: RunEvidence): SoakEarlyEnd | undefined {
  return ev.verdict?.soakEndedEarly ?? ev.phases.find((m) => m.phase === 'soak' && m.edge === 'end' && m.endedEarly)?.endedEarly;
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
