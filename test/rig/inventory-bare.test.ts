/**
 * The inventory rig end to end on bare hosts (issue 30 items 1, 2 and 4's SIGKILL line):
 * eight hosts that look like fresh VMs (test/helpers/bare-hosts.ts: network namespaces
 * cqb-* on their own bridge and subnet with only sshd, the JDK and the Debian base from the
 * root filesystem, no Kafka, no store, no engine, no tmpfs, each dataDir laid out its own
 * way), reached as a non-root user with passwordless sudo (root logins refused). Through the
 * real CLI, with a state directory of its own (CLINK_QUAL_STATE), it runs:
 *
 *   - `rig up --inventory FILE`: doctor first, then Kafka, MinIO and Node deployed over SSH;
 *   - campaigns/quick.yaml with `rig: { kind: inventory, file }` and the inventory's host
 *     names as targets, to a PASS, whose report names its rig kind ("8 inventory hosts");
 *   - a campaign SIGKILLed the moment its partition landed: the host heals itself by its own
 *     dead-man timer (test/helpers/dead-man-check.ts, as on the local rig);
 *   - `rig down`: no process but sshd, no iptables rule, no mount, only what a down keeps in
 *     each dataDir, and the local rig's cq-* namespaces and their sshd, Kafka and store
 *     untouched (its engine is not compared: the local rig's own tests run beside this one);
 *   - `rig down --inventory FILE --purge`: every host's tree exactly as it was found.
 *
 * Everything it made (namespaces, bridge, sshds, the user and its sudoers file, the host
 * trees, keys, known_hosts, inventory, state) is removed in its teardown, even when it fails
 * midway, and by its start when an earlier run was killed.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { FAULT_KINDS } from '../../chaos/kinds.ts';
import type { FaultKind, Provenance } from '../../lib/evidence.ts';
import { repoRoot } from '../../lib/paths.ts';
import { KEPT_ON_DOWN } from '../../rig/down.ts';
import { DATA_DIR_MARKER } from '../../rig/host-files.ts';
import { readInventory } from '../../rig/inventory.ts';
import { closeAllRemotes, remoteFor, SshRemote } from '../../rig/ssh.ts';
import { BARE_ROOTS, BARE_USER, namespacePids, prepareBareHosts, removeBareHosts, type BareHosts } from '../helpers/bare-hosts.ts';
import { assertDecisiveComposition, runPassingCampaign } from '../helpers/campaign.ts';
import { checkControllerKillHeals, deadManCampaign } from '../helpers/dead-man-check.ts';
import { processesUnder } from '../helpers/procs.ts';

const cliPath = path.join(repoRoot, 'bin', 'clink-qual.ts');
const cli = (...args: string[]) => spawnSync(process.execPath, [cliPath, ...args], { encoding: 'utf8', timeout: 600_000, cwd: repoRoot });

/** Everything under the hosts' trees: path, type, mode and owner of each entry. */
function trees(): string[] {
  const out: string[] = [];
  const walk = (p: string) => {
    const st = lstatSync(p);
    out.push(`${p} ${st.isDirectory() ? 'd' : st.isSymbolicLink() ? 'l' : 'f'} ${(st.mode & 0o7777).toString(8)} ${st.uid}`);
    if (st.isDirectory()) for (const e of readdirSync(p)) walk(path.join(p, e));
  };
  for (const r of BARE_ROOTS) if (existsSync(r)) walk(r);
  return out.sort();
}

/** Mounts under the hosts' trees. */
function mountsUnderTrees(): string[] {
  return readFileSync('/proc/mounts', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[1] ?? '')
    .filter((m) => BARE_ROOTS.some((r) => m === r || m.startsWith(`${r}/`)));
}

/** Processes anywhere on the machine whose command line or working directory is in a host's tree. */
const processesInTrees = (): string[] => processesUnder(BARE_ROOTS);

/** One host as seen from this machine's root (not through the rig's own code): its processes and its iptables rules. */
function hostSeen(ns: string): { pids: number[]; iptables: string } {
  const ipt = spawnSync('ip', ['netns', 'exec', ns, 'iptables', '-w', '5', '-S'], { encoding: 'utf8' });
  return { pids: namespacePids(ns).sort((a, b) => a - b), iptables: ipt.stdout };
}

/** A process of the rig itself (a host's sshd, a Kafka broker, the store), by its command line; false once it is gone. */
function rigOwnProcess(pid: number): boolean {
  try {
    return /^sshd: .*\[listener\]|kafka\.Kafka|minio server|weed /.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' '));
  } catch {
    return false;
  }
}

/**
 * The local rig's namespaces and, in each, the rig's own processes: its sshd, Kafka, the store
 * (rig down of an inventory must not touch them). Not the engine's: the local rig's tests run
 * beside this one (bin/run-tests.ts RIG_OWN_HOSTS), and their campaigns start and kill it.
 */
function localRig(): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  for (const l of spawnSync('ip', ['netns', 'list'], { encoding: 'utf8' }).stdout.split('\n')) {
    const ns = l.trim().split(/\s+/)[0] ?? '';
    if (ns.startsWith('cq-')) out[ns] = namespacePids(ns).filter(rigOwnProcess).sort((a, b) => a - b);
  }
  return out;
}

let bare: BareHosts;
t.before(async () => {
  bare = await prepareBareHosts();
  // The CLI's children take this state directory: never the local rig's /var/lib/clink-qual.
  process.env.CLINK_QUAL_STATE = path.join(bare.dir, 'state');
});
t.teardown(async () => {
  await closeAllRemotes();
  // Whatever the test reached: a rig still up on the hosts is gone with them.
  removeBareHosts();
});

t.test('the inventory rig on bare hosts, as a sudo user: rig up, quick to a PASS, a SIGKILLed controller healed by the host, rig down leaving the hosts as found', async (t) => {
  const inventory = readInventory(bare.inventory);
  t.equal(inventory.length, 8);
  t.ok(inventory.every((h) => h.ssh.user === BARE_USER && h.ssh.sudo === true), `every host logs in as ${BARE_USER} with sudo`);
  const found = trees();
  const settled = async (check: () => boolean) => {
    for (let i = 0; i < 50 && !check(); i++) await new Promise((r) => setTimeout(r, 200));
  };
  // As found: each host runs its sshd alone (once the connections that probed it for readiness have ended).
  for (const h of bare.hosts) await settled(() => namespacePids(h.namespace).length === 1);
  const seen = Object.fromEntries(bare.hosts.map((h) => [h.name, hostSeen(h.namespace)]));
  t.ok(bare.hosts.every((h) => seen[h.name]!.pids.length === 1), 'each bare host runs one process, its sshd');
  t.ok(
    bare.hosts.every((h) => !existsSync(h.dataDir)),
    'fresh hosts: no dataDir yet',
  );

  // Nothing needs a root login: the hosts refuse one.
  const asRoot = new SshRemote({ ...inventory[0]!, ssh: { ...inventory[0]!.ssh, user: 'root', sudo: false } });
  const rootErr = await asRoot.exec('true').then(
    () => null,
    (e: Error & { code?: string }) => e,
  );
  await asRoot.close();
  t.match(rootErr?.message, /SSH login as root .* was refused/, 'a root login is refused by the bare hosts');

  const up = cli('rig', 'up', '--inventory', bare.inventory);
  t.equal(up.status, 0, `rig up --inventory exit 0: ${up.stdout.slice(-2000)} ${up.stderr.slice(-2000)}`);
  t.match(up.stdout, /doctor: \d+ checks passed on 8 hosts/, 'doctor ran first and passed');
  if (up.status !== 0) return;
  const onHost = async (name: string, cmd: string) => (await remoteFor(inventory.find((h) => h.name === name)!).exec(cmd, { check: false })).stdout.trim();
  t.equal(await onHost('kafka-1', `ps -o user= -p "$(cat /srv/cqb/kafka-1/clink/services/kafka/pid)"`), 'root', 'Kafka runs as root (started through sudo)');
  t.equal(await onHost('kafka-1', `find /srv/cqb/kafka-1/clink -not -user root -not -path '*/.upload-${BARE_USER}' | wc -l`), '0', "every file the rig left is root's but the user's staging folder");

  // quick.yaml on the inventory: its rig line and the inventory's names as targets.
  const quick = readFileSync(path.join(repoRoot, 'campaigns/quick.yaml'), 'utf8');
  const campaign = path.join(bare.dir, 'quick-bare.yaml');
  const text = quick
    .replace(/^rig: \{ kind: local \}$/m, `rig: { kind: inventory, file: ${bare.inventory} }`)
    .replace(/\bworker-(\d)\b/g, 'app-$1')
    .replace(/\bbroker-(\d)\b/g, 'kafka-$1');
  t.not(text, quick);
  t.notMatch(text, /worker-\d|broker-\d|kind: local/, 'no standard host name is left');
  writeFileSync(campaign, text);
  const runId = `ci-quick-bare-${Date.now()}`;
  const { runDir, chaos, recovered } = runPassingCampaign(t, campaign, runId, 20 * 60_000);
  const unknownKinds: readonly FaultKind[] = ['process-pause', 'store-tamper', 'disk-full', 'clock-step', 'state-corruption', 'lost-unsynced-writes', 'store-bitrot'];
  const plannedKinds = new Set(chaos.filter((c) => c.phase === 'planned').map((c) => c.kind));
  for (const kind of FAULT_KINDS.filter((k) => !unknownKinds.includes(k))) t.ok(plannedKinds.has(kind), `${kind} planned`);
  for (const kind of plannedKinds) t.ok(chaos.some((c) => c.kind === kind && c.phase === 'landed' && recovered.has(c.faultId)), `${kind} landed and recovered on the inventory`);
  // The plan names the coordinator of coordinator.* points by its role word, 'coordinator' (campaigns/plan.ts); every other target is an inventory host's name.
  const landedOn = chaos.filter((c) => c.phase === 'landed' && c.target && !(c.kind === 'protocol-point' && c.target === 'coordinator')).map((c) => c.target!);
  t.same(landedOn.filter((n) => !inventory.some((h) => h.name === n)), [], "every fault landed on an inventory host, by the inventory's name");
  assertDecisiveComposition(t, chaos);
  const provenance = JSON.parse(readFileSync(path.join(runDir, 'provenance.json'), 'utf8')) as Provenance;
  t.equal(provenance.rig.kind, 'inventory', 'provenance: an inventory rig');
  t.same(provenance.rig.hosts.map((h) => h.name).sort(), inventory.map((h) => h.name).sort());
  t.match(readFileSync(path.join(runDir, 'report.md'), 'utf8'), /8 inventory hosts plus the operations host/, 'the report names its rig kind');

  // A controller SIGKILLed mid-partition: app-2 heals itself by its own timer.
  await checkControllerKillHeals(t, deadManCampaign('app-2', `{ kind: inventory, file: ${bare.inventory} }`), (cmd) => onHost('app-2', cmd), 'dead-man-bare');
  await closeAllRemotes();

  const before = localRig();
  t.ok(Object.keys(before).length === 0 || Object.values(before).every((pids) => pids.length > 0), `each local host's own processes seen (${Object.entries(before).map(([ns, p]) => `${ns} ${p.length}`).join(', ') || 'no local rig'})`);
  const down = cli('rig', 'down');
  t.equal(down.status, 0, `rig down exit 0: ${down.stdout.slice(-1500)} ${down.stderr.slice(-1500)}`);
  t.same(localRig(), before, "rig down of the inventory left the local rig's cq-* namespaces and their processes as they were");
  t.notOk(existsSync(path.join(bare.dir, 'state', 'rig.json')), 'rig.json removed');
  for (const h of bare.hosts) {
    await settled(() => JSON.stringify(hostSeen(h.namespace).pids) === JSON.stringify(seen[h.name]!.pids));
    const now = hostSeen(h.namespace);
    t.same(now.pids, seen[h.name]!.pids, `${h.name}: no process but its sshd`);
    t.equal(now.iptables, seen[h.name]!.iptables, `${h.name}: iptables as found`);
    const left = existsSync(h.dataDir) ? readdirSync(h.dataDir) : [];
    t.same(left.filter((e) => !KEPT_ON_DOWN.includes(e) && e !== DATA_DIR_MARKER), [], `${h.name}: only what a down keeps in ${h.dataDir} (${left.join(', ')})`);
  }
  t.same(processesInTrees(), [], 'no process runs from a host tree');
  t.same(mountsUnderTrees(), [], 'no mount');

  const purge = cli('rig', 'down', '--inventory', bare.inventory, '--purge');
  t.equal(purge.status, 0, `rig down --inventory --purge exit 0: ${purge.stdout.slice(-1500)} ${purge.stderr.slice(-1500)}`);
  t.same(localRig(), before, 'the local rig still untouched');
  t.same(trees(), found, "every host's tree exactly as found (the dataDirs and the folders the rig made for them gone)");
  for (const h of bare.hosts) t.equal(hostSeen(h.namespace).iptables, seen[h.name]!.iptables, `${h.name}: iptables as found`);
  t.ok(!existsSync(path.join(bare.dir, 'state', 'store-credentials.json')), 'the store credentials purged');
  t.ok(statSync(bare.dir).isDirectory(), 'the test folder itself is left to the teardown');
});
