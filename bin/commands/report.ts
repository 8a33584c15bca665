/**
 * `clink-qual report RUN_DIR`: a run's report.md, timeline.svg and junit.xml from its
 * evidence alone; `report --check RUN_DIR` renders them again and compares them with the
 * committed ones. It writes only into a run directory, and never replaces a report with
 * one rendered from less evidence.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Command } from '../../lib/cli.ts';
import { EXIT, QualError } from '../../lib/errors.ts';
import { EVIDENCE } from '../../lib/run-store.ts';
import { readRunEvidence } from '../../reports/evidence.ts';
import { attachFindings } from '../../reports/findings.ts';
import { renderJunit } from '../../reports/junit.ts';
import { describeRehearsal, recordRehearsal } from '../../reports/rehearsal.ts';
import { renderReportFrom, writeReports } from '../../reports/report.ts';
import { renderTimelineSvg } from '../../reports/timeline-svg.ts';
import { isRunDirectory } from './publish.ts';

const command: Command = {
  name: 'report',
  summary: "Write a run's report.md, timeline.svg and junit.xml from its evidence alone (--check: compare with the committed ones)",
  description: `Reads only the evidence files in RUN_DIR (campaign.resolved.json, provenance.json,
plan.json, chaos.jsonl, gate.json, samples.jsonl, ledger.jsonl, checkpoints.jsonl,
recount.json, verdict.json; a file stored gzipped as NAME.gz reads as NAME) and writes,
into the same directory:
  report.md      the qualification report (structure of QUAL-03), every figure from the evidence
  timeline.svg   committed and produced events over time, fault windows, checkpoints
  junit.xml      one test case per gate condition, fault, counter, and the recount's agreement
With --rehearsal DIR, the rehearsal this run follows (QUAL-03's order: the shorter campaign
at the same revision first) is recorded in RUN_DIR/rehearsal.json from DIR's own evidence,
and the report's provenance names its run id, verdict and revision (and says so when the
revision is not this run's). Later reports of RUN_DIR keep it.
Re-running on the same evidence writes the same bytes, so stored runs can be re-reported
at any time. RUN_DIR must be a run directory (it has provenance.json or
campaign.resolved.json). When RUN_DIR already has a report.md and evidence is missing, the
report is not rewritten (it may have been rendered from more than is left): the missing
files are named and nothing is written. An aborted run's report.md, written by the run
itself, names what it lacks.

With --check, nothing is written: report.md, timeline.svg (and junit.xml when RUN_DIR has
one) are rendered from the evidence and compared with RUN_DIR's own, and the differences
are printed as a short unified-style diff. A published run (clink-qual publish) checks
against the report it was published with.`,
  exitCodes: 'without --check, the run\'s own verdict: 0 PASS, 1 FAIL or GATE_FAILED, 2 ABORTED, UNKNOWN or no verdict recorded; with --check, 0 identical, 1 different. 254 RUN_DIR is not a run directory, or evidence is missing (named) where a report exists or --check was asked; 2 RUN_DIR is a live run (the rig lock\'s holder is running it): nothing is rendered; 255 internal error.',
  options: {
    rehearsal: { type: 'string', valueName: 'DIR', description: "The rehearsal run's directory; recorded in RUN_DIR/rehearsal.json and named in the provenance" },
    check: { type: 'boolean', description: 'Render into memory and compare with the committed report.md, timeline.svg (and junit.xml); write nothing' },
  },
  positionals: [{ name: 'RUN_DIR', description: 'A run directory, e.g. runs/unknowns-20261204T221219-46b6', required: true }],
  examples: [
    'clink-qual report runs/unknowns-20261204T221219-46b6',
    'clink-qual report runs/qual03-20261204T090448-29bf --rehearsal runs/qual03-smoke-20261204T063955-4032',
    'clink-qual report --check docs/qualification/unknowns-b970126',
  ],
  async run({ positionals, values }) {
    const dir = positionals[0]!;
    if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new QualError('BAD_ARGUMENTS', `${dir} is not a run directory`);
    if (!isRunDirectory(dir)) throw new QualError('BAD_ARGUMENTS', `${dir} is not a run directory: it has neither ${EVIDENCE.provenance.file} nor ${EVIDENCE.campaign.file}, and report writes only into a run's`);
    const { rigHolder, describeHolder } = await import('../../rig/lock.ts');
    const { isLiveRun } = await import('../../reports/live-run.ts');
    const holder = rigHolder();
    if (holder && isLiveRun(readRunEvidence(dir), holder)) {
      throw new QualError('PRECONDITION', `${dir} is a live run (the rig is held by ${describeHolder(holder)}): its report is written when it ends; 'clink-qual runs show ${dir}' shows its progress`);
    }
    const rehearsalDir = values.rehearsal as string | undefined;
    if (values.check) {
      if (rehearsalDir) throw new QualError('BAD_ARGUMENTS', '--check writes nothing; give --rehearsal without it');
      return checkReports(dir);
    }
    const before = readRunEvidence(dir);
    if (existsSync(path.join(dir, 'report.md')) && before.missing.length) {
      throw new QualError(
        'BAD_INPUT_FILE',
        `${dir}/report.md was not rewritten: evidence is missing (${before.missing.join(', ')}), and the report there may have been rendered from it. Check it with 'clink-qual report --check ${dir}', or remove report.md to render what is left.`,
      );
    }
    if (rehearsalDir) {
      const r = recordRehearsal(dir, rehearsalDir);
      console.log(`rehearsal: ${describeRehearsal(r, readRunEvidence(dir).provenance?.engine.revision)}`);
    }
    const files = writeReports(dir);
    const ev = readRunEvidence(dir);
    console.log(`verdict: ${ev.verdict?.verdict ?? 'none recorded (aborted run?)'}`);
    if (ev.missing.length) console.log(`missing evidence: ${ev.missing.join(', ')}`);
    for (const f of Object.values(files)) console.log(`wrote ${f}`);
    return verdictExitCode(ev.verdict?.verdict);
  },
};

/**
 * report --check: renders the run's outputs in memory and compares them with the committed
 * ones (junit.xml only when committed); prints a diff of each that differs. 0 identical,
 * 1 different; throws (254) when evidence the report needs is missing.
 */
export function checkReports(dir: string): number {
  const ev = attachFindings(readRunEvidence(dir), dir);
  if (ev.missing.length) throw new QualError('BAD_INPUT_FILE', `${dir} cannot be checked: evidence is missing (${ev.missing.join(', ')})`);
  const rendered: [string, () => string][] = [
    ['report.md', () => renderReportFrom(ev)],
    ['timeline.svg', () => renderTimelineSvg(ev)],
  ];
  if (existsSync(path.join(dir, 'junit.xml'))) rendered.push(['junit.xml', () => renderJunit(ev)]);
  let differ = 0;
  for (const [name, render] of rendered) {
    const file = path.join(dir, name);
    if (!existsSync(file)) {
      console.log(`${name}: not committed`);
      differ++;
      continue;
    }
    const committed = readFileSync(file, 'utf8');
    const fresh = render();
    if (committed === fresh) console.log(`${name}: identical`);
    else {
      differ++;
      console.log(`${name}: differs`);
      console.log(diffSummary(name, committed, fresh));
    }
  }
  console.log(differ ? `NOT REPRODUCED: ${differ} file${differ === 1 ? '' : 's'} differ from what the evidence renders` : 'REPRODUCED: the committed report renders again from the evidence, byte for byte');
  return differ ? EXIT.fail : EXIT.ok;
}

/**
 * A short unified-style diff of two texts: the one region between their common first and
 * last lines, with `context` lines around it, at most maxLines lines from each side.
 */
export function diffSummary(name: string, committed: string, rendered: string, context = 2, maxLines = 12): string {
  const a = committed.split('\n');
  const b = rendered.split('\n');
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
  const from = Math.max(0, pre - context);
  const aEnd = a.length - suf;
  const bEnd = b.length - suf;
  const after = Math.min(context, suf);
  const side = (lines: string[], start: number, end: number, sign: string) => {
    const out = lines.slice(start, Math.min(end, start + maxLines)).map((l) => sign + l);
    if (end - start > maxLines) out.push(`${sign}... ${end - start - maxLines} more line${end - start - maxLines === 1 ? '' : 's'}`);
    return out;
  };
  return [
    `--- committed/${name}`,
    `+++ rendered/${name}`,
    `@@ -${from + 1},${aEnd + after - from} +${from + 1},${bEnd + after - from} @@`,
    ...a.slice(from, pre).map((l) => ' ' + l),
    ...side(a, pre, aEnd, '-'),
    ...side(b, pre, bEnd, '+'),
    ...a.slice(aEnd, aEnd + after).map((l) => ' ' + l),
  ].join('\n');
}

/** A stored verdict's exit code (lib/errors.ts EXIT): PASS 0, FAIL and a failed gate 1, anything else (aborted, unknown, none) 2. */
export function verdictExitCode(verdict: string | undefined): number {
  if (verdict === 'PASS') return EXIT.ok;
  if (verdict === 'FAIL' || verdict === 'GATE FAILED' || verdict === 'GATE_FAILED') return EXIT.fail;
  return EXIT.unknown;
}
export default command;
