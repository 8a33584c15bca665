/**
 * A run's evidence, in one place: every file's name, format and meaning (EVIDENCE), and a
 * RunStore that writes and reads them by key. The runner writes through it, `verify`, the
 * oracle's run settings, the reports, replay and shrink read through it; no other module
 * spells an evidence file's name.
 *
 * Writing: JSON files are replaced atomically (write, then rename), JSON Lines files are
 * appended line by line, so a crash or an abort keeps the history. Reading: a missing file
 * reads as absent, a torn JSON Lines tail keeps its good lines and says which it skipped,
 * and a file stored gzipped as `X.gz` (a published run) reads as `X` where `X` is absent.
 */
import { appendFileSync, existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ResolvedCampaign } from '../campaigns/types.ts';
import { QualError } from './errors.ts';
import type { ChaosRecord, GateResult, HeldRecount, LedgerEntry, PhaseMark, PlannedFault, Provenance, Recount, Rehearsal, ResourceSample, Sample, Verdict, ZombieTrail } from './evidence.ts';
import { existsOrGz, parseJsonl, readTextOrGz } from './jsonl.ts';
import { evidenceShapeProblem } from './evidence-shape.ts';
import { MAX_RUN_JSON_BYTES, readBoundedText, readRegularText } from './read-bounded.ts';

type Format = 'json' | 'jsonl' | 'text' | 'dir';
interface FileSpec {
  file: string;
  format: Format;
  /** What the report's evidence table says the file holds ('' when it says nothing). */
  describe: string;
  /** A complete run leaves it; the report names it when it is missing. */
  required?: boolean;
}

/** Every evidence file, in the order the report lists the required ones. */
export const EVIDENCE = {
  campaignYaml: { file: 'campaign.yaml', format: 'text', required: true, describe: 'the campaign as given' },
  campaign: { file: 'campaign.resolved.json', format: 'json', required: true, describe: 'the campaign with every default filled, as the run used it' },
  provenance: { file: 'provenance.json', format: 'json', required: true, describe: 'run id, engine revision, component versions and sha256s, rig hosts' },
  plan: { file: 'plan.json', format: 'json', required: true, describe: 'the seeded fault timeline' },
  gate: { file: 'gate.json', format: 'json', required: true, describe: 'the functional gate: each condition and its evidence' },
  chaos: { file: 'chaos.jsonl', format: 'jsonl', required: true, describe: 'every fault as it moved: planned, landed (with evidence), healed, recovered' },
  samples: { file: 'samples.jsonl', format: 'jsonl', required: true, describe: "the oracle's periodic samples: objects, events, counters, transient errors" },
  ledger: { file: 'ledger.jsonl', format: 'jsonl', required: true, describe: "the oracle's ETag ledger: every committed object it judged" },
  checkpoints: { file: 'checkpoints.jsonl', format: 'jsonl', required: true, describe: 'every completed checkpoint seen' },
  recount: { file: 'recount.json', format: 'json', required: true, describe: 'the separate full re-read of the settled bucket' },
  verdict: { file: 'verdict.json', format: 'json', required: true, describe: 'the verdict and its reasons' },
  recountHeld: {
    file: 'recount-held.json',
    format: 'json',
    describe: "the recount's held pass, with the faults held through the recount in force: each object the store would not serve, whose bytes differ from the judged version, or that a held fault rotted, and what the store answered",
  },
  produced: { file: 'produced.json', format: 'json', describe: 'events the generator produced, per partition (what the recount judges against)' },
  inputAudit: { file: 'input-audit.json', format: 'json', describe: 'the input topic read back in full: duplicates, holes or mismatched lines in the input itself' },
  pendingUploads: {
    file: 'pending-uploads.json',
    format: 'json',
    describe: "multipart uploads still pending in the store after the run (from the engine's journal of started uploads, or counted as its plug's method says)",
  },
  phases: { file: 'phases.jsonl', format: 'jsonl', describe: 'when each phase (gate, soak, drain, settle, recount) started and ended' },
  rehearsal: { file: 'rehearsal.json', format: 'json', describe: 'the rehearsal this run follows (its run id, campaign, verdict and revision), recorded by report --rehearsal' },
  resources: {
    file: 'resources.jsonl',
    format: 'jsonl',
    describe: "resource samples: RSS and CPU of every rig process and the controller, store and broker disk, the oracle's lag, each sample's duration",
  },
  zombies: {
    file: 'zombies.json',
    format: 'json',
    describe: 'each zombie (a process held stopped, then resumed; or its host cut off from the coordinator, then reconnected): the engine declaring it lost, what it tried, and what fenced it, from the engine logs',
  },
  preflight: { file: 'preflight.json', format: 'json', describe: '' },
  replay: { file: 'replay.json', format: 'json', describe: '' },
  findings: { file: 'findings.jsonl', format: 'jsonl', describe: '' },
  runLog: { file: 'run.log', format: 'text', describe: '' },
  logs: { file: 'logs', format: 'dir', describe: '' },
} as const satisfies Record<string, FileSpec>;

export type EvidenceKey = keyof typeof EVIDENCE;

/** What each JSON or JSON Lines file holds (a JSON Lines file's entry is one line's value). */
export interface EvidenceValues {
  /** The campaign as the run used it, with the run's id, topic and the oracle's settings (oracle/run-settings.ts reads them). */
  campaign: Omit<ResolvedCampaign, 'oracle'> & { runId: string; topic: string; oracle: ResolvedCampaign['oracle'] & Record<string, unknown> } & Record<string, unknown>;
  provenance: Provenance & Record<string, unknown>;
  plan: PlannedFault[];
  gate: GateResult;
  chaos: ChaosRecord;
  samples: Sample;
  ledger: LedgerEntry;
  /** at: the engine's stamp (its coordinator's clock); seenAt: when the harness's health poll first listed it (absent in runs before it was recorded). */
  checkpoints: { id: number; epoch: number; at: string; seenAt?: string };
  recount: Recount;
  recountHeld: HeldRecount;
  verdict: Verdict;
  produced: { perPartition: number[] };
  inputAudit: { records: number; clean: boolean; duplicates: number; holes: number; mismatched: number; misplaced: number; findings: string[]; tail?: { leftAtFinish: number; finishMs: number; reopened: number } };
  pendingUploads: { pending: number; started?: number; method?: string; errors?: number; error?: string } & Record<string, unknown>;
  phases: PhaseMark;
  rehearsal: Rehearsal;
  resources: ResourceSample;
  zombies: ZombieTrail[];
  preflight: unknown;
  replay: unknown;
  findings: Record<string, unknown>;
}

type KeysOf<F extends Format> = { [K in EvidenceKey]: (typeof EVIDENCE)[K]['format'] extends F ? K : never }[EvidenceKey];
export type JsonKey = KeysOf<'json'> & keyof EvidenceValues;
export type JsonlKey = KeysOf<'jsonl'> & keyof EvidenceValues;

/** The evidence files a complete run leaves, in the report's order. */
export const REQUIRED_EVIDENCE: readonly string[] = Object.values(EVIDENCE)
  .filter((s: FileSpec) => s.required)
  .map((s) => s.file);

/** The report's one-line description of each evidence file that has one, by file name. */
export const EVIDENCE_DESCRIPTIONS: Readonly<Record<string, string>> = Object.fromEntries(
  Object.values(EVIDENCE)
    .filter((s: FileSpec) => s.describe)
    .map((s) => [s.file, s.describe]),
);

/** A JSON file's read: its value, or why there is none. */
export type Read<T> = { ok: true; value: T } | { ok: false; missing: boolean; error?: string };

export class RunStore {
  readonly dir: string;
  /** fresh: the directory must not exist yet (a reused run id is refused, never appended to). */
  constructor(dir: string, opts: { fresh?: boolean; create?: boolean } = {}) {
    this.dir = dir;
    if (opts.fresh) {
      mkdirSync(path.dirname(dir), { recursive: true });
      try {
        mkdirSync(dir);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw new QualError('BAD_ARGUMENTS', `${dir} already exists; a run id is used once`);
        throw err;
      }
    } else if (opts.create) mkdirSync(dir, { recursive: true });
  }

  /** An evidence file's path, by key; a plain name for anything else in the run directory. */
  path(key: EvidenceKey | (string & {})): string {
    const spec = (EVIDENCE as Record<string, FileSpec>)[key];
    return path.join(this.dir, spec ? spec.file : key);
  }

  /** Whether the file is there (or, gzipped, as `X.gz`). */
  has(key: EvidenceKey): boolean {
    return existsOrGz(this.path(key));
  }

  write<K extends JsonKey>(key: K, value: EvidenceValues[K]): void {
    const p = this.path(key);
    writeFileSync(p + '.tmp', JSON.stringify(value, null, 2) + '\n');
    renameSync(p + '.tmp', p);
  }

  writeText(key: EvidenceKey | (string & {}), text: string): void {
    writeFileSync(this.path(key), text);
  }

  append<K extends JsonlKey>(key: K, value: EvidenceValues[K]): void {
    appendFileSync(this.path(key), JSON.stringify(value) + '\n');
  }

  /** A JSON file: its value, or missing, or unreadable with the parser's message. */
  read<K extends JsonKey>(key: K): Read<EvidenceValues[K]> {
    const p = this.path(key);
    try {
      const text = evidenceText(p, true);
      if (text === undefined) return { ok: false, missing: true };
      const value = JSON.parse(text) as unknown;
      const wrong = evidenceShapeProblem(path.basename(p), value);
      return wrong ? { ok: false, missing: false, error: `wrong shape: ${wrong}` } : { ok: true, value: value as EvidenceValues[K] };
    } catch (err) {
      return { ok: false, missing: false, error: (err as Error).message };
    }
  }

  /** A JSON file's value, or undefined when it is missing or unreadable. */
  get<K extends JsonKey>(key: K): EvidenceValues[K] | undefined {
    const r = this.read(key);
    return r.ok ? r.value : undefined;
  }

  /** A text file's content (run.log), or its gzipped `file.gz`'s; undefined when neither exists. */
  text(key: EvidenceKey): string | undefined {
    return evidenceText(this.path(key), false);
  }

  /** A JSON Lines file's good lines (none when missing) and the numbers of the lines it skipped. */
  lines<K extends JsonlKey>(key: K): { missing: boolean; values: EvidenceValues[K][]; skipped: number[] } {
    const text = evidenceText(this.path(key), false);
    if (text === undefined) return { missing: true, values: [], skipped: [] };
    const skipped: number[] = [];
    const values = parseJsonl<EvidenceValues[K]>(text, (n) => skipped.push(n));
    return { missing: false, values, skipped };
  }
}

/**
 * An evidence file's text: the file itself when it exists, read only if it is a regular file
 * (JSON capped at MAX_RUN_JSON_BYTES when `bounded`), else its gzipped `file.gz` (a
 * published run); undefined when neither exists.
 */
function evidenceText(p: string, bounded: boolean): string | undefined {
  if (existsSync(p)) return bounded ? readBoundedText(p, { maxBytes: MAX_RUN_JSON_BYTES, what: 'run evidence' }) : readRegularText(p, 'run evidence');
  return readTextOrGz(p);
}
