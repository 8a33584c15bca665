/**
 * The inventory: real machines (or any hosts reachable over SSH) described in YAML.
 *
 *   hosts:
 *     - name: broker-1            # [a-z0-9-], unique
 *       address: 10.0.0.31        # how the operations host and the other hosts reach it
 *       roles: [broker]           # worker | coordinator | broker | store
 *       ssh:
 *         user: root
 *         port: 22                # default 22
 *         key: ~/.ssh/id_ed25519  # private key on the operations host
 *         knownHosts: ~/.ssh/known_hosts   # pinned host keys; unknown or changed keys are refused
 *         sudo: true              # log in as a non-root user, run every command through sudo -n
 *       dataDir: /opt/clink-qual  # the host's "disk" for everything the rig puts there
 *
 * Needs at least one worker, exactly one coordinator, one or at least three brokers, and
 * exactly one store. A user other than root needs `sudo: true` (passwordless sudo): the rig
 * runs iptables, signals and services as root. Relative paths are relative to the inventory file. Every error names
 * the file, the line and the field: `inventory.yaml:7: hosts[2].ssh.port: must be an integer`.
 */
import { MAX_CAMPAIGN_BYTES, readBoundedText } from '../lib/read-bounded.ts';
import { isIP } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Node as YamlNode, type YAMLMap } from 'yaml';
import { QualError } from '../lib/errors.ts';
import { ROLES, type HostSpec, type Role } from './types.ts';

interface Problem {
  line: number;
  field: string;
  message: string;
}

function expand(p: string, baseDir: string): string {
  if (p === '~' || p.startsWith('~/')) return path.join(os.homedir(), p.slice(1));
  return path.resolve(baseDir, p);
}

/** Parses inventory text; `file` is used in messages and to resolve relative paths. */
export function parseInventory(text: string, file: string): HostSpec[] {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: false });
  const label = path.basename(file);
  const baseDir = path.dirname(path.resolve(file));
  const problems: Problem[] = [];
  const lineOf = (node: unknown, fallback = 1): number => {
    const r = (node as { range?: [number, number, number] } | null)?.range;
    return r ? lc.linePos(r[0]).line : fallback;
  };
  const fail = (node: unknown, field: string, message: string, fallback?: number) => problems.push({ line: lineOf(node, fallback), field, message });

  for (const e of doc.errors) problems.push({ line: e.linePos?.[0]?.line ?? 1, field: '(yaml)', message: e.message.split('\n')[0]! });
  const hosts: HostSpec[] = [];
  if (!doc.errors.length) {
    const root = doc.contents;
    if (!isMap(root)) fail(root, '(top level)', 'must be a mapping with a `hosts` list');
    else {
      for (const pair of root.items) {
        const k = isScalar(pair.key) ? String(pair.key.value) : '';
        if (k !== 'hosts') fail(pair.key, k || '(key)', 'unknown field (expected: hosts)');
      }
      const list = root.get('hosts', true) as YamlNode | undefined;
      if (!list) fail(root, 'hosts', 'is required (a list of hosts)');
      else if (!isSeq(list)) fail(list, 'hosts', 'must be a list');
      else {
        // hosts[k] is the inventory's hosts[listIndex[k]] (a host that does not parse is left out).
        const listIndex: number[] = [];
        list.items.forEach((item, i) => {
          const at = `hosts[${i}]`;
          if (!isMap(item)) {
            fail(item, at, 'must be a mapping (name, address, roles, ssh, dataDir)');
            return;
          }
          const h = parseHost(item as YAMLMap, at, baseDir, fail);
          if (h) {
            hosts.push(h);
            listIndex.push(i);
          }
        });
        const seen = new Map<string, number>();
        const disks = new Map<string, number>();
        hosts.forEach((h, k) => {
          const i = listIndex[k]!;
          const item = list.items[i] as YAMLMap;
          if (seen.has(h.name)) fail(item.get('name', true), `hosts[${i}].name`, `duplicate host name '${h.name}' (also hosts[${seen.get(h.name)}])`);
          else seen.set(h.name, i);
          // Two hosts on one machine with one dataDir would wipe each other's data (rig install clears <dataDir>/minio-data).
          const disk = `${h.address}\0${h.dataDir}`;
          if (disks.has(disk)) fail(item.get('dataDir', true), `hosts[${i}].dataDir`, `hosts[${disks.get(disk)}] has the same address (${h.address}) and dataDir (${h.dataDir}): each host needs a dataDir of its own`);
          else {
            // One inside the other on one machine: the outer host's clean-up would reach into the inner one's data.
            const o = hosts.findIndex((x, m) => m < k && x.address === h.address && (x.dataDir.startsWith(`${h.dataDir}/`) || h.dataDir.startsWith(`${x.dataDir}/`)));
            if (o >= 0) fail(item.get('dataDir', true), `hosts[${i}].dataDir`, `hosts[${listIndex[o]}] has the same address (${h.address}) and its dataDir (${hosts[o]!.dataDir}) and this one (${h.dataDir}) lie one inside the other: each host needs a dataDir of its own`);
            disks.set(disk, i);
          }
        });
        if (!problems.length) {
          const count = (r: Role) => hosts.filter((h) => h.roles.includes(r)).length;
          const need: [Role, (n: number) => boolean, string][] = [
            ['worker', (n) => n >= 1, 'at least 1'],
            ['coordinator', (n) => n === 1, 'exactly 1'],
            ['broker', (n) => n === 1 || n >= 3, '1 or at least 3'],
            ['store', (n) => n === 1, 'exactly 1'],
          ];
          for (const [role, ok, what] of need) if (!ok(count(role))) fail(list, 'hosts', `needs ${what} host(s) with role ${role} (found ${count(role)})`);
        }
      }
    }
  }
  if (problems.length) {
    problems.sort((a, b) => a.line - b.line);
    throw new QualError('BAD_INPUT_FILE', problems.map((p) => `${label}:${p.line}: ${p.field}: ${p.message}`).join('\n'), { file, problems });
  }
  return hosts;
}

const HOST_LABEL = /^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;

/**
 * An address reaches shell commands and iptables rules: it must be an IPv4 or IPv6
 * literal, or a host name (RFC 1123 labels: no leading dash, so never an option like -j).
 */
export function isHostAddress(s: string): boolean {
  if (isIP(s) !== 0) return true;
  if (s.length > 253 || /^[\d.]+$/.test(s)) return false; // all digits and dots: a bad IPv4 literal
  return s.split('.').every((l) => HOST_LABEL.test(l));
}

/**
 * System directories a dataDir may not be (the rig removes and recreates things under its
 * dataDir, e.g. `rm -rf <dataDir>/minio-data`): the root, its top-level system folders, and
 * /home, /usr/local, /var/lib, /var/log themselves. A folder inside one of them
 * (/opt/clink-qual, /home/qa/clink, /var/lib/clink-qual) is fine, except inside SYSTEM_TREES.
 */
export const SYSTEM_DIRS: readonly string[] = [
  '/', '/bin', '/boot', '/dev', '/etc', '/home', '/lib', '/lib32', '/lib64', '/libx32', '/media', '/mnt', '/opt', '/proc', '/root', '/run', '/sbin', '/srv', '/sys', '/tmp', '/usr', '/var',
  '/usr/bin', '/usr/lib', '/usr/local', '/usr/sbin', '/usr/share', '/var/lib', '/var/log', '/var/tmp',
];

/**
 * Trees no dataDir may sit anywhere inside: the kernel's own filesystems (/proc, /sys, /dev:
 * no disk at all), the boot files, the configuration and the system's programs and libraries.
 */
export const SYSTEM_TREES: readonly string[] = ['/proc', '/sys', '/dev', '/boot', '/etc', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/usr/bin', '/usr/sbin', '/usr/lib'];

/**
 * Why a dataDir is refused, or null when it is fine. The path is first read as the system
 * reads it (`/etc/`, `//etc`, `/opt/../etc` are /etc), so a system directory is named as
 * such however it is spelled; then it must be an absolute path of [A-Za-z0-9._-] segments,
 * none '.' or '..', with no trailing slash, since it reaches shell commands as written.
 */
export function dataDirProblem(s: string): string | null {
  if (s.startsWith('/')) {
    const seen = path.posix.normalize(s).replace(/(.)\/+$/, '$1');
    const own = 'use a folder of its own (e.g. /opt/clink-qual or /srv/clink)';
    if (SYSTEM_DIRS.includes(seen)) return `is the system directory ${seen}: the rig deletes and recreates things under its dataDir; ${own}`;
    const tree = SYSTEM_TREES.find((d) => seen.startsWith(`${d}/`));
    if (tree) return `is inside the system directory ${tree}: the rig writes and deletes things under its dataDir; ${own}`;
  }
  if (!/^(\/[A-Za-z0-9._-]+)+$/.test(s) || s.split('/').slice(1).some((seg) => seg === '.' || seg === '..')) {
    return "must be an absolute path of letters, digits, '.', '_' and '-' (no '.' or '..' segment, no '//', no trailing /)";
  }
  return null;
}

/** A dataDir the rig may use: see dataDirProblem. */
export function isSafeDataDir(s: string): boolean {
  return dataDirProblem(s) === null;
}

function parseHost(m: YAMLMap, at: string, baseDir: string, fail: (node: unknown, field: string, message: string, fallback?: number) => void): HostSpec | null {
  const known = new Set(['name', 'address', 'roles', 'ssh', 'dataDir']);
  for (const pair of m.items) {
    const k = isScalar(pair.key) ? String(pair.key.value) : '';
    if (!known.has(k)) fail(pair.key, `${at}.${k}`, `unknown field (expected one of: ${[...known].join(', ')})`);
  }
  let ok = true;
  const str = (map: YAMLMap, key: string, field: string, opts: { required?: boolean; pattern?: RegExp; test?: (v: string) => boolean; patternMsg?: string; problem?: (v: string) => string | null } = {}): string | undefined => {
    const node = map.get(key, true) as YamlNode | undefined;
    if (node === undefined || (isScalar(node) && node.value === null)) {
      if (opts.required ?? true) {
        fail(map, field, 'is required');
        ok = false;
      }
      return undefined;
    }
    if (!isScalar(node) || typeof node.value !== 'string' || node.value === '') {
      fail(node, field, 'must be a non-empty string');
      ok = false;
      return undefined;
    }
    if ((opts.pattern && !opts.pattern.test(node.value)) || (opts.test && !opts.test(node.value))) {
      fail(node, field, opts.patternMsg ?? `must match ${opts.pattern}`);
      ok = false;
      return undefined;
    }
    const problem = opts.problem?.(node.value);
    if (problem) {
      fail(node, field, problem);
      ok = false;
      return undefined;
    }
    return node.value;
  };
  const name = str(m, 'name', `${at}.name`, { pattern: /^[a-z0-9][a-z0-9-]{0,30}$/, patternMsg: 'must be lower-case letters, digits and dashes (at most 31)' });
  const address = str(m, 'address', `${at}.address`, { test: isHostAddress, patternMsg: 'must be an IPv4 or IPv6 address or a host name (letters, digits, dashes and dots)' });
  const dataDir = str(m, 'dataDir', `${at}.dataDir`, { problem: dataDirProblem });

  const roles: Role[] = [];
  const rolesNode = m.get('roles', true) as YamlNode | undefined;
  if (rolesNode === undefined) {
    fail(m, `${at}.roles`, 'is required (a list of: worker, coordinator, broker, store)');
    ok = false;
  } else if (!isSeq(rolesNode) || !rolesNode.items.length) {
    fail(rolesNode, `${at}.roles`, 'must be a non-empty list of: worker, coordinator, broker, store');
    ok = false;
  } else {
    rolesNode.items.forEach((r, j) => {
      const v = isScalar(r) ? r.value : undefined;
      if (typeof v !== 'string' || !(ROLES as readonly string[]).includes(v)) {
        fail(r, `${at}.roles[${j}]`, `must be one of: ${ROLES.join(', ')}`);
        ok = false;
      } else if (!roles.includes(v as Role)) roles.push(v as Role);
    });
  }

  const sshNode = m.get('ssh', true) as YamlNode | undefined;
  let ssh: HostSpec['ssh'] | undefined;
  if (sshNode === undefined) {
    fail(m, `${at}.ssh`, 'is required (user, port, key, knownHosts, sudo)');
    ok = false;
  } else if (!isMap(sshNode)) {
    fail(sshNode, `${at}.ssh`, 'must be a mapping (user, port, key, knownHosts, sudo)');
    ok = false;
  } else {
    const sm = sshNode as YAMLMap;
    const knownSsh = new Set(['user', 'port', 'key', 'knownHosts', 'sudo']);
    for (const pair of sm.items) {
      const k = isScalar(pair.key) ? String(pair.key.value) : '';
      if (!knownSsh.has(k)) {
        fail(pair.key, `${at}.ssh.${k}`, `unknown field (expected one of: ${[...knownSsh].join(', ')})`);
        ok = false;
      }
    }
    const user = str(sm, 'user', `${at}.ssh.user`, { pattern: /^[a-z_][a-z0-9_-]*$/, patternMsg: 'must be a user name' });
    const key = str(sm, 'key', `${at}.ssh.key`);
    const knownHosts = str(sm, 'knownHosts', `${at}.ssh.knownHosts`);
    let port = 22;
    const portNode = sm.get('port', true) as YamlNode | undefined;
    if (portNode !== undefined) {
      const v = isScalar(portNode) ? portNode.value : undefined;
      if (typeof v !== 'number' || !Number.isInteger(v)) {
        fail(portNode, `${at}.ssh.port`, 'must be an integer');
        ok = false;
      } else if (v < 1 || v > 65535) {
        fail(portNode, `${at}.ssh.port`, 'must be between 1 and 65535');
        ok = false;
      } else port = v;
    }
    let sudo: boolean | undefined;
    const sudoNode = sm.get('sudo', true) as YamlNode | undefined;
    if (sudoNode !== undefined) {
      const v = isScalar(sudoNode) ? sudoNode.value : undefined;
      if (typeof v !== 'boolean') {
        fail(sudoNode, `${at}.ssh.sudo`, 'must be true or false');
        ok = false;
      } else sudo = v;
    }
    // Without sudo a user other than root could run nothing the rig needs (iptables, signals to services, the services themselves).
    if (user && user !== 'root' && sudo === false) {
      fail(sudoNode, `${at}.ssh.sudo`, `must be true for user ${user}: the rig runs iptables, signals and services as root (passwordless sudo), or log in as root`);
      ok = false;
    } else if (user && user !== 'root' && sudoNode === undefined) {
      fail(sm.get('user', true), `${at}.ssh.user`, `${user} is not root: add sudo: true (the user needs passwordless sudo; the rig runs iptables, signals and services as root), or log in as root`);
      ok = false;
    }
    if (user && key && knownHosts) ssh = { user, port, privateKeyPath: expand(key, baseDir), knownHostsPath: expand(knownHosts, baseDir), ...(sudo ? { sudo: true } : {}) };
  }
  if (!ok || !name || !address || !dataDir || !ssh) return null;
  return { name, address, roles, ssh, dataDir };
}

export function readInventory(file: string): HostSpec[] {
  // A regular file of at most 1 MiB, like a campaign: not a FIFO, not /dev/zero.
  return parseInventory(readBoundedText(file, { maxBytes: MAX_CAMPAIGN_BYTES, what: 'inventory' }), file);
}
