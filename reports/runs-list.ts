/**
 * The stored runs under runs/ (lib/paths.ts runsDir): one summary a run, read from its
 * evidence files alone (provenance.json, verdict.json, campaign.resolved.json,
 * findings.jsonl, and for a run without a verdict its last samples and phase marks), and
 * the `runs/latest` symlink that names the newest run.
 *
 * A run directory is a real directory (not a symlink) holding at least one of the files a
 * run writes first. Every file is optional: a run killed mid-way, or still going, has no
 * verdict.json and is listed as such, never guessed.
 */
import { existsSync, lstatSync, readdirSync, readlinkSync, renameSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { MAX_RUN_JSON_BYTES, readBoundedText, readRegularText } from '../lib/read-bounded.ts';
import path from 'node:path';
import { shortDuration } from '../campaigns/runner/progress.ts';
import { COUNTER_NAMES, FAILURE_CLASSES, normalizeVerdictName, type Counters, type FailureClass } from '../lib/evidence.ts';
import { classifiedReasons, failureClasses } from '../lib/failure-class.ts';
import { EVIDENCE } from '../lib/run-store.ts';

export const LATEST = 'latest';

/** Files whose presence makes a directory a run's (the runner writes them in its first seconds). */
const RUN_MARKERS = [EVIDENCE.provenance.file, EVIDENCE.campaign.file, EVIDENCE.plan.file, EVIDENCE.verdict.file, EVIDENCE.preflight.file];

export interface RunListing {
  /** The directory's name (a committed copy's is often not the run id). */
  id: string;
  /** The run id its own evidence records (verdict.json, else provenance.json), or null. */
  recordedId: string | null;
  /** The run's directory, absolute. */
  dir: string;
  campaign: string | null;
  engine: string | null;
  /** The broken variant the run deployed, or null for the correct engine. */
  mutant: string | null;
  seed: string | null;
  revision: string | null;
  /** The checkout had uncommitted changes when the run started. */
  dirty: boolean | null;
  /** verdict.json's verdict (PASS, FAIL, GATE_FAILED, ABORTED, UNKNOWN; an old file's 'GATE FAILED' reads GATE_FAILED), or null when the run has no verdict.json (still running, or killed). */
  verdict: string | null;
  exitCode: number | null;
  startedAt: string | null;
  endedAt: string | null;
  /** Where endedAt comes from: the verdict, or (no verdict) the last sample or phase mark seen. */
  endedFrom: 'verdict' | 'last evidence' | null;
  durationS: number | null;
  produced: number | null;
  committedDistinct: number | null;
  /** The recount's counters (the oracle's when there is no recount), null without a verdict. */
  counters: Counters | null;
  /**
   * The first line of findings.jsonl whose counter the verdict raised, as "counter: detail";
   * null when there is none (no file, no line, or only findings the verdict does not count,
   * such as the mutations of the harness's own store tampering).
   */
  firstFinding: string | null;
  /** How many findings findings.jsonl holds; null when the run has no findings.jsonl. */
  findings: number | null;
  /** verdict.json's reasons (why it is not a PASS). */
  reasons: string[];
  /** The kinds of failure among the reasons (safety, liveness, coverage: lib/failure-class.ts), [] without reasons. */
  failureClasses: FailureClass[];
  warnings: string[];
  /** Report files present in the run directory, by name relative to it. */
  report: string | null;
  timeline: string | null;
}

function readJson(file: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(readBoundedText(file, { maxBytes: MAX_RUN_JSON_BYTES, what: 'run evidence' })) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const str = (v: unknown): string | null => (typeof v === 'string' && v ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const obj = (v: unknown): Record<string, unknown> | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined);

/** The `t` of the last parseable line of a JSON Lines file (a torn last line is skipped). */
function lastT(file: string): string | null {
  if (!existsSync(file)) return null;
  const lines = readRegularText(file, 'run evidence').split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    if (!lines[i]!.trim()) continue;
    try {
      const t = (JSON.parse(lines[i]!) as { t?: unknown }).t;
      if (typeof t === 'string' && !Number.isNaN(Date.parse(t))) return t;
    } catch {
      /* torn line: look at the one before */
    }
  }
  return null;
}

function counters(v: unknown): Counters | null {
  const o = obj(v);
  if (!o) return null;
  const c = {} as Counters;
  for (const n of COUNTER_NAMES) c[n] = num(o[n]) ?? 0;
  return c;
}

/** findings.jsonl's lines as counter and "counter: detail"; null when the file is absent. */
function readFindingLines(file: string): { counter: string; text: string }[] | null {
  if (!existsSync(file)) return null;
  const out: { counter: string; text: string }[] = [];
  for (const l of readRegularText(file, 'run evidence').split('\n')) {
    if (!l.trim()) continue;
    try {
      const f = JSON.parse(l) as { counter?: unknown; detail?: unknown };
      const counter = typeof f.counter === 'string' ? f.counter : 'finding';
      out.push({ counter, text: `${counter}: ${typeof f.detail === 'string' ? f.detail : JSON.stringify(f)}` });
    } catch {
      /* torn line */
    }
  }
  return out;
}

/** True when `dir` is a run's directory: a real directory with a file a run writes first. */
export function isRunDir(dir: string): boolean {
  try {
    if (!lstatSync(dir).isDirectory()) return false;
  } catch {
    return false;
  }
  return RUN_MARKERS.some((f) => existsSync(path.join(dir, f)));
}

/** A well-formed entry of verdict.json's classifiedReasons. */
function isClassifiedReason(v: unknown): v is { reason: string; class: FailureClass } {
  const o = obj(v);
  return typeof o?.reason === 'string' && (FAILURE_CLASSES as readonly unknown[]).includes(o.class);
}

/** One run's summary from its evidence files. */
export function readRunListing(dir: string): RunListing {
  const abs = path.resolve(dir);
  const prov = readJson(path.join(abs, EVIDENCE.provenance.file));
  const verdict = readJson(path.join(abs, EVIDENCE.verdict.file));
  const camp = readJson(path.join(abs, EVIDENCE.campaign.file));
  const eng = obj(prov?.engine);
  const campEngine = obj(camp?.engine);
  const mutant = str(eng?.mutant) ?? str(campEngine?.mutant);
  const startedAt = str(prov?.startedAt) ?? str(verdict?.startedAt);
  let endedAt = str(verdict?.endedAt);
  let endedFrom: RunListing['endedFrom'] = endedAt ? 'verdict' : null;
  if (!endedAt) {
    const ts = [lastT(path.join(abs, EVIDENCE.samples.file)), lastT(path.join(abs, EVIDENCE.phases.file))].filter((t): t is string => !!t);
    if (ts.length) {
      endedAt = ts.reduce((a, b) => (Date.parse(a) >= Date.parse(b) ? a : b));
      endedFrom = 'last evidence';
    }
  }
  const durationS = startedAt && endedAt ? Math.max(0, Math.round((Date.parse(endedAt) - Date.parse(startedAt)) / 1000)) : null;
  const findings = readFindingLines(path.join(abs, EVIDENCE.findings.file));
  const runCounters = counters(verdict?.recount) ?? counters(verdict?.oracle);
  // The first finding of a counter the verdict raised: findings of the harness's own store
  // tampering are in findings.jsonl too, but the verdict does not count them (verdict.ts).
  const first = findings?.find((f) => !runCounters || (runCounters as Record<string, number>)[f.counter]! > 0);
  const timeline = ['timeline.svg', 'timeline.png'].find((f) => existsSync(path.join(abs, f))) ?? null;
  const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  return {
    id: path.basename(abs),
    recordedId: str(verdict?.runId) ?? str(prov?.runId),
    dir: abs,
    campaign: str(prov?.campaign) ?? str(camp?.name),
    engine: str(eng?.name) ?? str(campEngine?.name),
    mutant: mutant && mutant !== 'none' ? mutant : null,
    seed: str(prov?.seed) ?? str(camp?.seed),
    revision: str(eng?.revision),
    dirty: typeof eng?.dirty === 'boolean' ? eng.dirty : null,
    verdict: verdict?.verdict === undefined ? str(verdict?.verdict) : normalizeVerdictName(String(verdict.verdict)),
    exitCode: num(verdict?.exitCode),
    startedAt,
    endedAt,
    endedFrom,
    durationS,
    produced: num(verdict?.produced),
    committedDistinct: num(verdict?.committedDistinct),
    counters: runCounters,
    firstFinding: first?.text ?? null,
    findings: findings ? findings.length : null,
    reasons: strings(verdict?.reasons),
    failureClasses: failureClasses(
      classifiedReasons({
        reasons: strings(verdict?.reasons),
        drainConverged: verdict?.drainConverged !== false,
        ...(Array.isArray(verdict?.classifiedReasons) ? { classifiedReasons: verdict.classifiedReasons.filter(isClassifiedReason) } : {}),
      }),
    ),
    warnings: strings(verdict?.warnings),
    report: existsSync(path.join(abs, 'report.md')) ? 'report.md' : null,
    timeline,
  };
}

function startMs(r: RunListing): number {
  const t = r.startedAt ? Date.parse(r.startedAt) : NaN;
  if (!Number.isNaN(t)) return t;
  try {
    return statSync(r.dir).mtimeMs;
  } catch {
    return 0;
  }
}

/** Every run under `root`, newest first (by start time, then id). A missing root has none. */
export function listRuns(root: string): RunListing[] {
  if (!existsSync(root)) return [];
  const runs = readdirSync(root)
    .filter((name) => name !== LATEST && !name.startsWith('.'))
    .map((name) => path.join(root, name))
    .filter(isRunDir)
    .map(readRunListing);
  return runs.sort((a, b) => startMs(b) - startMs(a) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
}

/** Finds a run by id (or `latest`) under root; undefined when there is none. */
export function findRun(root: string, id: string): RunListing | undefined {
  if (id === LATEST) {
    const target = latestTarget(root);
    if (target && isRunDir(path.join(root, target))) return readRunListing(path.join(root, target));
    return listRuns(root)[0];
  }
  if (id.includes('/') || id.includes('..')) return undefined;
  const dir = path.join(root, id);
  return isRunDir(dir) ? readRunListing(dir) : undefined;
}

/** The run id `root/latest` points at, or null when it is absent or not a symlink. */
export function latestTarget(root: string): string | null {
  const link = path.join(root, LATEST);
  try {
    if (!lstatSync(link).isSymbolicLink()) return null;
    return path.basename(readlinkSync(link));
  } catch {
    return null;
  }
}

/**
 * Points `root/latest` at `root/<runId>` with a relative symlink, replaced atomically (a new
 * link renamed over the old one), so a reader never sees it missing. Refuses to replace
 * a `latest` that is a real directory or file (not ours).
 */
export function pointLatest(root: string, runId: string): void {
  const link = path.join(root, LATEST);
  try {
    if (!lstatSync(link).isSymbolicLink()) throw new Error(`${link} exists and is not a symlink; left alone`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const tmp = path.join(root, `.${LATEST}.${process.pid}.tmp`);
  rmSync(tmp, { force: true });
  symlinkSync(runId, tmp);
  renameSync(tmp, link);
}

/**
 * Makes `root/latest` name the newest run (`runs` calls it): returns what it did, or null
 * when it already did (or there is no run).
 */
export function repairLatest(root: string, runs: RunListing[] = listRuns(root)): string | null {
  const newest = runs[0];
  const current = latestTarget(root);
  if (!newest) {
    if (current !== null && !existsSync(path.join(root, LATEST))) {
      rmSync(path.join(root, LATEST), { force: true });
      return `removed ${LATEST} (it pointed at ${current}, which is gone)`;
    }
    return null;
  }
  if (current === newest.id && existsSync(path.join(root, LATEST))) return null;
  pointLatest(root, newest.id);
  return current === null ? `${LATEST} -> ${newest.id} (created)` : `${LATEST} -> ${newest.id} (was ${current})`;
}

/** Seconds as 1h02m03s, 6m12s or 42s (whole seconds, rounded up), '—' for none. */
export function formatDuration(s: number | null): string {
  return s === null ? '—' : shortDuration(s);
}

/** The verdict as shown in listings: a run without verdict.json says so. */
export function verdictText(r: RunListing): string {
  return r.verdict ?? 'NO VERDICT';
}

/** Nonzero counters as "duplicates 3, gaps 2", or "none raised", or "—" without counters. */
export function countersText(c: Counters | null): string {
  if (!c) return '—';
  const raised = COUNTER_NAMES.filter((n) => c[n] > 0).map((n) => `${n} ${c[n].toLocaleString('en-US')}`);
  return raised.length ? raised.join(', ') : 'none raised';
}

/** The listing's engine column: name, plus the mutant when one was deployed. */
export function engineText(r: RunListing): string {
  return `${r.engine ?? '—'}${r.mutant ? ` (mutant ${r.mutant})` : ''}`;
}

export function revisionText(r: RunListing): string {
  return r.revision ? `${r.revision.slice(0, 12)}${r.dirty ? '+dirty' : ''}` : '—';
}

function clip(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, n - 1)}…`;
}

/** The plain-text table `clink-qual runs` prints. */
export function formatRunsTable(runs: RunListing[], opts: { width?: number } = {}): string {
  if (!runs.length) return 'no runs';
  const head = ['RUN', 'CAMPAIGN', 'ENGINE', 'SEED', 'REVISION', 'VERDICT', 'DURATION', 'FIRST FINDING'];
  const rows = runs.map((r) => [
    r.id,
    r.campaign ?? '—',
    engineText(r),
    r.seed ?? '—',
    revisionText(r),
    verdictText(r),
    `${formatDuration(r.durationS)}${r.endedFrom === 'last evidence' ? '+' : ''}`,
    r.firstFinding ?? (r.verdict && r.verdict !== 'PASS' && r.reasons[0] ? `(reason) ${r.reasons[0]}` : '—'),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => (i === head.length - 1 ? 0 : row[i]!.length))));
  const fixed = widths.slice(0, -1).reduce((a, b) => a + b + 2, 0);
  const last = Math.max(20, (opts.width ?? 160) - fixed);
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? clip(c, last) : c.padEnd(widths[i]!))).join('  ').trimEnd();
  const out = [line(head), ...rows.map(line)];
  if (runs.some((r) => r.endedFrom === 'last evidence')) out.push('', "+ no verdict.json: the duration runs to the run's last sample or phase mark (still running, or killed)");
  return out.join('\n');
}

/** The text `clink-qual runs show ID` prints. */
export function formatRunSummary(r: RunListing): string {
  const lines = [
    `run        ${r.id}`,
    `directory  ${r.dir}`,
    `campaign   ${r.campaign ?? '—'}`,
    `engine     ${engineText(r)}`,
    `seed       ${r.seed ?? '—'}`,
    `revision   ${r.revision ? `${r.revision}${r.dirty ? ' (uncommitted changes)' : ''}` : '—'}`,
    `started    ${r.startedAt ?? '—'}`,
    `ended      ${r.endedAt ? `${r.endedAt}${r.endedFrom === 'last evidence' ? ' (last sample or phase mark; no verdict.json)' : ''}` : '—'}`,
    `duration   ${formatDuration(r.durationS)}`,
    `verdict    ${r.verdict ?? 'none: no verdict.json (the run is still going, or was killed)'}${r.verdict === 'FAIL' && r.failureClasses.length ? ` (${r.failureClasses.join(', ')})` : ''}${r.exitCode !== null ? ` (exit ${r.exitCode})` : ''}`,
  ];
  if (r.produced !== null) lines.push(`events     ${r.produced.toLocaleString('en-US')} produced, ${(r.committedDistinct ?? 0).toLocaleString('en-US')} committed (distinct)`);
  if (r.counters) lines.push(`counters   ${countersText(r.counters)}`);
  if (r.reasons.length) lines.push('reasons', ...r.reasons.map((x) => `  - ${x}`));
  if (r.warnings.length) lines.push('warnings', ...r.warnings.map((x) => `  - ${x}`));
  if (r.findings !== null) lines.push(`findings   ${r.findings} in findings.jsonl${r.firstFinding ? `; first: ${r.firstFinding}` : ''}`);
  lines.push(`report     ${r.report ? path.join(r.dir, r.report) : `none (write it: clink-qual report ${r.dir})`}`);
  if (r.timeline) lines.push(`timeline   ${path.join(r.dir, r.timeline)}`);
  return lines.join('\n');
}
