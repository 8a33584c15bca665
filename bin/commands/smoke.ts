import path from 'node:path';
import type { Command } from '../../lib/cli.ts';
import { repoRoot } from '../../lib/paths.ts';
import { QualError } from '../../lib/errors.ts';
import { runCampaign } from '../../campaigns/runner/run.ts';
import { install } from '../../rig/install.ts';
import type { InstallAsk } from '../../rig/install-plan.ts';
import { loadCampaign } from '../../campaigns/load.ts';
import { rigDown } from '../../rig/down.ts';
import { PartsReady } from '../../rig/parts-ready.ts';
import { rigUp } from '../../rig/up.ts';
import { printVerdict } from './campaign-run.ts';
import { ENGINE_NAMES } from '../../engine/index.ts';
import { FAULT_KIND_NAMES as FAULT_KINDS } from '../../lib/fault-kinds.ts';

/** Each engine's smoke campaign: its quick battery. */
export const SMOKE_CAMPAIGNS: Readonly<Record<string, string>> = {
  clink: 'campaigns/quick.yaml',
  flink: 'campaigns/flink-quick.yaml',
};

/** The campaign file smoke runs: --campaign if given, else the engine's quick battery. */
export function smokeCampaign(engine: string | undefined, campaign: string | undefined): string {
  const name = engine ?? 'clink';
  if (!ENGINE_NAMES.includes(name)) throw new QualError('BAD_ARGUMENTS', `--engine ${name}: no such engine (known: ${ENGINE_NAMES.join(', ')})`);
  if (campaign !== undefined) {
    if (engine !== undefined) throw new QualError('BAD_ARGUMENTS', '--engine and --campaign together: the campaign file names its engine; give one of them');
    return campaign;
  }
  const file = SMOKE_CAMPAIGNS[name];
  if (!file) throw new QualError('BAD_ARGUMENTS', `--engine ${name}: no smoke campaign for it; give --campaign FILE`);
  return file;
}

/**
 * What smoke's `rig install` installs beyond what every run needs: the parts of the engine
 * and the store its campaign names (Flink's for a Flink campaign, SeaweedFS for one on it), so
 * a Clink smoke installs none of Flink's and a Flink smoke has them before its rig comes up.
 */
export function smokeInstallAsk(campaignFile: string): InstallAsk {
  const c = loadCampaign(campaignFile, { engines: ENGINE_NAMES });
  return { engines: [c.engine.name], stores: c.store ? [c.store] : [] };
}

const command: Command = {
  name: 'smoke',
  summary: 'Run the smoke rehearsal (campaigns/quick.yaml) on the local rig, setting up what is missing',
  description: `Installs what the rig needs (idempotent; the parts of the campaign's engine and store
too, so Flink's only for a Flink campaign), brings up the local rig if none is up (beside
the install: only the store host waits for a MinIO build),
runs campaigns/quick.yaml (7 of the ${FAULT_KINDS.length} fault kinds: worker-kill, coordinator-kill,
protocol-point, store-outage, partition, packet-loss, broker-restart; every mandatory
protocol point; the store-down-during-worker-recovery composition; in about six minutes;
the other four kinds are campaigns/unknowns.yaml's), and tears the rig
down again if it brought it up (--keep-rig leaves it). Needs root on Linux.
--engine flink runs campaigns/flink-quick.yaml instead: the same battery against Apache
Flink 2.2 behind the engine plug (docs/flink.md; about 17 minutes, the JVMs included).
First runs 'clink-qual doctor' (without hashing the cache, which install checks): a
failed check stops it, except what smoke sets up itself (the cache), which only warns.`,
  exitCodes: '0 PASS, 1 FAIL (or the gate failed), 2 unknown (aborted; the environment, doctor included, stopped it), 254 bad arguments, 255 internal error.',
  options: {
    'keep-rig': { type: 'boolean', description: 'Leave the rig up afterwards' },
    engine: { type: 'string', valueName: 'NAME', description: `The engine's own smoke campaign: ${Object.entries(SMOKE_CAMPAIGNS).map(([e, f]) => `${e} (${f})`).join(', ')}; default clink` },
    campaign: { type: 'string', valueName: 'FILE', description: 'Another campaign file (its engine is the one it names); default campaigns/quick.yaml' },
    rehearsal: { type: 'string', valueName: 'RUN_DIR', description: "The finished rehearsal this run follows (e.g. qual03-smoke's run before qual03); named in the report's provenance" },
  },
  async run({ values }) {
    const campaign = smokeCampaign(values.engine === undefined ? undefined : String(values.engine), values.campaign === undefined ? undefined : String(values.campaign));
    const rehearsal = values.rehearsal === undefined ? undefined : String(values.rehearsal);
    // A rehearsal that is not a finished run is refused before doctor and install (exit 254).
    if (rehearsal) (await import('../../reports/rehearsal.ts')).readRehearsal(rehearsal);
    // One command on the rig at a time (exit 2 naming the holder); released when this process ends.
    (await import('../../rig/lock.ts')).acquireRigLock('smoke', { log: (l) => console.error(`rig lock: ${l}`) });
    const { forSmoke, renderDoctor, runDoctor } = await import('../../rig/doctor.ts');
    const doc = forSmoke(await runDoctor({ hashes: false }));
    console.error(renderDoctor(doc).split('\n').map((l) => `doctor: ${l}`).join('\n'));
    if (!doc.ok) throw new QualError('PRECONDITION', "this machine cannot run the smoke rehearsal yet: fix the FAIL lines above ('clink-qual doctor' checks again)");
    const file = path.resolve(repoRoot, campaign);
    const ask = smokeInstallAsk(file);
    const installLog = (l: string) => console.error(`rig install: ${l}`);
    const { readRigState } = await import('../../rig/state.ts');
    let broughtUp = false;
    try {
      readRigState();
    } catch {
      broughtUp = true;
    }
    // run.log's first lines: this rig up's, with their times (the run directory does not exist yet).
    const earlierLog: string[] = [];
    try {
      if (!broughtUp) await install(installLog, ask);
      else {
        // No rig: bring it up beside the install, each host waiting only for its own part, so
        // that on a fresh machine the brokers and engine hosts are up while MinIO still builds.
        const parts = new PartsReady();
        const upLog = (l: string) => {
          console.error(`rig up: ${l}`);
          earlierLog.push(`${new Date().toISOString()} ${l}\n`);
        };
        upLog('no rig is up: bringing up the local rig beside the install');
        const [installed, up] = await Promise.allSettled([install(installLog, { ...ask, ready: parts }), rigUp({ store: loadCampaign(file, { engines: ENGINE_NAMES }).store ?? 'minio', log: upLog, parts })]);
        // An install that failed is the cause; the rig up it left waiting tore down what it had made.
        if (installed.status === 'rejected') throw installed.reason;
        if (up.status === 'rejected') throw up.reason;
      }
      const { runDir, verdict } = await runCampaign({ campaignFile: file, rigUpIfMissing: true, earlierLog, ...(rehearsal ? { rehearsal } : {}) });
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
