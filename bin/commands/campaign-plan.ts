import type { Command } from '../../lib/cli.ts';
import { loadCampaign } from '../../campaigns/load.ts';
import { OVERRIDE_OPTIONS, OVERRIDES_HELP, applyOverrides, describeOverrides, parseOverrides } from '../../campaigns/overrides.ts';
import { planCampaign, renderPlanTable } from '../../campaigns/plan.ts';
import { formatPlanWithHeader, harnessRevision } from '../../campaigns/plan-header.ts';
import { faultKindsHelp } from './help-lists.ts';

const command: Command = {
  name: 'campaign plan',
  summary: "Print a campaign's seeded fault timeline without touching anything",
  description: `Loads and checks the campaign file (errors name the file, the line and the field),
expands its fault battery and compositions, and prints the timeline the seed gives: when
each fault lands (seconds after the soak starts), its kind, target or protocol point, how
long it is held and the composition it belongs to; then the totals by kind and the
expected wall time (gate + soak + drain + recount, by their deadlines). No rig, no
network: the same file and seed always print the same timeline.

--json prints {"header": {...}, "faults": [...]}: the header names the campaign, file,
seed, engine, soak, rate, fault and composition counts, expected wall time, the harness's
revision and the overrides; "faults" is the timeline exactly as a run stores it in
plan.json.

${OVERRIDES_HELP}

${faultKindsHelp()}`,
  exitCodes: '0 printed, 254 a bad campaign file or arguments (the error names the line and field, or the option), 255 internal error.',
  options: {
    json: { type: 'boolean', description: 'Print a header and the timeline as JSON (the timeline is the bytes of plan.json)' },
    ...OVERRIDE_OPTIONS,
  },
  positionals: [{ name: 'FILE', description: 'The campaign YAML, e.g. campaigns/quick.yaml', required: true }],
  examples: [
    'clink-qual campaign plan campaigns/quick.yaml',
    'clink-qual campaign plan campaigns/qual03.yaml --json > plan-with-header.json',
    'clink-qual campaign plan campaigns/quick.yaml --seed quick-7 --soak 10m --rate 500',
  ],
  async run({ values, positionals }) {
    // The options are checked before the file is read: a typo in --soak is named as such.
    const overrides = parseOverrides(values);
    const campaign = applyOverrides(loadCampaign(positionals[0]!), overrides);
    const plan = planCampaign(campaign);
    if (values.json) process.stdout.write(formatPlanWithHeader(campaign, plan, harnessRevision()));
    else {
      console.log(renderPlanTable(campaign, plan));
      if (campaign.overrides) console.log(`overrides: ${describeOverrides(campaign.overrides)}`);
    }
  },
};
export default command;
