/**
 * `doctor --inventory FILE`: read-only checks, over SSH with pinned host keys, that every
 * inventory host has what the rig and the engine will need, before anything is touched.
 * One result per host and check, PASS or FAIL with the fix named:
 *
 * - sudo: for a sudo login (ssh.sudo), that sudo runs commands as root without a password
 *   (every later command goes through it, rig/ssh.ts);
 * - java: Java 17 or later where it runs (Kafka on brokers; Flink on engine hosts);
 * - iptables: with the `statistic` and `comment` matches (packet loss, tagged partition rules);
 * - faketime: libfaketime on engine hosts, when the campaign schedules clock steps;
 * - disk: free space in `dataDir` (or its nearest existing parent) against DISK_NEEDS;
 * - disk-full: on a host the campaign's disk-full faults target, the state directory on a
 *   filesystem of its own (rig/disk.ts ownFilesystemRefusal; the fault refuses otherwise);
 * - clock: the host's wall clock against the operations host's (the reading with the shortest
 *   of CLOCK_SAMPLES round trips), not certainly further than CLOCK_BOUND_MS;
 * - ports: each port the host's roles will listen on is free (or held by the rig itself).
 *
 * Every remote command only reads (`java -version`, `iptables -m statistic --help`, `df`,
 * `date`, `ss -ltnpH`, `ls`): nothing is created, started or changed on a host. Each
 * check's parsing is a pure function, tested against outputs captured from a real machine
 * (test/fixtures/inventory-doctor/).
 */
import path from 'node:path';
import { QualError } from '../lib/errors.ts';
import { mountProbeCommand, ownFilesystemRefusalFrom } from './disk.ts';
import { parseJavaMajor } from './doctor.ts';
import { hostStateDir, MAX_FILL_BYTES } from './state-fs.ts';
import { shQuote } from './process.ts';
import type { Remote } from './remote.ts';
import { SEAWEEDFS_PORTS, STORE_CONSOLE_PORT, STORE_PORT } from './store.ts';
import { CONTROLLER_PORT, KAFKA_PORT } from './kafka.ts';
import type { HostSpec, Role, StoreKind } from './types.ts';

/** The Java Kafka 4 and the Flink job and agent (compiled with --release 17) need. */
export const MIN_JAVA_MAJOR = 17;

/**
 * How far a host's clock may be from the operations host's. lib/checkpoint-clock.ts
 * believes an engine's checkpoint stamp only up to 1 s after the harness's sighting of it:
 * a host ahead by a second or more has every stamp disbelieved. Half of that second is left
 * for the sighting's own latency. NTP or chrony keep hosts within milliseconds.
 */
export const CLOCK_BOUND_MS = 500;

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

/**
 * Free space each role needs in dataDir (a host with several roles needs the sum), sized
 * against QUAL-03's workload: 1,040 events/s for 7,920 s is 8.24 M events; a canonical line
 * (oracle/generator.ts) is about 130 bytes (a 48-96 character payload plus id, p, seq, key),
 * so one copy of the input or of the committed output is about 1.07 GB.
 * - broker: the input topic, a whole copy on each broker at replication 3 (1.07 GB, plus
 *   Kafka's index and segment slack) and Kafka's jars (43 MiB measured): 1.5 GiB;
 * - store: the committed output (1.07 GB), uploads in flight, and the store's binary
 *   (SeaweedFS 222 MiB, MinIO 143 MiB measured in the cache): 2 GiB;
 * - coordinator, worker: Node (121 MiB) or Flink's jars (171 MiB measured), the engine's
 *   journals, checkpoint log and service logs: 512 MiB.
 */
export const DISK_NEEDS: Readonly<Record<Role, number>> = { broker: 1.5 * GiB, store: 2 * GiB, coordinator: 512 * MiB, worker: 512 * MiB };

/** A port a host of a role will listen on, and what for. */
export interface PortNeed {
  role: Role;
  port: number;
  what: string;
}

/** What an engine needs on the hosts it runs on (engine/host-needs.ts has each engine's). */
export interface EngineHostNeeds {
  /** The engine's name, for the messages. */
  engine: string;
  /** Roles whose hosts need Java (MIN_JAVA_MAJOR or later) for the engine. */
  javaRoles: readonly Role[];
  ports: readonly PortNeed[];
}

/** What the checks are against: the store the rig will run, the engine (when known), whether clock steps are scheduled. */
export interface InventoryNeeds {
  store: StoreKind;
  /** The engines whose needs are checked (one for a campaign; none for a bare `rig up`). */
  engines: readonly EngineHostNeeds[];
  clockSteps: boolean;
  /** Hosts the campaign's disk-full faults fill: each must have its state directory on a filesystem of its own ('*': every worker). */
  diskFullTargets?: readonly string[];
}

/** The ports the rig itself (Kafka, the store) listens on, by the store it runs. */
export function rigPorts(store: StoreKind): PortNeed[] {
  const ports: PortNeed[] = [
    { role: 'broker', port: KAFKA_PORT, what: 'Kafka clients' },
    { role: 'broker', port: CONTROLLER_PORT, what: 'the KRaft controller' },
    { role: 'store', port: STORE_PORT, what: `${store === 'minio' ? 'MinIO' : "SeaweedFS's"} S3 API` },
  ];
  if (store === 'minio') ports.push({ role: 'store', port: STORE_CONSOLE_PORT, what: "MinIO's console" });
  else {
    for (const [server, port] of Object.entries(SEAWEEDFS_PORTS)) {
      ports.push({ role: 'store', port, what: `SeaweedFS's ${server}` }, { role: 'store', port: port + 10_000, what: `SeaweedFS's ${server} gRPC` });
    }
  }
  return ports;
}

export interface HostCheck {
  host: string;
  check: 'ssh' | 'sudo' | 'java' | 'iptables' | 'faketime' | 'disk' | 'disk-full' | 'clock' | 'ports';
  ok: boolean;
  detail: string;
  /** What to do, when not ok. */
  fix?: string;
}

export interface InventoryDoctorReport {
  ok: boolean;
  checks: HostCheck[];
}

type Verdict = Pick<HostCheck, 'ok' | 'detail' | 'fix'>;

// ---------------------------------------------------------------- pure parts

/** The java check from `java -version 2>&1` on the host: `whatFor` says who needs it (Kafka, Flink). */
export function judgeJava(output: string, whatFor: string): Verdict {
  const major = parseJavaMajor(output);
  const first = output.trim().split('\n')[0] ?? '';
  const fix = `install openjdk-${MIN_JAVA_MAJOR}-jre-headless (Java ${MIN_JAVA_MAJOR} or later, for ${whatFor})`;
  if (major === undefined) return { ok: false, detail: `no java found (${first || 'no output'})`, fix };
  if (major < MIN_JAVA_MAJOR) return { ok: false, detail: `Java ${major} (${first}); ${whatFor} needs ${MIN_JAVA_MAJOR} or later`, fix };
  return { ok: true, detail: `Java ${major} (${first}) for ${whatFor}` };
}

/** The iptables check from `iptables -m statistic --help` and `iptables -m comment --help` (stdout and stderr of each). */
export function judgeIptables(statisticHelp: string, commentHelp: string): Verdict {
  const statistic = /statistic match options:[\s\S]*--probability/.test(statisticHelp);
  const comment = /comment match options:[\s\S]*--comment/.test(commentHelp);
  if (statistic && comment) return { ok: true, detail: 'iptables with the statistic and comment matches' };
  const missing = [statistic ? '' : 'statistic', comment ? '' : 'comment'].filter(Boolean);
  const said = (statistic ? commentHelp : statisticHelp).trim().split('\n')[0] ?? '';
  return {
    ok: false,
    detail: `iptables lacks the ${missing.join(' and ')} match${missing.length > 1 ? 'es' : ''} (${said || 'no output'})`,
    fix: /command not found/.test(said) ? 'install iptables' : `install iptables with its extensions (Debian: iptables), and let the kernel load ${missing.map((m) => `xt_${m}`).join(' and ')}`,
  };
}

/** The faketime check from `ls /usr/lib/*\/faketime/libfaketime.so.1` (rig/clock.ts findFaketime's probe). */
export function judgeFaketime(lsOutput: string): Verdict {
  const lib = lsOutput.trim().split('\n').find((l) => l.endsWith('/libfaketime.so.1'));
  if (lib) return { ok: true, detail: `libfaketime at ${lib} (the campaign schedules clock steps)` };
  return { ok: false, detail: 'no libfaketime, and the campaign schedules clock steps on engine hosts', fix: 'install libfaketime (apt-get install libfaketime)' };
}

/** Bytes available from `df -B1 --output=avail DIR` ("Avail" then the number), or undefined. */
export function parseDfAvail(output: string): number | undefined {
  const lines = output.trim().split('\n').map((l) => l.trim());
  return lines.length === 2 && lines[0] === 'Avail' && /^\d+$/.test(lines[1]!) ? Number(lines[1]) : undefined;
}

function gib(bytes: number): string {
  return `${(bytes / GiB).toFixed(1)} GiB`;
}

/** The disk check: `avail` bytes free on the filesystem of `dir` (dataDir or its nearest existing parent `measured`), against `need`. */
export function judgeDisk(dfOutput: string, dataDir: string, measured: string, need: number, roles: readonly Role[]): Verdict {
  const avail = parseDfAvail(dfOutput);
  const where = measured === dataDir ? dataDir : `${dataDir} (not there yet: measured at ${measured})`;
  if (avail === undefined) return { ok: false, detail: `cannot read the free space of ${where}: ${dfOutput.trim() || 'no output'}`, fix: `make ${dataDir}'s filesystem readable by df` };
  const detail = `${gib(avail)} free in ${where}; ${roles.join(' + ')} need${roles.length > 1 ? '' : 's'} ${gib(need)}`;
  if (avail >= need) return { ok: true, detail };
  return { ok: false, detail, fix: `free ${gib(need - avail)} in ${dataDir}, or put dataDir on a larger filesystem` };
}

/**
 * The host's clock against the operations host's: `remoteNs` is the host's `date +%s%N`,
 * read between `sentMs` and `receivedMs` on the operations host. The offset is against the
 * midpoint, to within half the round trip.
 */
export function clockOffset(remoteNs: string, sentMs: number, receivedMs: number): { offsetMs: number; uncertaintyMs: number } | undefined {
  const t = remoteNs.trim();
  if (!/^\d{10,}$/.test(t)) return undefined;
  const remoteMs = Number(BigInt(t) / 1_000_000n) + Number(BigInt(t) % 1_000_000n) / 1e6;
  return { offsetMs: remoteMs - (sentMs + receivedMs) / 2, uncertaintyMs: (receivedMs - sentMs) / 2 };
}

/**
 * The clock check from the host's `date +%s%N` and the operations host's clock around it.
 * Refused when the host's clock is certainly further than the bound: |offset| minus the
 * measurement's uncertainty (half the round trip) above boundMs. A slow round trip cannot
 * refuse a host whose clock may be right; its detail says how loosely it was measured.
 */
export function judgeClock(remoteNs: string, sentMs: number, receivedMs: number, boundMs = CLOCK_BOUND_MS): Verdict {
  const o = clockOffset(remoteNs, sentMs, receivedMs);
  if (!o) return { ok: false, detail: `cannot read the host's clock (date +%s%N said ${JSON.stringify(remoteNs.trim())})`, fix: 'install GNU coreutils date' };
  const side = o.offsetMs >= 0 ? 'ahead of' : 'behind';
  const loose = o.uncertaintyMs > boundMs ? '; measured too loosely to refuse anything closer (a slow round trip)' : '';
  const detail = `${Math.abs(o.offsetMs).toFixed(0)} ms ${side} the operations host (±${o.uncertaintyMs.toFixed(0)} ms); bound ${boundMs} ms${loose}`;
  if (Math.abs(o.offsetMs) - o.uncertaintyMs <= boundMs) return { ok: true, detail };
  return { ok: false, detail, fix: 'sync the clocks of this host and the operations host (chrony or systemd-timesyncd against the same NTP server)' };
}

/** Of several clock readings, the one with the shortest round trip (the tightest bound on the offset, as NTP picks). */
export function bestClockSample<T extends { sentMs: number; receivedMs: number }>(samples: readonly T[]): T | undefined {
  return samples.reduce<T | undefined>((best, x) => (!best || x.receivedMs - x.sentMs < best.receivedMs - best.sentMs ? x : best), undefined);
}

/** How many times the clock is read (the shortest round trip counts). */
export const CLOCK_SAMPLES = 3;

/** One listening socket from `ss -ltnH` / `ss -ltnpH`: its port, address and (with -p) the pids holding it. */
export interface Listener {
  address: string;
  port: number;
  pids: number[];
}

/** Parses `ss -ltnH` or `ss -ltnpH` output (State Recv-Q Send-Q Local:Port Peer:Port [users:((...))]). */
export function parseListeners(output: string): Listener[] {
  const out: Listener[] = [];
  for (const line of output.split('\n')) {
    const cols = line.trim().split(/\s+/);
    if (cols.length < 5 || cols[0] !== 'LISTEN') continue;
    const local = cols[3]!;
    const i = local.lastIndexOf(':');
    const port = Number(local.slice(i + 1));
    if (i < 0 || !Number.isInteger(port)) continue;
    const pids = [...line.matchAll(/pid=(\d+)/g)].map((m) => Number(m[1]));
    out.push({ address: local.slice(0, i), port, pids: [...new Set(pids)] });
  }
  return out;
}

/**
 * The ports check: each needed port must have no listener, or only listeners of the rig's own
 * (their command line names the host's dataDir: every service the rig starts runs from there,
 * so a rig up over a running rig stops and restarts them). `cmdlines` maps a pid to its
 * command line (from /proc/PID/cmdline).
 */
export function judgePorts(ssOutput: string, cmdlines: ReadonlyMap<number, string>, needs: readonly PortNeed[], dataDir: string): Verdict {
  const listeners = parseListeners(ssOutput);
  const ours = (pid: number) => (cmdlines.get(pid) ?? '').includes(`${dataDir}/`);
  const taken: string[] = [];
  const fixes: string[] = [];
  for (const need of needs) {
    const held = listeners.filter((l) => l.port === need.port);
    if (!held.length || held.every((l) => l.pids.length > 0 && l.pids.every(ours))) continue;
    const by = [...new Set(held.flatMap((l) => l.pids))].filter((p) => !ours(p));
    const who = by.length ? by.map((p) => `pid ${p} ${JSON.stringify((cmdlines.get(p) ?? '?').slice(0, 60))}`).join(', ') : 'a process ss cannot name';
    taken.push(`${need.port} (${need.what}) is taken by ${who}`);
    fixes.push(`free port ${need.port} (stop what listens there: ss -ltnp 'sport = :${need.port}')`);
  }
  const list = needs.map((n) => n.port).join(', ');
  if (!taken.length) return { ok: true, detail: needs.length ? `free (or the rig's own): ${list}` : 'no port needed' };
  return { ok: false, detail: taken.join('; '), fix: fixes.join('; ') };
}

/** `cmdlines` from the command's second part: one `PID<TAB>cmdline` line per pid. */
export function parseCmdlines(text: string): Map<number, string> {
  const m = new Map<number, string>();
  for (const line of text.split('\n')) {
    const tab = line.indexOf('\t');
    if (tab > 0 && /^\d+$/.test(line.slice(0, tab))) m.set(Number(line.slice(0, tab)), line.slice(tab + 1).trim());
  }
  return m;
}

/** What one host needs: Java for whom, the disk, faketime, the ports. */
export function hostNeeds(host: Pick<HostSpec, 'name' | 'roles'>, needs: InventoryNeeds): { javaFor: string[]; diskBytes: number; faketime: boolean; ports: PortNeed[]; diskFull: boolean } {
  const has = (roles: readonly Role[]) => host.roles.some((r) => roles.includes(r));
  const engineHost = has(['worker', 'coordinator']);
  const javaFor = [...(has(['broker']) ? ['Kafka'] : []), ...needs.engines.filter((e) => has(e.javaRoles)).map((e) => e.engine)];
  const all = [...rigPorts(needs.store), ...needs.engines.flatMap((e) => e.ports)];
  const seen = new Set<number>();
  const ports = all.filter((p) => host.roles.includes(p.role) && !seen.has(p.port) && (seen.add(p.port), true));
  const t = needs.diskFullTargets ?? [];
  const diskFull = t.includes(host.name) || (t.includes('*') && host.roles.includes('worker'));
  return { javaFor, diskBytes: host.roles.reduce((s, r) => s + DISK_NEEDS[r], 0), faketime: needs.clockSteps && engineHost, ports, diskFull };
}

/** One line per host and check: `PASS host check: detail` or `FAIL host check: detail -- fix: ...`. */
export function renderInventoryDoctor(r: InventoryDoctorReport): string {
  return r.checks.map((c) => `${c.ok ? 'PASS' : 'FAIL'} ${c.host} ${c.check}: ${c.detail}${c.fix ? ` -- fix: ${c.fix}` : ''}`).join('\n');
}

function sudoFix(user: string): string {
  return `give ${user} passwordless sudo (apt-get install sudo; echo '${user} ALL=(ALL) NOPASSWD:ALL' > /etc/sudoers.d/clink-qual; chmod 0440 /etc/sudoers.d/clink-qual), or log in as root`;
}

/** The sudo check from `id -u` run through `sudo -n` (rig/ssh.ts): it ran, as root (uid 0). */
export function judgeSudo(idOutput: string, user: string): Verdict {
  const uid = idOutput.trim();
  if (uid === '0') return { ok: true, detail: `${user} runs commands as root through sudo -n (passwordless)` };
  return { ok: false, detail: `sudo -n ran the command as uid ${uid || '?'}, not root`, fix: sudoFix(user) };
}

// ---------------------------------------------------------------- over SSH

const SEP = '@@clink-qual-doctor@@';

/** Runs every check on one host (read-only commands only). A host that cannot be reached is one failed `ssh` check. */
export async function checkHost(remote: Remote, needs: InventoryNeeds, now: () => number = Date.now): Promise<HostCheck[]> {
  const host = remote.host;
  const out: HostCheck[] = [];
  const add = (check: HostCheck['check'], v: Verdict) => out.push({ host: host.name, check, ...v });
  const want = hostNeeds(host, needs);
  const sudo = host.ssh.sudo === true && host.ssh.user !== 'root';
  try {
    // Connects (host key pinned); the clock is read on the open connection, so its round trip is one command's.
    // For a sudo login this is also sudo's first command: `id -u` says it ran as root.
    const r = await remote.exec(sudo ? 'id -u' : 'true', { timeoutMs: 15_000 });
    if (sudo) add('sudo', judgeSudo(r.stdout, host.ssh.user));
  } catch (err) {
    if ((err as QualError).details?.sudoRefused) {
      add('sudo', { ok: false, detail: (err as Error).message.split('\n')[0]!, fix: sudoFix(host.ssh.user) });
      return out;
    }
    add('ssh', { ok: false, detail: (err as Error).message.split('\n')[0]!, fix: `make ${host.address}:${host.ssh.port} reachable as ${host.ssh.user} with the key ${host.ssh.privateKeyPath}, and pin its host key in ${host.ssh.knownHostsPath} (ssh-keyscan -p ${host.ssh.port} ${host.address}, checked against the host's own fingerprint)` });
    return out;
  }
  const samples: { stdout: string; sentMs: number; receivedMs: number }[] = [];
  for (let i = 0; i < CLOCK_SAMPLES; i++) {
    const sentMs = now();
    const r = await remote.exec('date +%s%N', { check: false });
    samples.push({ stdout: r.stdout, sentMs, receivedMs: now() });
  }
  const best = bestClockSample(samples)!;
  add('clock', judgeClock(best.stdout, best.sentMs, best.receivedMs));

  if (want.javaFor.length) {
    const r = await remote.exec('java -version 2>&1', { check: false });
    add('java', judgeJava(r.stdout + r.stderr, want.javaFor.join(' and ')));
  }
  const ipt = await remote.exec(`iptables -m statistic --help 2>&1; echo ${SEP}; iptables -m comment --help 2>&1`, { check: false });
  const [statistic = '', comment = ''] = (ipt.stdout + ipt.stderr).split(`${SEP}\n`);
  add('iptables', judgeIptables(statistic, comment));
  if (want.faketime) {
    const r = await remote.exec('ls /usr/lib/*/faketime/libfaketime.so.1 2>/dev/null | head -n 1', { check: false });
    add('faketime', judgeFaketime(r.stdout));
  }
  const d = shQuote(host.dataDir);
  const df = await remote.exec(`d=${d}; while [ ! -d "$d" ]; do d=$(dirname "$d"); done; echo "$d"; df -B1 --output=avail "$d" 2>&1`, { check: false });
  const [measured = '', ...dfLines] = df.stdout.split('\n');
  add('disk', judgeDisk(dfLines.join('\n'), host.dataDir, measured.trim(), want.diskBytes, host.roles));
  if (want.diskFull) {
    const dir = hostStateDir(host);
    const probe = await remote.exec(mountProbeCommand(dir), { check: false });
    const refused = ownFilesystemRefusalFrom(dir, probe.stdout);
    add(
      'disk-full',
      refused
        ? { ok: false, detail: `the campaign fills ${dir} here, and ${refused.replace(`${dir} `, 'it ')}`, fix: `mount a filesystem of its own (at most ${MAX_FILL_BYTES / GiB} GiB) at ${dir}, or target disk-full elsewhere` }
        : { ok: true, detail: `${dir} is on a filesystem of its own (${probe.stdout.split('\n')[0]!.trim()})` },
    );
  }
  const ss = await remote.exec(`ss -ltnpH 2>&1; echo ${SEP}; for p in $(ss -ltnpH 2>/dev/null | grep -o 'pid=[0-9]*' | cut -d= -f2 | sort -u); do printf '%s\\t' "$p"; tr '\\0' ' ' < /proc/$p/cmdline 2>/dev/null; echo; done`, { check: false });
  const [listeners = '', pids = ''] = ss.stdout.split(`${SEP}\n`);
  const listed = listeners.split('\n').every((l) => !l.trim() || l.startsWith('LISTEN'));
  add('ports', listed ? judgePorts(listeners, parseCmdlines(pids), want.ports, host.dataDir) : { ok: false, detail: `cannot list listening sockets: ${listeners.trim().split('\n')[0]}`, fix: 'install iproute2 (ss)' });
  return out;
}

/** Runs the checks on every host at once; ok when every check passed. */
export async function checkInventory(hosts: readonly HostSpec[], needs: InventoryNeeds, remoteOf: (h: HostSpec) => Remote): Promise<InventoryDoctorReport> {
  const perHost = await Promise.all(hosts.map((h) => checkHost(remoteOf(h), needs)));
  const checks = perHost.flat();
  return { ok: checks.every((c) => c.ok), checks };
}

/** Throws PRECONDITION naming each failed host, check and fix (for `rig up --inventory`, before it touches anything). */
export function assertInventoryReady(r: InventoryDoctorReport, inventory: string): void {
  if (r.ok) return;
  const failed = r.checks.filter((c) => !c.ok);
  throw new QualError(
    'PRECONDITION',
    `inventory ${path.basename(inventory)}: ${failed.length} check(s) failed on ${new Set(failed.map((c) => c.host)).size} host(s); nothing was touched:\n${failed.map((c) => `  ${c.host} ${c.check}: ${c.detail} -- fix: ${c.fix ?? '?'}`).join('\n')}`,
    { failed },
  );
}
