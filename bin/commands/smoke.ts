import path from 'node:path';
import type { Command } from '../../lib/cli.ts';
import { repoRoot } from '../../lib/paths.ts';
import { QualError } from '../../lib/errors.ts';
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
down again if it brought it up (--keep-rig leaves it). Needs root on Linux.
First runs 'clink-qual doctor' (without hashing the cache, which install checks): a
failed check stops it, except what smoke sets up itself (the cache), which only warns.

Exit codes: 0 PASS, 1 FAIL (or the gate failed), 2 unknown (aborted; the environment,
doctor included, stopped it), 254 bad arguments, 255 internal error.`,
  options: {
    'keep-rig': { type: 'boolean', description: 'Leave the rig up afterwards' },
    campaign: { type: 'string', valueName: 'FILE', description: 'Another campaign file', default: 'campaigns/quick.yaml' },
  },
  async run({ values }) {
    const { forSmoke, renderDoctor, runDoctor } = await import('../../rig/doctor.ts');
    const doc = forSmoke(await runDoctor({ hashes: false }));
    console.error(renderDoctor(doc).split('\n').map((l) => `doctor: ${l}`).join('\n'));
    if (!doc.ok) throw new QualError('PRECONDITION', "this machine cannot run the smoke rehearsal yet: fix the FAIL lines above ('clink-qual doctor' checks again)");
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
