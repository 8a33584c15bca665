import path from 'node:path';
import type { Command } from '../../lib/cli.ts';
import { repoRoot } from '../../lib/paths.ts';
import { runCampaign } from '../../campaigns/runner/run.ts';
import { install } from '../../rig/install.ts';
import { rigDown } from '../../rig/down.ts';
import { printVerdict } from './campaign-run.ts';

const command: Command = {
  name: 'smoke',
  summary: 'Run the smoke rehearsal (campaigns/quick.yaml) on the local rig, setting up what is missing',
  description: `Installs what the rig needs (idempotent), brings up the local rig if none is up,
runs campaigns/quick.yaml (every fault kind, every mandatory protocol point, the
store-down-during-worker-recovery composition, in about seven minutes), and tears the rig
down again if it brought it up (--keep-rig leaves it). Needs root on Linux.`,
  options: {
    'keep-rig': { type: 'boolean', description: 'Leave the rig up afterwards' },
    campaign: { type: 'string', valueName: 'FILE', description: 'Another campaign file', default: 'campaigns/quick.yaml' },
  },
  async run({ values }) {
    await install((l) => console.error(`rig install: ${l}`));
    const { readRigState } = await import('../../rig/state.ts');
    let broughtUp = false;
    try {
      readRigState();
    } catch {
      broughtUp = true;
    }
    try {
      const file = path.resolve(repoRoot, String(values.campaign));
      const { runDir, verdict } = await runCampaign({ campaignFile: file, rigUpIfMissing: true });
      printVerdict(runDir, verdict);
      return verdict.exitCode;
    } finally {
      if (broughtUp && !values['keep-rig']) {
        console.error('smoke: tearing the rig down');
        await rigDown({ log: (l) => console.error(`rig down: ${l}`) });
      }
    }
  },
};
export default command;
