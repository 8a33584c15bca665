/**
 * `clink-qual publish RUN_DIR DEST_DIR`: a run's evidence and its rendered outputs, copied
 * into a folder meant to be committed (docs/qualification/<name>), small enough to commit
 * and complete enough that `clink-qual report --check DEST_DIR` renders the same report.
 * Large evidence files are gzipped (`X.gz`, which every reader takes for `X`), collected logs
 * are trimmed to their head and tail and gzipped, and published.json records what the run
 * directory held and how each file was stored.
 */
import { isStoreLossLine } from '../../reports/store-loss.ts';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Command } from '../../lib/cli.ts';
import { QualError } from '../../lib/errors.ts';
import { EVIDENCE, RunStore } from '../../lib/run-store.ts';
import { PUBLISHED_MANIFEST, readPublishedManifest, readRunEvidence, REPORT_OUTPUTS, type PublishedFile, type PublishedManifest } from '../../reports/evidence.ts';

/** Evidence files larger than this are published gzipped. */
export const GZIP_OVER_BYTES = 256 * 1024;
/** A collected log keeps this many lines from its start and as many from its end. */
export const LOG_KEEP_LINES = 200;

/** A log's head and tail with a line saying how many lines were cut between them; the log itself when it is short enough. */
export function trimLog(text: string, keep: number, keepLine: (line: string) => boolean = isStoreLossLine): { text: string; cut: number } {
  const lines = text.split('\n');
  const trailingNewline = lines[lines.length - 1] === '';
  if (trailingNewline) lines.pop();
  if (lines.length <= 2 * keep) return { text, cut: 0 };
  // Kept: the first and last `keep` lines, and every line the report reads from the logs
  // (reports/store-loss.ts), so the published run renders exactly like the run.
  const out: string[] = [];
  let cut = 0;
  let run = 0;
  const flush = () => {
    if (run) out.push(`[clink-qual publish: ${run} lines cut here, of ${lines.length}]`);
    cut += run;
    run = 0;
  };
  lines.forEach((l, i) => {
    if (i < keep || i >= lines.length - keep || keepLine(l)) {
      flush();
      out.push(l);
    } else run++;
  });
  flush();
  return { text: out.join('\n') + (trailingNewline ? '\n' : ''), cut };
}

/** Whether the directory is a run's: it has provenance.json or campaign.resolved.json (plain or gzipped). */
export function isRunDirectory(dir: string): boolean {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return false;
  const store = new RunStore(dir);
  return store.has('provenance') || store.has('campaign');
}

/**
 * Publishes the run in runDir into destDir (created; refused when it exists and is not
 * empty): every evidence file of EVIDENCE, gzipped over gzipOver bytes, the logs trimmed to
 * logLines lines at each end and gzipped, the rendered outputs, and published.json.
 */
export function publishRun(runDir: string, destDir: string, opts: { gzipOver?: number; logLines?: number } = {}): PublishedManifest {
  const gzipOver = opts.gzipOver ?? GZIP_OVER_BYTES;
  const logLines = opts.logLines ?? LOG_KEEP_LINES;
  if (!isRunDirectory(runDir)) throw new QualError('BAD_ARGUMENTS', `${runDir} is not a run directory (it has neither ${EVIDENCE.provenance.file} nor ${EVIDENCE.campaign.file})`);
  if (existsSync(destDir) && (!statSync(destDir).isDirectory() || readdirSync(destDir).length > 0)) {
    throw new QualError('BAD_ARGUMENTS', `${destDir} exists and is not an empty directory; publish writes only into a new or empty one`);
  }
  if (path.resolve(destDir).startsWith(path.resolve(runDir) + path.sep)) throw new QualError('BAD_ARGUMENTS', `${destDir} is inside the run directory`);
  if (readPublishedManifest(runDir)) throw new QualError('BAD_ARGUMENTS', `${runDir} is itself a published folder (it has ${PUBLISHED_MANIFEST}); publish the run directory it came from, or copy it`);
  const ev = readRunEvidence(runDir);
  const evidenceFiles = new Set(Object.values(EVIDENCE).filter((s) => s.format !== 'dir').map((s) => s.file as string));
  const logsPrefix = `${EVIDENCE.logs.file}/`;
  mkdirSync(destDir, { recursive: true });
  const put = (rel: string, data: Buffer | string) => {
    mkdirSync(path.dirname(path.join(destDir, rel)), { recursive: true });
    writeFileSync(path.join(destDir, rel), data);
  };
  const files: PublishedFile[] = [];
  for (const f of ev.files) {
    const src = path.join(runDir, f.path);
    if (f.path.startsWith(logsPrefix)) {
      const t = trimLog(readFileSync(src, 'utf8'), logLines);
      put(f.path + '.gz', gzipSync(t.text));
      files.push({ path: f.path, size: f.size, stored: 'trimmed', as: f.path + '.gz', linesCut: t.cut });
    } else if (evidenceFiles.has(f.path)) {
      if (f.size > gzipOver) {
        put(f.path + '.gz', gzipSync(readFileSync(src)));
        files.push({ path: f.path, size: f.size, stored: 'gzipped', as: f.path + '.gz' });
      } else {
        copyFileSync(src, path.join(destDir, f.path));
        files.push({ path: f.path, size: f.size, stored: 'copied', as: f.path });
      }
    } else files.push({ path: f.path, size: f.size, stored: 'left out' });
  }
  for (const out of REPORT_OUTPUTS) if (existsSync(path.join(runDir, out))) copyFileSync(path.join(runDir, out), path.join(destDir, out));
  const manifest: PublishedManifest = { dirName: ev.dirName, files };
  writeFileSync(path.join(destDir, PUBLISHED_MANIFEST), JSON.stringify(manifest, null, 2) + '\n');
  return manifest;
}

const command: Command = {
  name: 'publish',
  summary: "Copy a run's evidence and report into a folder to commit (large files gzipped, logs trimmed)",
  description: `Copies RUN_DIR's evidence (every file of lib/run-store.ts EVIDENCE: campaign, provenance,
plan, gate, chaos, samples, ledger, checkpoints, recount, verdict, produced, input audit,
pending uploads, phases, rehearsal, resources, findings, run.log...) and its rendered
outputs (report.md, timeline.svg, junit.xml, report.html) into DEST_DIR, so that the
published folder can be rendered again and checked with 'clink-qual report --check DEST_DIR'.
An evidence file over ${GZIP_OVER_BYTES / 1024} KiB is stored gzipped as NAME.gz (the readers take NAME.gz for
NAME). Each collected log under logs/ keeps its first and last ${LOG_KEEP_LINES} lines, with a line
saying how many were cut, gzipped. DEST_DIR/published.json names the run directory and
lists every file it held, its size and how it was stored, so the report's raw-evidence
table renders the same for the published folder as for the run.

DEST_DIR must not exist, or be an empty directory.`,
  exitCodes: '0 published; 254 RUN_DIR is not a run directory (no provenance.json nor campaign.resolved.json) or DEST_DIR exists and is not empty; 255 internal error.',
  positionals: [
    { name: 'RUN_DIR', description: 'A run directory, e.g. runs/unknowns-20261204T221219-46b6', required: true },
    { name: 'DEST_DIR', description: 'Where to publish it, e.g. docs/qualification/qual03 (new or empty)', required: true },
  ],
  options: {
    'gzip-over': { type: 'string', valueName: 'BYTES', description: `Gzip evidence files larger than this (default ${GZIP_OVER_BYTES})` },
    'log-lines': { type: 'string', valueName: 'N', description: `Lines each log keeps from its start and from its end (default ${LOG_KEEP_LINES})` },
  },
  examples: ['clink-qual publish runs/unknowns-20261204T221219-46b6 docs/qualification/unknowns-b970126'],
  async run({ positionals, values }) {
    const [runDir, destDir] = positionals as [string, string];
    const count0 = (name: string, fallback: number): number => {
      const s = values[name] as string | undefined;
      if (s === undefined) return fallback;
      const n = Number(s);
      if (!Number.isInteger(n) || n < 0) throw new QualError('BAD_ARGUMENTS', `--${name} must be a whole number (got ${s})`);
      return n;
    };
    const m = publishRun(runDir, destDir, { gzipOver: count0('gzip-over', GZIP_OVER_BYTES), logLines: count0('log-lines', LOG_KEEP_LINES) });
    const count = (s: PublishedFile['stored']) => m.files.filter((f) => f.stored === s).length;
    console.log(`published ${m.dirName} into ${destDir}: ${count('copied')} copied, ${count('gzipped')} gzipped, ${count('trimmed')} logs trimmed, ${count('left out')} left out`);
    for (const f of m.files.filter((x) => x.stored === 'left out')) console.log(`left out: ${f.path} (not evidence)`);
    console.log(`check it: clink-qual report --check ${destDir}`);
  },
};
export default command;
