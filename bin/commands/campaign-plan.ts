import type { Command } from '../../lib/cli.ts';
import { QualError } from '../../lib/errors.ts';
import { campaignForMutant, loadForEngine } from '../../campaigns/per-mutant.ts';
import { OVERRIDE_OPTIONS, OVERRIDES_HELP, applyOverrides, describeOverrides, parseOverrides } from '../../campaigns/overrides.ts';
import { passBlockers } from '../../campaigns/pass-reachability.ts';
import { planCampaign, renderPlanTable } from '../../campaigns/plan.ts';
import { formatPlanWithHeader, harnessRevision } from '../../campaigns/plan-header.ts';
import { faultKindsHelp, mutantNamesHelp } from './help-lists.ts';

const command: Command = {
  name: 'campaign plan',
  summary: "Print a campaign's seeded fault timeline without touching anything",
  description: `Loads and checks the campaign file (errors name the file, the line and the field),
expands its fault battery and compositions, and prints the timeline the seed gives: when
each fault lands (seconds after the soak starts), its kind, target or protocol point, how
long it is held and the composition it belongs to; then the totals by kind and the
expected wall time (gate + soak + drain + recount, by their deadlines). No rig, no
network: the same file and seed always print the same timeline.

A campaign that cannot reach a PASS whatever the engine does (a mandatory protocol point of
the engine not scheduled, a gate fault that cannot land) gets a warning on stderr naming
why: such a run can only FAIL for coverage (or fail its gate).

--json prints {"header": {...}, "faults": [...]}: the header names the campaign, file,
seed, engine, soak, rate, fault and composition counts, expected wall time, the harness's
revision and the overrides; "faults" is the timeline exactly as a run stores it in
plan.json.

--mutant NAME plans the run of that mutant: with the mutant's own schedule when the file
gives it one (perMutant, as in campaigns/mutants.yaml; "overrides" then records it as
mutantSchedule), else the base schedule. Without it, the file's engine.mutant (the correct
engine by default). The file is checked against its engine's fault points and mutants.

${OVERRIDES_HELP}

${faultKindsHelp()}
${mutantNamesHelp()}`,
  exitCodes: '0 printed, 254 a bad campaign file or arguments (the error names the line and field, or the option), 255 internal error.',
  options: {
    json: { type: 'boolean', description: 'Print a header and the timeline as JSON (the timeline is the bytes of plan.json)' },
    mutant: { type: 'string', valueName: 'NAME', description: "Plan that mutant's run: its own schedule when the file gives it one (perMutant)" },
    ...OVERRIDE_OPTIONS,
  },
  positionals: [{ name: 'FILE', description: 'The campaign YAML, e.g. campaigns/quick.yaml', required: true }],
  examples: [
    'clink-qual campaign plan campaigns/quick.yaml',
    'clink-qual campaign plan campaigns/qual03.yaml --json > plan-with-header.json',
    'clink-qual campaign plan campaigns/quick.yaml --seed quick-7 --soak 10m --rate 500',
    'clink-qual campaign plan campaigns/mutants.yaml --mutant no-fencing',
  ],
  async run({ values, positionals }) {
    // The options are checked before the file is read: a typo in --soak is named as such.
    const overrides = parseOverrides(values);
    const mutant = typeof values.mutant === 'string' ? values.mutant : undefined;
    const { campaign: file, engine } = loadForEngine(positionals[0]!);
    if (mutant !== undefined && mutant !== 'none' && !engine.mutants.some((m) => m.name === mutant)) {
      throw new QualError('BAD_ARGUMENTS', `--mutant: unknown mutant '${mutant}' for engine ${engine.name} (known: ${engine.mutants.map((m) => m.name).join(', ') || 'none'})`);
    }
    // The campaign as `campaign run FILE [--mutant NAME]` would plan it (campaigns/runner/run.ts loadForRun).
    const forMutant = campaignForMutant(file, mutant ?? file.engine.mutant);
    const campaign = applyOverrides(mutant === undefined ? forMutant : { ...forMutant, engine: { ...forMutant.engine, mutant } }, overrides);
    const plan = planCampaign(campaign);
    // Before anything runs: a campaign that cannot PASS, whatever the engine does, says so (on stderr, so --json stays the plan).
    const blockers = passBlockers(campaign, plan, engine);
    if (blockers.length) console.error(['warning: this campaign cannot reach a PASS with ' + engine.name + ':', ...blockers.map((b) => `  - ${b}`)].join('\n'));
    if (values.json) process.stdout.write(formatPlanWithHeader(campaign, plan, harnessRevision()));
    else {
      console.log(renderPlanTable(campaign, plan));
      if (mutant !== undefined && mutant !== 'none' && !campaign.overrides?.mutantSchedule) console.log(`mutant: ${mutant} (no schedule of its own in this file: the base schedule)`);
      if (campaign.overrides) console.log(`overrides: ${describeOverrides(campaign.overrides)}`);
    }
  },
};
export default command;
