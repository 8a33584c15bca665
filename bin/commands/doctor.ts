import type { Command } from '../../lib/cli.ts';
import { QualError } from '../../lib/errors.ts';
import { renderDoctor, runDoctor } from '../../rig/doctor.ts';
import { STORE_KINDS, type StoreKind } from '../../rig/types.ts';

const command: Command = {
  name: 'doctor',
  summary: 'Check (read-only) that this machine can run the local rig, or that inventory hosts can (--inventory); one line a check with its fix',
  description: `Changes nothing on the machine. Checks: running as root; network namespaces usable
('ip netns list'); iptables; Java >= 17; go and mvn; free disk for the cache and runs/;
free memory for the rig (about 3 GiB with Flink); no host address or route overlapping the
rig's subnet 10.231.0.0/24; the cache manifest's files against their sha256s (reads every
cached file); the rig's state (up, down, or leftovers of one). 'smoke' runs it first, and
treats what smoke sets up itself (the cache) as a warning.

With --inventory FILE it checks the inventory's hosts instead, over SSH with their pinned
host keys, and changes nothing on them either. Per host, one line a check, PASS or FAIL with
the fix: java (17 or later, on brokers for Kafka and, for Flink, on engine hosts); iptables
with the statistic and comment matches; faketime (engine hosts, when the campaign schedules
clock steps); free disk in dataDir (broker 1.5 GiB, store 2 GiB, engine hosts 512 MiB, the
sum for a host of several roles: sized from QUAL-03's 8.24 M events); the clock within
500 ms of this host's; the ports the host's roles will listen on free (or held by the rig's
own services). --campaign C takes the store, the engine and the clock steps from the
campaign; without it, --store (default minio) and --engine (default: both engines' needs).
'rig up --inventory' and 'campaign run' on an inventory run the same checks first and stop
on a failure before touching anything.`,
  exitCodes: '0 every check passed (warnings allowed), 1 a check failed, 254 bad arguments.',
  options: {
    json: { type: 'boolean', description: 'Print the checks as JSON: {ok, checks: [{name, status, detail, fix?}]} (with --inventory: {ok, checks: [{host, check, ok, detail, fix?}]})' },
    'no-hashes': { type: 'boolean', description: "Skip hashing the cached files (the manifest is still read)" },
    inventory: { type: 'string', valueName: 'FILE', description: "Check the inventory's hosts over SSH instead of this machine" },
    campaign: { type: 'string', valueName: 'FILE', description: "With --inventory: check for this campaign's store, engine and clock steps" },
    store: { type: 'string', valueName: 'KIND', description: `With --inventory and no --campaign: the store to check for (${STORE_KINDS.join(' or ')}; default minio)` },
    engine: { type: 'string', valueName: 'NAME', description: "With --inventory and no --campaign: the engine to check for (default: every engine's needs)" },
  },
  examples: ['clink-qual doctor', 'clink-qual doctor --json', 'clink-qual doctor --inventory hosts.yaml --campaign campaigns/quick.yaml'],
  async run({ values }) {
    if (typeof values.inventory === 'string') return runInventoryDoctor(values);
    for (const o of ['campaign', 'store', 'engine']) if (values[o] !== undefined) throw new QualError('BAD_ARGUMENTS', `--${o} goes with --inventory FILE`);
    const r = await runDoctor({ hashes: !values['no-hashes'] });
    const { describeHolder, rigHolder } = await import('../../rig/lock.ts');
    const holder = rigHolder();
    console.log(values.json ? JSON.stringify({ ...r, rigLock: holder ?? null }, null, 2) : `${renderDoctor(r)}\nrig lock: ${holder ? `held by ${describeHolder(holder)} (commands that use the rig wait for it)` : 'free'}`);
    return r.ok ? 0 : 1;
  },
};

/** `doctor --inventory FILE [--campaign C | --store K --engine E]`: the inventory hosts' checks over SSH. */
async function runInventoryDoctor(values: Record<string, unknown>): Promise<number> {
  const { readInventory } = await import('../../rig/inventory.ts');
  const { checkInventory, renderInventoryDoctor } = await import('../../rig/inventory-doctor.ts');
  const { ENGINE_HOST_NEEDS, engineHostNeeds } = await import('../../engine/host-needs.ts');
  const { closeAllRemotes, remoteFor } = await import('../../rig/ssh.ts');
  const hosts = readInventory(String(values.inventory));
  let needs;
  if (typeof values.campaign === 'string') {
    if (values.store !== undefined || values.engine !== undefined) throw new QualError('BAD_ARGUMENTS', '--store and --engine come from the campaign: give either --campaign or them');
    const { loadForEngine } = await import('../../campaigns/per-mutant.ts');
    const { planCampaign } = await import('../../campaigns/plan.ts');
    const { inventoryNeedsOf } = await import('../../campaigns/inventory-needs.ts');
    const { campaign } = loadForEngine(values.campaign);
    needs = inventoryNeedsOf(campaign, planCampaign(campaign));
  } else {
    const store = values.store === undefined ? 'minio' : String(values.store);
    if (!(STORE_KINDS as readonly string[]).includes(store)) throw new QualError('BAD_ARGUMENTS', `--store ${store}: one of ${STORE_KINDS.join(', ')}`);
    const engine = values.engine === undefined ? undefined : String(values.engine);
    if (engine !== undefined && !Object.hasOwn(ENGINE_HOST_NEEDS, engine)) throw new QualError('BAD_ARGUMENTS', `--engine ${engine}: one of ${Object.keys(ENGINE_HOST_NEEDS).join(', ')}`);
    needs = { store: store as StoreKind, engines: engine === undefined ? Object.values(ENGINE_HOST_NEEDS) : engineHostNeeds(engine), clockSteps: false };
  }
  try {
    const r = await checkInventory(hosts, needs, remoteFor);
    console.log(values.json ? JSON.stringify(r, null, 2) : renderInventoryDoctor(r));
    return r.ok ? 0 : 1;
  } finally {
    await closeAllRemotes();
  }
}
export default command;
