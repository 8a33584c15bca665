import type { Command } from '../../lib/cli.ts';
import { loadCampaign } from '../../campaigns/load.ts';
import { formatPlanJson, planCampaign, renderPlanTable } from '../../campaigns/plan.ts';
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

--json prints the timeline exactly as a run stores it in plan.json.

${faultKindsHelp()}`,
  exitCodes: '0 printed, 254 a bad campaign file or arguments (the error names the line and field), 255 internal error.',
  options: {
    json: { type: 'boolean', description: 'Print the timeline as JSON (the bytes of plan.json)' },
  },
  positionals: [{ name: 'FILE', description: 'The campaign YAML, e.g. campaigns/quick.yaml', required: true }],
  examples: ['clink-qual campaign plan campaigns/quick.yaml', 'clink-qual campaign plan campaigns/qual03.yaml --json > plan.json'],
  async run({ values, positionals }) {
    const campaign = loadCampaign(positionals[0]!);
    const plan = planCampaign(campaign);
    if (values.json) process.stdout.write(formatPlanJson(plan));
    else console.log(renderPlanTable(campaign, plan));
  },
};
export default command;
