import type { Command } from '../../lib/cli.ts';
import { stateDir } from '../../lib/paths.ts';
import { QualError } from '../../lib/errors.ts';
import { STORE_KINDS, type StoreKind } from '../../rig/types.ts';
import { rigUp } from '../../rig/up.ts';

const command: Command = {
  name: 'rig up',
  summary: 'Bring up the rig (local namespaces by default, or --inventory FILE)',
  description: `Local (the default; Linux and root): 8 hosts (worker-1..3, coordinator, broker-1..3,
store), each a network namespace cq-<name> on the bridge cq-br0 (10.231.0.0/24; the
operations host is 10.231.0.1), with its own sshd and its own disk under
${stateDir()}/hosts/<name>. A rig left by an earlier (killed) run is cleared first.

With --inventory FILE, the hosts are the machines the YAML file names (see rig/inventory.ts
for the format); their host keys must already be in the known-hosts file it names. It runs
'doctor --inventory FILE' first (Java for Kafka, iptables, free disk in dataDir, clock sync,
the rig's ports) and stops on a failure, naming the host and the fix, before anything is
touched. 'campaign run' on an inventory checks its engine's and clock steps' needs too.

Either way everything after that goes over SSH: Kafka (KRaft, 3 combined nodes) on the
brokers, the S3 store with bucket clink-qual on the store host (MinIO, or SeaweedFS with
--store seaweedfs; a campaign naming the other store switches it), Node on the engine hosts. The rig's
state is written to ${stateDir()}/rig.json; the store credentials to a 0600 file beside
it (never printed). Needs 'clink-qual rig install' first.`,
  options: {
    inventory: { type: 'string', description: 'A YAML inventory of real hosts instead of local namespaces', valueName: 'FILE' },
    store: { type: 'string', description: `The S3 store on the store host: ${STORE_KINDS.join(' or ')} (default minio)`, valueName: 'KIND' },
  },
  examples: ['clink-qual rig up', 'clink-qual rig up --store seaweedfs', 'clink-qual rig up --inventory hosts.yaml'],
  async run({ values }) {
    const store = values.store === undefined ? 'minio' : String(values.store);
    if (!(STORE_KINDS as readonly string[]).includes(store)) throw new QualError('BAD_ARGUMENTS', `--store ${store}: one of ${STORE_KINDS.join(', ')}`);
    const t0 = Date.now();
    const log = (l: string) => console.log(`rig up: ${l}`);
    // One command on the rig at a time (exit 2 naming the holder); released when this process ends.
    (await import('../../rig/lock.ts')).acquireRigLock('rig up', { log });
    const state = await rigUp({ ...(typeof values.inventory === 'string' ? { inventory: values.inventory } : {}), store: store as StoreKind, log });
    console.log(`rig up: ${state.kind} rig ready: ${state.hosts.length} hosts, kafka ${state.kafka.bootstrap}, store ${store} ${state.store.endpoint} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  },
};
export default command;
