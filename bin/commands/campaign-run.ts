import type { Command } from '../../lib/cli.ts';
import { runCampaign } from '../../campaigns/runner/run.ts';

const command: Command = {
  name: 'campaign run',
  summary: 'Run a campaign: gate, soak, drain, recount, report',
  description: `Runs the campaign on the live rig (rig up first, or --inventory FILE to deploy onto
real hosts). Every host must answer over SSH with its pinned host key before anything is
touched. Evidence goes to runs/<run-id>/ as the run goes: chaos.jsonl, samples.jsonl,
ledger.jsonl, logs/, recount.json, verdict.json, report.md, timeline.svg, junit.xml.
Ctrl-C heals every active fault, collects the logs and marks the run ABORTED.
Exit: 0 PASS, 1 FAIL or GATE FAILED, 2 aborted/unknown, 254 bad input, 255 internal error.`,
  positionals: [{ name: 'FILE', description: 'the campaign YAML (campaigns/quick.yaml, ...)', required: true }],
  options: {
    inventory: { type: 'string', valueName: 'FILE', description: 'Deploy onto the hosts of this inventory instead of the local rig' },
    mutant: { type: 'string', valueName: 'NAME', description: "Run a deliberately broken sink variant (see 'qualify-mutants --help')" },
    'run-id': { type: 'string', valueName: 'ID', description: 'The run id (default: <campaign>-<time>-<random>): A-Z a-z 0-9 . _ - only, and never one used before (exit 254)' },
  },
  examples: ['clink-qual campaign run campaigns/quick.yaml', 'clink-qual campaign run campaigns/quick.yaml --mutant commit-at-prepare'],
  async run({ values, positionals }) {
    const { runDir, verdict } = await runCampaign({
      campaignFile: positionals[0]!,
      ...(typeof values.inventory === 'string' ? { inventory: values.inventory } : {}),
      ...(typeof values.mutant === 'string' ? { mutant: values.mutant } : {}),
      ...(typeof values['run-id'] === 'string' ? { runId: values['run-id'] } : {}),
    });
    printVerdict(runDir, verdict);
    return verdict.exitCode;
  },
};
export default command;

export function printVerdict(runDir: string, verdict: { verdict: string; reasons: string[]; warnings?: string[]; produced: number; committedDistinct: number; pendingUploads: number }): void {
  console.log(`\n${verdict.verdict}: ${verdict.committedDistinct} of ${verdict.produced} events committed (recount); ${verdict.pendingUploads} multipart uploads left pending`);
  for (const r of verdict.reasons) console.log(`  - ${r}`);
  for (const w of verdict.warnings ?? []) console.log(`  ! ${w}`);
  console.log(`report: ${runDir}/report.md`);
}
