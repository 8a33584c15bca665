/**
 * `clink-qual doctor`: read-only checks of what the local rig needs, one line each with its
 * fix. Nothing here changes the machine: it runs only listing/version commands (`ip netns
 * list`, `ip -o -4 addr show`, `iptables --version`, `java -version`, ...), reads
 * /proc/meminfo, statfs, the cache manifest and the files it names (hashed as streams),
 * and the rig's state file. It never creates a namespace, a link or a file.
 *
 * The pure parts (version parsing, the subnet clash, the manifest check against a
 * directory) are exported for the unit tests.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync, statfsSync } from 'node:fs';
import path from 'node:path';
import { cacheDir, repoRoot, runsDir, stateDir } from '../lib/paths.ts';
import { sha256Dir, sha256File, type Manifest } from './install.ts';

export type CheckStatus = 'ok' | 'warn' | 'fail';

export interface CheckResult {
  name: string;
  status: CheckStatus;
  detail: string;
  /** What to do about it; set when the status is not ok. */
  fix?: string;
}

export interface DoctorReport {
  ok: boolean;
  checks: CheckResult[];
}

/** The rig's subnet and bridge (rig/local.ts SUBNET, BRIDGE); repeated here so doctor loads nothing of the rig. */
export const RIG_SUBNET = '10.231.0.0/24';
export const RIG_BRIDGE = 'cq-br0';
const NS_PREFIX = 'cq-';

/**
 * What the rig needs, from measured figures: docs/flink.md measured the whole Flink rig at
 * 2,865 MiB resident (Kafka brokers ~340 MiB each, MinIO ~125 MiB, the engine's
 * processes, the harness); the Clink rig needs less. The cache holds Kafka, MinIO, Flink
 * (~300 MiB measured) and SeaweedFS (a ~230 MB binary), and a run's evidence is a few MiB,
 * a long campaign's up to hundreds.
 */
export const NEEDS = {
  memoryBytes: 3 * 1024 ** 3,
  cacheDiskBytes: 2 * 1024 ** 3,
  runsDiskBytes: 1 * 1024 ** 3,
} as const;

// ---------------------------------------------------------------- pure parts

/** The major version from `java -version`'s output ("17.0.9", "1.8.0_392" -> 8, "21"). */
export function parseJavaMajor(output: string): number | undefined {
  const m = /version "([^"]+)"/.exec(output) ?? /^(?:openjdk|java)\s+(\d[\w.]*)/m.exec(output);
  if (!m) return undefined;
  const parts = m[1]!.split(/[._-]/).map((x) => Number.parseInt(x, 10));
  if (!Number.isFinite(parts[0])) return undefined;
  return parts[0] === 1 && parts.length > 1 ? parts[1] : parts[0];
}

/** MemAvailable from /proc/meminfo, in bytes. */
export function parseMemAvailable(meminfo: string): number | undefined {
  const m = /^MemAvailable:\s+(\d+)\s*kB/m.exec(meminfo);
  return m ? Number(m[1]) * 1024 : undefined;
}

function ipToInt(ip: string): number | undefined {
  const p = ip.split('.');
  if (p.length !== 4) return undefined;
  let n = 0;
  for (const x of p) {
    if (!/^\d{1,3}$/.test(x) || Number(x) > 255) return undefined;
    n = n * 256 + Number(x);
  }
  return n;
}

/** [first, last] address of a CIDR (a bare address is a /32). */
export function cidrRange(cidr: string): [number, number] | undefined {
  const [ip, bitsText] = cidr.split('/');
  const base = ipToInt(ip ?? '');
  const bits = bitsText === undefined ? 32 : Number(bitsText);
  if (base === undefined || !Number.isInteger(bits) || bits < 0 || bits > 32) return undefined;
  const size = 2 ** (32 - bits);
  const first = Math.floor(base / size) * size;
  return [first, first + size - 1];
}

export function cidrOverlap(a: string, b: string): boolean {
  const ra = cidrRange(a);
  const rb = cidrRange(b);
  if (!ra || !rb) return false;
  return ra[0] <= rb[1] && rb[0] <= ra[1];
}

export interface HostNet {
  dev: string;
  cidr: string;
  source: 'address' | 'route';
}

/** Addresses from `ip -o -4 addr show`: "2: eth0    inet 10.0.0.5/24 brd ... scope global eth0". */
export function parseIpAddr(out: string): HostNet[] {
  const res: HostNet[] = [];
  for (const line of out.split('\n')) {
    const m = /^\d+:\s+(\S+)\s+inet\s+(\S+)/.exec(line.trim());
    if (m) res.push({ dev: m[1]!.replace(/@.*$/, ''), cidr: m[2]!, source: 'address' });
  }
  return res;
}

/** Routes from `ip -4 route show`: "10.231.0.0/24 dev cq-br0 proto kernel ...", "default via ... dev eth0". */
export function parseIpRoute(out: string): HostNet[] {
  const res: HostNet[] = [];
  for (const line of out.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (!f[0]) continue;
    let i = 0;
    if (['unicast', 'local', 'broadcast', 'blackhole', 'unreachable', 'prohibit', 'throw'].includes(f[0])) i = 1;
    const dst = f[i]!;
    if (dst === 'default') continue;
    const devAt = f.indexOf('dev');
    res.push({ dev: devAt >= 0 ? (f[devAt + 1] ?? '') : '', cidr: dst, source: 'route' });
  }
  return res;
}

/** The host's addresses and routes that overlap the rig's subnet, except the rig's own bridge. */
export function subnetClashes(nets: HostNet[], subnet = RIG_SUBNET, ownDev = RIG_BRIDGE): HostNet[] {
  return nets.filter((n) => n.dev !== ownDev && cidrOverlap(n.cidr, subnet));
}

export interface ManifestEntryCheck {
  name: string;
  path: string;
  status: 'ok' | 'missing' | 'mismatch' | 'unpinned';
}

/** This checkout's pinned Node binary: the one `rig up` deploys (see install.ts node()). */
export const checkoutNode = (root: string = repoRoot): string => path.join(root, 'node_modules', 'node', 'bin', 'node');

/**
 * Each manifest component against the bytes on disk: a file by its sha256, a directory by
 * install.ts's sha256Dir (the same digest `rig install` recorded). Streams every file.
 * The cache is shared by every checkout but the Node binary lives in each checkout's
 * node_modules, so the `node` entry (written by whichever checkout installed last, perhaps
 * one since removed) is checked against `nodeBin`, this checkout's binary: same pinned
 * version, same bytes.
 */
export async function checkManifestFiles(manifest: Manifest, nodeBin: string = checkoutNode()): Promise<ManifestEntryCheck[]> {
  const out: ManifestEntryCheck[] = [];
  for (const c of manifest.components) {
    const p = c.name === 'node' ? nodeBin : c.path;
    if (!c.sha256) {
      out.push({ name: c.name, path: p, status: 'unpinned' });
      continue;
    }
    if (!path.isAbsolute(p) || !existsSync(p)) {
      out.push({ name: c.name, path: p, status: 'missing' });
      continue;
    }
    const got = statSync(p).isDirectory() ? await sha256Dir(p) : await sha256File(p);
    out.push({ name: c.name, path: p, status: got === c.sha256 ? 'ok' : 'mismatch' });
  }
  return out;
}

/** The rig's state from what is there: state.json, cq-* namespaces and links. */
export function rigStateFrom(stateFilePresent: boolean, namespaces: string[], links: string[]): 'up' | 'down' | 'leftovers' {
  const traces = namespaces.length + links.length;
  if (stateFilePresent && namespaces.length > 0) return 'up';
  if (!stateFilePresent && traces === 0) return 'down';
  return 'leftovers';
}

export function gib(bytes: number): string {
  return `${(bytes / 1024 ** 3).toFixed(1)} GiB`;
}

// ---------------------------------------------------------------- the checks

function sh(cmd: string, args: string[]): { ok: boolean; out: string; missing: boolean } {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 15_000 });
  const missing = (r.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
  return { ok: !r.error && r.status === 0, out: `${r.stdout ?? ''}${r.stderr ?? ''}`, missing };
}

/** The nearest existing directory at or above p (statfs needs one). */
function existingAncestor(p: string): string {
  let d = path.resolve(p);
  while (!existsSync(d) && path.dirname(d) !== d) d = path.dirname(d);
  return d;
}

function freeBytes(p: string): number {
  const s = statfsSync(existingAncestor(p));
  return Number(s.bavail) * Number(s.bsize);
}

export interface DoctorOptions {
  /** Check the cache manifest's sha256s (reads every cached file). Default true. */
  hashes?: boolean;
}

export async function runDoctor(opts: DoctorOptions = {}): Promise<DoctorReport> {
  const checks: CheckResult[] = [];
  const add = (c: CheckResult) => checks.push(c);

  const uid = process.getuid?.();
  add(uid === 0 ? { name: 'root', status: 'ok', detail: 'running as root' } : { name: 'root', status: 'fail', detail: `running as uid ${uid ?? '?'}`, fix: 'run as root (sudo ./clink-qual ...): the local rig creates namespaces, links and iptables rules' });

  const netns = sh('ip', ['netns', 'list']);
  const namespaces = netns.ok ? netns.out.split('\n').map((l) => l.trim().split(/\s+/)[0] ?? '').filter((n) => n.startsWith(NS_PREFIX)) : [];
  add(netns.ok
    ? { name: 'netns', status: 'ok', detail: 'ip netns list works' }
    : { name: 'netns', status: 'fail', detail: netns.missing ? 'ip (iproute2) not found' : `ip netns list failed: ${netns.out.trim().split('\n')[0] ?? ''}`, fix: netns.missing ? "apt-get install iproute2 (or 'clink-qual rig install')" : 'run as root on a kernel with network namespaces (a container needs CAP_SYS_ADMIN / --privileged)' });

  const ipt = sh('iptables', ['--version']);
  add(ipt.ok
    ? { name: 'iptables', status: 'ok', detail: ipt.out.trim().split('\n')[0]! }
    : { name: 'iptables', status: 'fail', detail: 'iptables not found', fix: "apt-get install iptables (or 'clink-qual rig install')" });

  const java = sh('java', ['-version']);
  const major = java.ok ? parseJavaMajor(java.out) : undefined;
  add(major !== undefined && major >= 17
    ? { name: 'java', status: 'ok', detail: `Java ${major}` }
    : { name: 'java', status: 'fail', detail: java.missing ? 'java not found' : `Java ${major ?? 'unknown version'}`, fix: 'install a JDK 17 or newer (apt-get install openjdk-17-jdk-headless) and put java on the PATH' });

  for (const [tool, args, pkg] of [['go', ['version'], 'golang-go (Go builds MinIO and SeaweedFS)'], ['mvn', ['-v'], 'maven (Maven fetches Kafka and Flink)']] as const) {
    const r = sh(tool, [...args]);
    add(r.ok
      ? { name: tool, status: 'ok', detail: r.out.trim().split('\n')[0]!.replace(/\x1b\[[0-9;]*m/g, '') }
      : { name: tool, status: 'fail', detail: `${tool} not found`, fix: `install ${pkg} and put ${tool} on the PATH` });
  }

  const stateFile = path.join(stateDir(), 'rig.json'); // rig/state.ts rigStatePath()
  const linksOut = sh('ip', ['-o', 'link', 'show']);
  const links = linksOut.out.split('\n').map((l) => /^\d+:\s+([^:@\s]+)/.exec(l)?.[1] ?? '').filter((n) => n.startsWith(NS_PREFIX));
  const rig = rigStateFrom(existsSync(stateFile), namespaces, links);

  const cache = cacheDir();
  const cacheFree = freeBytes(cache);
  const cacheNeed = existsSync(path.join(cache, 'manifest.json')) ? 0 : NEEDS.cacheDiskBytes;
  const runsFree = freeBytes(runsDir());
  const diskOk = cacheFree >= cacheNeed && runsFree >= NEEDS.runsDiskBytes;
  add(diskOk
    ? { name: 'disk', status: 'ok', detail: `${gib(cacheFree)} free for the cache (${cache}), ${gib(runsFree)} for runs/ (${runsDir()})` }
    : { name: 'disk', status: 'fail', detail: `${gib(cacheFree)} free for the cache (needs ${gib(cacheNeed)}), ${gib(runsFree)} for runs/ (needs ${gib(NEEDS.runsDiskBytes)})`, fix: 'free disk space, or move the cache/runs with CLINK_QUAL_CACHE / CLINK_QUAL_RUNS' });

  let memAvail: number | undefined;
  try {
    memAvail = parseMemAvailable(readFileSync('/proc/meminfo', 'utf8'));
  } catch {
    memAvail = undefined;
  }
  if (memAvail === undefined) add({ name: 'memory', status: 'warn', detail: 'cannot read MemAvailable from /proc/meminfo', fix: `make sure about ${gib(NEEDS.memoryBytes)} are free for the rig` });
  else if (memAvail >= NEEDS.memoryBytes) add({ name: 'memory', status: 'ok', detail: `${gib(memAvail)} available (the rig needs about ${gib(NEEDS.memoryBytes)})` });
  else if (rig === 'up') add({ name: 'memory', status: 'warn', detail: `${gib(memAvail)} available with the rig up (it already holds its share)`, fix: 'close other memory users if runs abort' });
  else add({ name: 'memory', status: 'fail', detail: `${gib(memAvail)} available; the rig needs about ${gib(NEEDS.memoryBytes)}`, fix: 'free memory (stop other services) or use a larger machine' });

  const addrs = sh('ip', ['-o', '-4', 'addr', 'show']);
  const routes = sh('ip', ['-4', 'route', 'show']);
  if (!addrs.ok || !routes.ok) {
    add({ name: 'subnet', status: 'warn', detail: 'could not list the host\'s addresses and routes', fix: 'install iproute2' });
  } else {
    const clashes = subnetClashes([...parseIpAddr(addrs.out), ...parseIpRoute(routes.out)]);
    add(clashes.length === 0
      ? { name: 'subnet', status: 'ok', detail: `no address or route of the host overlaps ${RIG_SUBNET}` }
      : { name: 'subnet', status: 'fail', detail: `${RIG_SUBNET} clashes with ${clashes.map((c) => `${c.source} ${c.cidr} on ${c.dev || '?'}`).join(', ')}`, fix: `move that network off ${RIG_SUBNET}, or use real hosts with 'rig up --inventory FILE'` });
  }

  const manifestFile = path.join(cache, 'manifest.json');
  if (!existsSync(manifestFile)) {
    add({ name: 'cache', status: 'fail', detail: `nothing installed yet (${manifestFile} is missing)`, fix: "run 'clink-qual rig install' (smoke does it)" });
  } else {
    let manifest: Manifest | undefined;
    try {
      manifest = JSON.parse(readFileSync(manifestFile, 'utf8')) as Manifest;
      if (!Array.isArray(manifest.components)) throw new Error('no components list');
    } catch (err) {
      add({ name: 'cache', status: 'fail', detail: `${manifestFile} is unreadable: ${(err as Error).message}`, fix: "run 'clink-qual rig install' to rewrite it" });
    }
    if (manifest) {
      if (opts.hashes === false) {
        add({ name: 'cache', status: 'ok', detail: `${manifest.components.length} components in the manifest (sha256s not checked: --no-hashes)` });
      } else {
        const res = await checkManifestFiles(manifest);
        const bad = res.filter((r) => r.status === 'missing' || r.status === 'mismatch');
        add(bad.length === 0
          ? { name: 'cache', status: 'ok', detail: `${res.length} components match their sha256 (${manifestFile})` }
          : { name: 'cache', status: 'fail', detail: bad.map((b) => `${b.name} ${b.status} (${b.path})`).join('; '), fix: "run 'clink-qual rig install': it reinstalls what does not match" });
      }
    }
  }

  if (rig === 'up') add({ name: 'rig', status: 'ok', detail: `up (${namespaces.length} cq-* namespaces, ${stateFile}); 'clink-qual rig status' checks its services` });
  else if (rig === 'down') add({ name: 'rig', status: 'ok', detail: 'down, nothing left behind' });
  else add({ name: 'rig', status: 'fail', detail: existsSync(stateFile) ? `leftovers: ${stateFile} but no cq-* namespace` : `leftovers: ${[...namespaces, ...links].join(' ')} without ${stateFile} (or a rig under another CLINK_QUAL_STATE)`, fix: "run 'clink-qual rig down' to clear them" });

  return { ok: checks.every((c) => c.status !== 'fail'), checks };
}

export function renderDoctor(r: DoctorReport): string {
  const mark = { ok: 'ok  ', warn: 'warn', fail: 'FAIL' } as const;
  return r.checks.map((c) => `${mark[c.status]}  ${c.name.padEnd(9)} ${c.detail}${c.fix ? ` -- fix: ${c.fix}` : ''}`).join('\n');
}

/** Checks that `smoke` repairs itself (it installs the cache) become warnings before smoke. */
export const SMOKE_FIXES: ReadonlySet<string> = new Set(['cache', 'iptables']);

/** Smoke's `rig install` brings the Debian packages (iptables, iproute2) and the cache; a missing `ip` is for it to install. */
function smokeFixes(c: CheckResult): boolean {
  return SMOKE_FIXES.has(c.name) || (c.name === 'netns' && c.detail.startsWith('ip (iproute2) not found'));
}

export function forSmoke(r: DoctorReport): DoctorReport {
  const checks = r.checks.map((c) => (c.status === 'fail' && smokeFixes(c) ? { ...c, status: 'warn' as const, fix: `${c.fix ?? ''} (smoke does this now)`.trim() } : c));
  return { ok: checks.every((c) => c.status !== 'fail'), checks };
}
