import type { Command } from '../../lib/cli.ts';
import { existsSync, statSync } from 'node:fs';
import { EXIT, QualError } from '../../lib/errors.ts';
import { readRunEvidence } from '../../reports/evidence.ts';
import { describeRehearsal, recordRehearsal } from '../../reports/rehearsal.ts';
import { writeReports } from '../../reports/report.ts';

const command: Command = {
  name: 'report',
  summary: "Write a run's report.md, timeline.svg and junit.xml from its evidence alone",
  description: `Reads only the evidence files in RUN_DIR (campaign.resolved.json, provenance.json,
plan.json, chaos.jsonl, gate.json, samples.jsonl, ledger.jsonl, checkpoints.jsonl,
recount.json, verdict.json) and writes, into the same directory:
  report.md      the qualification report (structure of QUAL-03), every figure from the evidence
  timeline.svg   committed and produced events over time, fault windows, checkpoints
  junit.xml      one test case per gate condition, fault, counter, and the recount's agreement
With --rehearsal DIR, the rehearsal this run follows (QUAL-03's order: the shorter campaign
at the same revision first) is recorded in RUN_DIR/rehearsal.json from DIR's own evidence,
and the report's provenance names its run id, verdict and revision (and says so when the
revision is not this run's). Later reports of RUN_DIR keep it.
Missing files (an aborted run) are named in the report. Re-running on the same evidence
writes the same bytes, so stored runs can be re-reported at any time.

Exit codes: the run's own verdict: 0 PASS, 1 FAIL or GATE_FAILED, 2 ABORTED, UNKNOWN or
no verdict recorded; 254 RUN_DIR is not a directory; 255 internal error.`,
  options: {
    rehearsal: { type: 'string', valueName: 'DIR', description: "The rehearsal run's directory; recorded in RUN_DIR/rehearsal.json and named in the provenance" },
  },
  positionals: [{ name: 'RUN_DIR', description: 'A run directory, e.g. runs/quick-20260821-101500', required: true }],
  examples: ['clink-qual report runs/quick-20260821-101500', 'clink-qual report runs/qual03-20261204T025240-1dc8 --rehearsal runs/qual03-smoke-20261203T234928-f4c7'],
  async run({ positionals, values }) {
    const dir = positionals[0]!;
    if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new QualError('BAD_ARGUMENTS', `${dir} is not a run directory`);
    const rehearsalDir = values.rehearsal as string | undefined;
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

/** A stored verdict's exit code (lib/errors.ts EXIT): PASS 0, FAIL and a failed gate 1, anything else (aborted, unknown, none) 2. */
export function verdictExitCode(verdict: string | undefined): number {
  if (verdict === 'PASS') return EXIT.ok;
  if (verdict === 'FAIL' || verdict === 'GATE FAILED' || verdict === 'GATE_FAILED') return EXIT.fail;
  return EXIT.unknown;
}
export default command;
