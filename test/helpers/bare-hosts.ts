/**
 * Bare hosts for the inventory rig's end-to-end test (test/rig/inventory-bare.test.ts): eight
 * hosts that look like fresh VMs. Each is a network namespace `cqb-<name>` on its own bridge
 * `cqb-br0` (10.232.0.0/24, apart from the local rig's cq-* and 10.231.0.0/24) running only
 * an sshd; the JDK and the Debian base are the root filesystem's. There is no Kafka, no store,
 * no engine and no prepared tmpfs, and each host's dataDir has a layout of its own
 * (/srv/cqb/kafka-1/clink, /opt/cqb-app-1 …), unlike the local rig's <stateDir>/hosts/<name>.
 *
 * The hosts are reached as a non-root user (BARE_USER) with passwordless sudo, as cloud images
 * are: sshd refuses root logins, so everything the rig does goes through `sudo -n`. The
 * client key, the pinned host keys (known_hosts) and the inventory are written to a folder
 * of the test's own; so are the sshds' keys and configurations.
 *
 * removeBareHosts undoes all of it (processes in the namespaces, namespaces, bridge and
 * veths, the user and its sudoers file, the host trees, the folder) and is safe to call when
 * nothing is there: the test calls it first (what a killed earlier test left) and in its
 * teardown. Nothing here touches the local rig's cq-* namespaces, its bridge or its state.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { waitFor } from '../../rig/process.ts';
import { tcpOpen } from '../../rig/net.ts';
import type { Role } from '../../rig/types.ts';

export const BARE_PREFIX = 'cqb-';
export const BARE_BRIDGE = 'cqb-br0';
export const BARE_SUBNET = '10.232.0.0/24';
export const BARE_BRIDGE_ADDRESS = '10.232.0.1';
/** The hosts' login: a non-root user with passwordless sudo. */
export const BARE_USER = 'cqb-admin';
export const BARE_SUDOERS = `/etc/sudoers.d/${BARE_USER}`;

/** The bare hosts: inventory names unlike the standard ones, and each its own dataDir layout. */
export const BARE_HOSTS: readonly { name: string; roles: Role[]; octet: number; dataDir: string }[] = [
  { name: 'app-1', roles: ['worker'], octet: 11, dataDir: '/opt/cqb-app-1' },
  { name: 'app-2', roles: ['worker'], octet: 12, dataDir: '/srv/cqb/app-2/engine' },
  { name: 'app-3', roles: ['worker'], octet: 13, dataDir: '/var/opt/cqb/app-3' },
  { name: 'control', roles: ['coordinator'], octet: 20, dataDir: '/srv/cqb/control' },
  { name: 'kafka-1', roles: ['broker'], octet: 31, dataDir: '/srv/cqb/kafka-1/clink' },
  { name: 'kafka-2', roles: ['broker'], octet: 32, dataDir: '/opt/cqb-kafka-2/data' },
  { name: 'kafka-3', roles: ['broker'], octet: 33, dataDir: '/var/opt/cqb/kafka-3/clink-qual' },
  { name: 's3', roles: ['store'], octet: 40, dataDir: '/srv/cqb/s3/store' },
];

/** The folders the hosts' trees live in, all named cqb: removed whole by removeBareHosts. */
export const BARE_ROOTS: readonly string[] = ['/srv/cqb', '/var/opt/cqb', ...BARE_HOSTS.filter((h) => h.dataDir.startsWith('/opt/cqb-')).map((h) => h.dataDir.split('/').slice(0, 3).join('/'))];

/**
 * What a fresh VM has before the rig comes: the parent folder of some dataDirs (as an
 * operator would make it), never a dataDir itself.
 */
const PRE_EXISTING: readonly string[] = ['/srv/cqb/kafka-1', '/srv/cqb/s3', '/var/opt/cqb'];

export interface BareHosts {
  /** The test's own folder: keys, known_hosts, the inventory, the sshds' files. */
  dir: string;
  inventory: string;
  knownHosts: string;
  hosts: { name: string; roles: Role[]; address: string; dataDir: string; namespace: string }[];
}

function run(cmd: string, args: string[], allowFail = false): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0 && !allowFail) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}): ${(r.stderr ?? '') + (r.error?.message ?? '')}`);
  return r.stdout ?? '';
}

export function namespaceOfBare(name: string): string {
  return `${BARE_PREFIX}${name}`;
}

function sshdConfig(dir: string, address: string): string {
  return [
    '# a bare host of the inventory test: sshd only, root logins refused',
    `ListenAddress ${address}:22`,
    `HostKey ${dir}/ssh_host_ed25519_key`,
    `PidFile ${dir}/sshd.pid`,
    `AuthorizedKeysFile ${dir}/../authorized_keys`,
    'PermitRootLogin no',
    `AllowUsers ${BARE_USER}`,
    'PubkeyAuthentication yes',
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'UsePAM no',
    'StrictModes no',
    'MaxSessions 64',
    'MaxStartups 64:30:128',
    'ClientAliveInterval 15',
    'PrintMotd no',
    'UseDNS no',
    'LogLevel ERROR',
    'Subsystem sftp internal-sftp',
    '',
  ].join('\n');
}

/**
 * Makes the eight bare hosts, the sudo user and the inventory naming them (with `sudo: true`).
 * `nice` runs the sshds, and so everything started through them, at that niceness.
 */
export async function prepareBareHosts(opts: { nice?: number } = {}): Promise<BareHosts> {
  if (!existsSync('/usr/bin/sudo')) throw new Error("sudo is not installed: run 'clink-qual rig install' (it installs the Debian package sudo)");
  removeBareHosts();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cqb-hosts-'));
  // sshd reads authorized_keys as the user logging in: the folder must let it through.
  chmodSync(dir, 0o711);
  const clientKey = path.join(dir, 'id_ed25519');
  run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'cqb-operations', '-f', clientKey]);
  writeFileSync(path.join(dir, 'authorized_keys'), readFileSync(`${clientKey}.pub`), { mode: 0o644 });

  // The user: a home of its own, no password but not locked (sshd without PAM refuses a locked account's key login).
  run('useradd', ['--create-home', '--shell', '/bin/bash', BARE_USER]);
  run('usermod', ['-p', '*', BARE_USER]);
  writeFileSync(BARE_SUDOERS, `${BARE_USER} ALL=(ALL) NOPASSWD:ALL\n`, { mode: 0o440 });
  run('visudo', ['-c', '-q', '-f', BARE_SUDOERS]);

  for (const d of PRE_EXISTING) mkdirSync(d, { recursive: true, mode: 0o755 });
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  run('ip', ['link', 'add', BARE_BRIDGE, 'type', 'bridge']);
  run('ip', ['addr', 'add', `${BARE_BRIDGE_ADDRESS}/24`, 'dev', BARE_BRIDGE]);
  run('ip', ['link', 'set', BARE_BRIDGE, 'up']);

  const hosts: BareHosts['hosts'] = [];
  const known: string[] = [];
  const inventory: string[] = ['# bare hosts of test/rig/inventory-bare.test.ts (test/helpers/bare-hosts.ts)', 'hosts:'];
  for (const [i, h] of BARE_HOSTS.entries()) {
    const ns = namespaceOfBare(h.name);
    const address = `10.232.0.${h.octet}`;
    const veth = `${BARE_PREFIX}h${i}`;
    run('ip', ['netns', 'add', ns]);
    run('ip', ['link', 'add', veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns]);
    run('ip', ['link', 'set', veth, 'master', BARE_BRIDGE, 'up']);
    run('ip', ['-n', ns, 'link', 'set', 'lo', 'up']);
    run('ip', ['-n', ns, 'addr', 'add', `${address}/24`, 'dev', 'eth0']);
    run('ip', ['-n', ns, 'link', 'set', 'eth0', 'up']);
    run('ip', ['-n', ns, 'route', 'add', 'default', 'via', BARE_BRIDGE_ADDRESS]);
    const sshd = path.join(dir, h.name);
    mkdirSync(sshd);
    run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', `cqb-${h.name}`, '-f', path.join(sshd, 'ssh_host_ed25519_key')]);
    writeFileSync(path.join(sshd, 'sshd_config'), sshdConfig(sshd, address));
    const pub = readFileSync(path.join(sshd, 'ssh_host_ed25519_key.pub'), 'utf8').trim().split(/\s+/);
    known.push(`${address} ${pub[0]} ${pub[1]}`);
    const niced = opts.nice ? ['nice', '-n', String(opts.nice)] : [];
    const child = spawn('ip', ['netns', 'exec', ns, ...niced, '/usr/sbin/sshd', '-D', '-f', path.join(sshd, 'sshd_config'), '-E', path.join(sshd, 'sshd.log')], { detached: true, stdio: 'ignore' });
    child.unref();
    hosts.push({ name: h.name, roles: h.roles, address, dataDir: h.dataDir, namespace: ns });
    inventory.push(
      `  - name: ${h.name}`,
      `    address: ${address}`,
      `    roles: [${h.roles.join(', ')}]`,
      `    ssh: { user: ${BARE_USER}, sudo: true, port: 22, key: id_ed25519, knownHosts: known_hosts }`,
      `    dataDir: ${h.dataDir}`,
    );
  }
  const knownHosts = path.join(dir, 'known_hosts');
  writeFileSync(knownHosts, known.join('\n') + '\n');
  const inventoryFile = path.join(dir, 'inventory.yaml');
  writeFileSync(inventoryFile, inventory.join('\n') + '\n');
  await Promise.all(hosts.map((h) => waitFor(`sshd on bare host ${h.name} (${h.address}:22)`, () => tcpOpen(h.address, 22), 15_000, 100)));
  return { dir, inventory: inventoryFile, knownHosts, hosts };
}

/** The cqb-* network namespaces there are. */
export function bareNamespaces(): string[] {
  return run('ip', ['netns', 'list'], true)
    .split('\n')
    .map((l) => l.trim().split(/\s+/)[0] ?? '')
    .filter((n) => n.startsWith(BARE_PREFIX));
}

/** The PIDs of the processes in a network namespace. */
export function namespacePids(ns: string): number[] {
  return run('ip', ['netns', 'pids', ns], true)
    .split(/\s+/)
    .filter((p) => /^\d+$/.test(p))
    .map(Number);
}

/** Removes everything prepareBareHosts made (and what a killed earlier test left of it). Safe when nothing is there. */
export function removeBareHosts(): void {
  const namespaces = bareNamespaces();
  // Every process in a bare host is the test's: its sshd and what the rig started through it.
  const pids = namespaces.flatMap(namespacePids);
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  const deadline = Date.now() + 10_000;
  while (pids.some((p) => existsSync(`/proc/${p}`) && !/\) Z /.test(readFileSync(`/proc/${p}/stat`, 'utf8'))) && Date.now() < deadline) spawnSync('sleep', ['0.1']);
  for (const ns of namespaces) run('ip', ['netns', 'del', ns], true);
  for (const line of run('ip', ['-o', 'link', 'show'], true).split('\n')) {
    const link = /^\d+:\s+([^:@\s]+)/.exec(line)?.[1];
    if (link?.startsWith(BARE_PREFIX)) run('ip', ['link', 'del', link], true);
  }
  if (run('getent', ['passwd', BARE_USER], true).trim()) run('userdel', ['--remove', BARE_USER], true);
  rmSync(BARE_SUDOERS, { force: true });
  for (const root of BARE_ROOTS) rmSync(root, { recursive: true, force: true });
  for (const d of readdirSync(os.tmpdir())) if (d.startsWith('cqb-hosts-')) rmSync(path.join(os.tmpdir(), d), { recursive: true, force: true });
}
