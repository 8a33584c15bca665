/**
 * `rig up`: hosts first (local namespaces, or an inventory's machines), then one code path
 * over SSH for both: clear what an earlier rig left on the hosts, deploy Kafka to the
 * brokers, the S3 store (MinIO by default, or SeaweedFS: `rig up --store`) to the store host
 * and Node to the engine hosts, wait for each to be ready, and write <stateDir>/rig.json.
 * A campaign that names the other store, or another MinIO drive layout, switches the running
 * rig's store (switchStore).
 */
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { QualError } from '../lib/errors.ts';
import { stateDir } from '../lib/paths.ts';
import { uploadFile } from './deploy.ts';
import { removeRuntimeFiles } from './down.ts';
import { claimDataDirCommand } from './host-files.ts';
import { component, node as currentNode, readManifest, storeComponent, type Component } from './install.ts';
import { readInventory } from './inventory.ts';
import { assertInventoryReady, checkInventory, type InventoryNeeds } from './inventory-doctor.ts';
import { recordPid } from './journal.ts';
import { deployKafka, KAFKA_SERVICE, type BrokerNode } from './kafka.ts';
import { BRIDGE, checkLocalPreconditions, clearLocal, createLocalHosts, namespaceOf, SUBNET } from './local.ts';
import { APT_PART, type PartsReady } from './parts-ready.ts';
import { servicePid } from './process.ts';
import { removeTaggedRules, stopAllServices } from './services.ts';
import { closeAllRemotes, remoteFor } from './ssh.ts';
import { rigStatePath } from './state.ts';
import { deployStore, describeStoreLayout, storeDrivesOf, storeKindOf, STORE_COMPONENTS, STORE_SERVICES } from './store.ts';
import type { HostSpec, RigState, StoreKind } from './types.ts';

/** Where the Node binary goes on engine hosts, relative to the host's dataDir (RigState.nodePath). */
export const NODE_RELATIVE_PATH = 'bin/node';

export interface RigUpOptions {
  inventory?: string;
  /**
   * For an inventory: what the run will need of its hosts (the engine's Java and ports,
   * libfaketime for clock steps), checked with the rig's own needs before anything is touched
   * (rig/inventory-doctor.ts). Without it only the rig's own needs (Kafka, the store) are checked.
   */
  needs?: Omit<InventoryNeeds, 'store'>;
  /** The store to run on the store host (default minio). */
  store?: StoreKind;
  /**
   * The parts from an install running beside this rig up (smoke on a fresh machine), in place
   * of the install manifest: the local hosts wait for the Debian packages, Kafka for its jars,
   * the store host for its binary and the engine hosts for Node, each only for its own part.
   */
  parts?: PartsReady;
  log?: (line: string) => void;
}

function writeState(state: RigState): void {
  mkdirSync(stateDir(), { recursive: true });
  const tmp = `${rigStatePath()}.tmp`;
  writeFileSync(tmp, JSON.stringify(state, null, 2) + '\n');
  renameSync(tmp, rigStatePath());
}

/** Deploys every service onto hosts that are reachable over SSH. */
export async function deployServices(hosts: HostSpec[], kind: RigState['kind'], log: (l: string) => void, storeKind: StoreKind = 'minio', parts?: PartsReady): Promise<RigState> {
  // From the manifest, checked before anything is touched; or each as an install beside this finishes it.
  let kafkaPart: Promise<Component>, storePart: Promise<Component>, nodePart: Promise<Component>;
  if (parts) {
    // Awaited only after SSH and the clearing below: a failed install must not be an unhandled rejection meanwhile.
    const later = (p: Promise<Component>) => (p.catch(() => {}), p);
    kafkaPart = later(parts.component('kafka'));
    storePart = later(parts.component(STORE_COMPONENTS[storeKind]));
    nodePart = later(parts.component('node'));
  } else {
    const manifest = readManifest();
    kafkaPart = Promise.resolve(component(manifest, 'kafka'));
    storePart = Promise.resolve(await storeComponent(STORE_COMPONENTS[storeKind], log));
    // This checkout's Node, not necessarily the one of the clone that last wrote the shared manifest.
    nodePart = Promise.resolve(await currentNode(manifest.components.find((c) => c.name === 'node')));
  }

  // Everyone answers over SSH (with a pinned key) before anything is deployed.
  const t0 = Date.now();
  await Promise.all(hosts.map((h) => remoteFor(h).connect()));
  log(`ssh: ${hosts.length} hosts reachable, host keys verified (${Date.now() - t0} ms)`);
  // An inventory host's dataDir is claimed first: `rig down --purge` then knows whether the rig created it (rig/host-files.ts).
  if (kind === 'inventory') await Promise.all(hosts.map((h) => remoteFor(h).exec(claimDataDirCommand(h.dataDir))));
  // Clear what an earlier rig left on these hosts: fault rules and services.
  await Promise.all(
    hosts.map(async (h) => {
      const r = remoteFor(h);
      const rules = await removeTaggedRules(r);
      const stopped = await stopAllServices(r, 5_000);
      if (rules || stopped.length) log(`${h.name}: cleared ${rules} leftover rule(s), stopped ${stopped.join(', ') || 'nothing'}`);
    }),
  );

  const brokers: BrokerNode[] = hosts.filter((h) => h.roles.includes('broker')).map((h, i) => ({ remote: remoteFor(h), nodeId: i + 1 }));
  const storeHost = hosts.find((h) => h.roles.includes('store'))!;
  const engineHosts = hosts.filter((h) => h.roles.includes('worker') || h.roles.includes('coordinator'));

  const [kafkaEndpoint, store] = await Promise.all([
    (async () => {
      const kafka = await kafkaPart;
      const t = Date.now();
      const e = await deployKafka(brokers, kafka.path, kafka.version, log);
      log(`kafka: ${brokers.length} KRaft nodes up, bootstrap ${e.bootstrap} (${((Date.now() - t) / 1000).toFixed(1)} s)`);
      return e;
    })(),
    (async () => {
      const storeBinary = await storePart;
      const t = Date.now();
      const s = await deployStore(remoteFor(storeHost), storeKind, storeBinary.path, storeBinary.version, log);
      log(`store: ${storeKind} up at ${s.endpoint.endpoint}, bucket ${s.endpoint.bucket} (${((Date.now() - t) / 1000).toFixed(1)} s)`);
      return s;
    })(),
    (async () => {
      const node = await nodePart;
      const copied = await Promise.all(engineHosts.map((h) => uploadFile(remoteFor(h), node.path, `${h.dataDir}/${NODE_RELATIVE_PATH}`, 0o755)));
      log(`node ${node.version}: copied to ${copied.filter(Boolean).length} of ${engineHosts.length} engine hosts (unchanged on the rest)`);
    })(),
  ]);
  if (kind === 'local') {
    for (const b of brokers) {
      const pid = await servicePid(b.remote, KAFKA_SERVICE);
      if (pid) recordPid(pid, `kafka ${b.remote.host.name}`);
    }
    const pid = await servicePid(remoteFor(storeHost), STORE_SERVICES[storeKind]);
    if (pid) recordPid(pid, `${STORE_SERVICES[storeKind]} ${storeHost.name}`);
  }
  return {
    kind,
    createdAt: new Date().toISOString(),
    hosts,
    kafka: kafkaEndpoint,
    store: store.endpoint,
    nodePath: NODE_RELATIVE_PATH,
  };
}

export async function rigUp(opts: RigUpOptions = {}): Promise<RigState> {
  const log = opts.log ?? (() => {});
  if (!opts.parts) readManifest(); // fail early, before touching anything, when nothing is installed
  try {
    if (opts.inventory) {
      const hosts = readInventory(opts.inventory);
      log(`inventory ${opts.inventory}: ${hosts.length} hosts`);
      // doctor --inventory first: a host that lacks something stops the run here, named with its fix, before anything is touched.
      const doctor = await checkInventory(hosts, { engines: [], clockSteps: false, ...opts.needs, store: opts.store ?? 'minio' }, remoteFor);
      assertInventoryReady(doctor, opts.inventory);
      log(`doctor: ${doctor.checks.length} checks passed on ${hosts.length} hosts`);
      const state = await deployServices(hosts, 'inventory', log, opts.store, opts.parts);
      writeState(state);
      return state;
    }
    if (opts.parts) await opts.parts.wait(APT_PART); // sshd, iptables and iproute2 before any namespace
    checkLocalPreconditions();
    if (existsSync(rigStatePath()) || existsSync(`${stateDir()}/teardown.jsonl`)) log('clearing a rig left by an earlier run');
    const cleared = await clearLocal(log);
    if (cleared.killed || cleared.namespaces || cleared.links || cleared.rules)
      log(`cleared: ${cleared.namespaces} namespace(s), ${cleared.links} link(s), ${cleared.killed} process(es), ${cleared.rules} rule(s)`);
    removeRuntimeFiles(false);
    const t = Date.now();
    let state: RigState;
    try {
      const hosts = await createLocalHosts(log);
      log(`namespaces, bridge ${BRIDGE} and sshd up on ${hosts.length} hosts (${((Date.now() - t) / 1000).toFixed(1)} s)`);
      state = await deployServices(hosts, 'local', log, opts.store, opts.parts);
      state.local = { bridge: BRIDGE, subnet: SUBNET, namespaces: hosts.map((h) => namespaceOf(h.name)) };
      writeState(state);
    } catch (err) {
      log(`rig up failed; tearing down what it created`);
      await closeAllRemotes();
      await clearLocal(log).catch((e: unknown) => log(`teardown after failure: ${(e as Error).message}`));
      removeRuntimeFiles(false);
      throw err;
    }
    return state;
  } finally {
    await closeAllRemotes();
  }
}

/**
 * The rig with the store `kind` running on its store host, MinIO on `drives` drives: the rig
 * as it is when it already runs that store on that layout; otherwise the running store is
 * stopped (its data stays in its own directory: each store and each MinIO layout has one),
 * the asked one is deployed with the same credentials and bucket, and rig.json is rewritten
 * to name it. So a rig whose MinIO runs on one drive is restarted on four, and back. Kafka
 * and the engine hosts are not touched.
 */
export async function switchStore(state: RigState, kind: StoreKind, log: (l: string) => void = () => {}, drives = 1): Promise<RigState> {
  const running = storeKindOf(state.store);
  const runningDrives = storeDrivesOf(state.store);
  if (running === kind && runningDrives === drives) return state;
  const binary = await storeComponent(STORE_COMPONENTS[kind], log);
  const host = state.hosts.find((h) => h.name === state.store.host);
  if (!host) throw new QualError('INTERNAL', `rig.json names the store host ${state.store.host}, which is not among its hosts`);
  const t = Date.now();
  log(`store: switching ${host.name} from ${describeStoreLayout(running, runningDrives)} to ${describeStoreLayout(kind, drives)}`);
  const remote = remoteFor(host);
  const { endpoint } = await deployStore(remote, kind, binary.path, binary.version, log, drives);
  if (state.kind === 'local') {
    const pid = await servicePid(remote, STORE_SERVICES[kind]);
    if (pid) recordPid(pid, `${STORE_SERVICES[kind]} ${host.name}`);
  }
  log(`store: ${describeStoreLayout(kind, drives)} up at ${endpoint.endpoint}, bucket ${endpoint.bucket} (${((Date.now() - t) / 1000).toFixed(1)} s)`);
  const next: RigState = { ...state, store: endpoint };
  writeState(next);
  return next;
}
