/**
 * Fault primitives over SSH. Each one returns the evidence that it landed (or healed), and
 * throws FAULT_NOT_LANDED when the evidence contradicts it: a fault that did not land must
 * never be counted as survived.
 *
 * Network faults are iptables rules inside the target host's own network namespace (or on
 * the real machine), each tagged `-m comment --comment clink-qual:<faultId>` so that one
 * fault's rules, or all of them (`healAll`), can be found and removed.
 *
 * What the harness keeps: a partition only matches the peer host's address, so the
 * operations host keeps reaching both sides over SSH; packet loss exempts the SSH port
 * (traffic to and from the host's sshd) and loopback, so the harness keeps control of the
 * host while a share of everything else is dropped.
 */
import { QualError } from '../lib/errors.ts';
import { findJava, KAFKA_PORT, KAFKA_SERVICE, kafkaHealth, startKafka } from './kafka.ts';
import { servicePid, shQuote, signalService, stopService, waitFor, waitPidGone } from './process.ts';
import type { Remote } from './remote.ts';
import { listServices, removeTaggedRules } from './services.ts';
import { remoteFor } from './ssh.ts';
import { tcpOpen } from './net.ts';
import { poll } from '../lib/retry.ts';
import { storeKindOfService, storeLive, STORE_PORT } from './store.ts';
import type { RigState } from './types.ts';
import { clockFile } from './clock.ts';
import { disarmDeadMan } from './dead-man.ts';
import { freeFilesystem } from './disk.ts';
import { hostStateDir } from './state-fs.ts';
import { isHostAddress } from './inventory.ts';

const IPT = 'iptables -w 5';

function checkId(faultId: string): string {
  if (!/^[A-Za-z0-9._-]{1,40}$/.test(faultId)) throw new QualError('BAD_ARGUMENTS', `fault id must be [A-Za-z0-9._-], at most 40 characters: ${faultId}`);
  return faultId;
}

/** An address for a rule: an IP literal or a host name (never an option such as -j), quoted where used. */
function checkAddress(address: string): string {
  if (!isHostAddress(address)) throw new QualError('BAD_ARGUMENTS', `not an IP address or a host name: ${JSON.stringify(address)}`);
  return address;
}

function tag(faultId: string): string {
  return `-m comment --comment clink-qual:${checkId(faultId)}`;
}

/** A TCP connect from the remote host to address:port: true if it connects within timeoutS. */
export async function tcpConnectFrom(remote: Remote, address: string, port: number, timeoutS = 2): Promise<boolean> {
  const r = await remote.exec(`timeout ${timeoutS} bash -c ${shQuote(`exec 3<>/dev/tcp/${address}/${port}`)} 2>/dev/null && echo open || echo closed`, { check: false, timeoutMs: (timeoutS + 10) * 1000 });
  return r.stdout.trim() === 'open';
}

/** A process's state letter from /proc/<pid>/stat ('T' = stopped, 'S' sleeping, …), or 'gone'. */
export async function processState(remote: Remote, pid: number): Promise<string> {
  const r = await remote.exec(`sed 's/.*) //' /proc/${pid}/stat 2>/dev/null | cut -d' ' -f1`, { check: false });
  return r.stdout.trim() || 'gone';
}
const procState = processState;

/** SIGCONT to one process by PID (a process that stopped itself, not a service the rig paused); its state after. */
export async function resumePid(remote: Remote, pid: number): Promise<string> {
  if (!Number.isInteger(pid) || pid <= 1) throw new QualError('BAD_ARGUMENTS', `bad pid ${pid}`);
  await remote.exec(`kill -CONT ${pid} 2>/dev/null`, { check: false });
  return processState(remote, pid);
}

// ---- processes -------------------------------------------------------------------------

export async function killService(remote: Remote, service: string): Promise<{ pid: number; gone: true }> {
  const pid = await signalService(remote, service, 'KILL');
  if (pid === null) throw new QualError('FAULT_NOT_LANDED', `${remote.host.name}: ${service} was not running; nothing to kill`);
  await waitPidGone(remote, pid, 10_000);
  return { pid, gone: true };
}

export interface PauseEvidence {
  pid: number;
  /** /proc/<pid>/stat state after the signal ('T' = stopped). */
  state: string;
  /** For the store: an HTTP request to it timed out after this many ms while paused. */
  requestTimedOutMs?: number;
}

function storeEndpointOf(remote: Remote): string {
  return `http://${remote.host.address}:${STORE_PORT}`;
}

/** How long a paused process may take to show state T: a SIGSTOP stops every thread of a process, not at once (qual03-smoke at 4a867f4: MinIO read R once right after it). */
export const STOP_SETTLE_MS = 2000;

export async function pauseService(remote: Remote, service: string, probeTimeoutMs = 2000, settleMs = STOP_SETTLE_MS): Promise<PauseEvidence> {
  const pid = await signalService(remote, service, 'STOP');
  if (pid === null) throw new QualError('FAULT_NOT_LANDED', `${remote.host.name}: ${service} was not running; nothing to pause`);
  let state = await procState(remote, pid);
  if (state !== 'T') state = (await poll(async () => ((state = await procState(remote, pid)) === 'T' ? state : undefined), { deadlineMs: settleMs, intervalMs: 50 })) ?? state;
  if (state !== 'T') {
    // Not seen stopped: the fault does not land, so nothing will heal it; a stop that lands later must not stay.
    await remote.exec(`kill -CONT ${pid}`, { check: false });
    throw new QualError('FAULT_NOT_LANDED', `${remote.host.name}: ${service} (pid ${pid}) is in state ${state} ${settleMs} ms after SIGSTOP, not T (sent SIGCONT)`);
  }
  const ev: PauseEvidence = { pid, state };
  const store = storeKindOfService(service);
  if (store) {
    const t = Date.now();
    if (await storeLive(storeEndpointOf(remote), store, probeTimeoutMs)) throw new QualError('FAULT_NOT_LANDED', `${remote.host.name}: the store still answers after SIGSTOP`);
    ev.requestTimedOutMs = Date.now() - t;
  }
  return ev;
}

export async function resumeService(remote: Remote, service: string, deadlineMs = 30_000): Promise<{ pid: number; state: string; answeredAfterMs?: number }> {
  const pid = await signalService(remote, service, 'CONT');
  if (pid === null) throw new QualError('FAULT_NOT_LANDED', `${remote.host.name}: ${service} is not running; nothing to resume`);
  const state = await procState(remote, pid);
  if (state === 'T') throw new QualError('FAULT_NOT_LANDED', `${remote.host.name}: ${service} (pid ${pid}) is still stopped after SIGCONT`);
  const store = storeKindOfService(service);
  if (!store) return { pid, state };
  const t = Date.now();
  await waitFor(`store on ${remote.host.name} answering after SIGCONT`, () => storeLive(storeEndpointOf(remote), store), deadlineMs, 100);
  return { pid, state, answeredAfterMs: Date.now() - t };
}

/** Stops a broker (TERM, waits), shows its port closed, starts it again and waits until it is registered. */
export async function restartBroker(remote: Remote, rig: RigState): Promise<{ oldPid: number; newPid: number; portClosed: true; downMs: number; readyAfterMs: number }> {
  const broker = rig.kafka.brokers.find((b) => b.host === remote.host.name);
  if (!broker) throw new QualError('BAD_ARGUMENTS', `${remote.host.name} is not a broker of this rig`);
  const oldPid = await servicePid(remote, KAFKA_SERVICE);
  if (oldPid === null) throw new QualError('FAULT_NOT_LANDED', `${remote.host.name}: kafka is not running`);
  const java = await findJava(remote);
  const t0 = Date.now();
  await stopService(remote, KAFKA_SERVICE, 30_000);
  if (await tcpOpen(remote.host.address, KAFKA_PORT)) throw new QualError('FAULT_NOT_LANDED', `${remote.host.name}: port ${KAFKA_PORT} still open after stopping kafka`);
  const newPid = await startKafka(remote, rig.kafka.version, java);
  const t1 = Date.now();
  await waitFor(
    `broker ${broker.nodeId} on ${remote.host.name} registered again`,
    async () => (await tcpOpen(remote.host.address, KAFKA_PORT)) && (await kafkaHealth(rig.kafka, 3000)).brokers.includes(broker.nodeId),
    120_000,
    500,
  );
  return { oldPid, newPid, portClosed: true, downMs: t1 - t0, readyAfterMs: Date.now() - t1 };
}

// ---- network ---------------------------------------------------------------------------

export interface PartitionEvidence {
  faultId: string;
  peer: string;
  /** TCP connect results while the rules are in place (false = blocked). */
  aToB: boolean;
  bToA: boolean | null;
  /** When the rules were in place (ISO): the cut's own start, seconds before the probes above end and the landing is recorded. */
  cutAt?: string;
}

/**
 * Drops all traffic between host a and the address b, with rules in a's INPUT and OUTPUT.
 * Evidence: a TCP connect from a to b's port fails, and (when b's Remote is given) from b
 * to a's SSH port fails too.
 */
export async function partition(a: Remote, bAddress: string, faultId: string, opts: { b?: Remote; probePort?: number } = {}): Promise<PartitionEvidence> {
  const t = tag(faultId);
  const b = checkAddress(bAddress);
  await a.exec(`${IPT} -I INPUT -s ${shQuote(b)} ${t} -j DROP && ${IPT} -I OUTPUT -d ${shQuote(b)} ${t} -j DROP`);
  const cutAt = new Date().toISOString();
  const probePort = opts.probePort ?? opts.b?.host.ssh.port ?? 22;
  const aToB = await tcpConnectFrom(a, bAddress, probePort);
  const bToA = opts.b ? await tcpConnectFrom(opts.b, a.host.address, a.host.ssh.port) : null;
  if (aToB || bToA) throw new QualError('FAULT_NOT_LANDED', `partition ${faultId} ${a.host.name} <-> ${bAddress}: a TCP connect still went through (a->b ${aToB}, b->a ${bToA})`);
  return { faultId, peer: bAddress, aToB, bToA, cutAt };
}

export async function healPartition(a: Remote, bAddress: string, faultId: string, opts: { b?: Remote; probePort?: number; deadlineMs?: number } = {}): Promise<PartitionEvidence & { removedRules: number }> {
  const removedRules = await removeTaggedRules(a, checkId(faultId));
  const probePort = opts.probePort ?? opts.b?.host.ssh.port ?? 22;
  let aToB = false;
  let bToA: boolean | null = null;
  await waitFor(
    `partition ${faultId} healed (${a.host.name} <-> ${bAddress})`,
    async () => {
      aToB = await tcpConnectFrom(a, bAddress, probePort);
      bToA = opts.b ? await tcpConnectFrom(opts.b, a.host.address, a.host.ssh.port) : null;
      return aToB && bToA !== false;
    },
    opts.deadlineMs ?? 15_000,
    200,
  );
  return { faultId, peer: bAddress, aToB, bToA, removedRules };
}

export interface DropCounters {
  input: number;
  output: number;
}

/** Packets dropped so far by the fault's statistic rules (iptables -L -v -x counters). */
export async function dropCounters(remote: Remote, faultId: string): Promise<DropCounters> {
  const id = checkId(faultId);
  const r = await remote.exec(`${IPT} -L INPUT -v -x -n; echo ===; ${IPT} -L OUTPUT -v -x -n`);
  const [inp = '', out = ''] = r.stdout.split('===');
  const sum = (chain: string) =>
    chain
      .split('\n')
      .filter((l) => l.includes(`/* clink-qual:${id} */`))
      .filter((l) => /\bDROP\b/.test(l))
      .reduce((n, l) => n + Number(l.trim().split(/\s+/)[0] ?? 0), 0);
  return { input: sum(inp), output: sum(out) };
}

export interface PacketLossEvidence {
  faultId: string;
  share: number;
  /** UDP datagrams the host sent to the probe address to exercise the rule. */
  probesSent: number;
  /** Drop counters after the probe (both chains). */
  dropped: DropCounters;
}

/**
 * Drops `share` (0..1) of the host's packets at random, both ways, except SSH (the host's
 * sshd port, either direction) and loopback. Evidence: after sending probe datagrams to
 * probeAddress (another host, or the operations host), the rule's drop counter has risen.
 */
export async function packetLoss(remote: Remote, share: number, faultId: string, opts: { probeAddress?: string; probes?: number } = {}): Promise<PacketLossEvidence> {
  if (!(share > 0 && share <= 1)) throw new QualError('BAD_ARGUMENTS', `packet loss share must be in (0, 1]: ${share}`);
  const t = tag(faultId);
  const ssh = remote.host.ssh.port;
  const p = share.toFixed(4);
  // Inserted in reverse order: the SSH exemptions end up above the drops.
  await remote.exec(
    [
      `${IPT} -I INPUT ! -i lo -m statistic --mode random --probability ${p} ${t} -j DROP`,
      `${IPT} -I OUTPUT ! -o lo -m statistic --mode random --probability ${p} ${t} -j DROP`,
      `${IPT} -I INPUT -p tcp --dport ${ssh} ${t} -j ACCEPT`,
      `${IPT} -I OUTPUT -p tcp --sport ${ssh} ${t} -j ACCEPT`,
    ].join(' && '),
  );
  const probes = opts.probes ?? 200;
  const probeAddress = opts.probeAddress ?? defaultProbeAddress(remote);
  await remote.exec(`for i in $(seq ${probes}); do echo clink-qual-probe > ${shQuote(`/dev/udp/${checkAddress(probeAddress)}/9`)}; done 2>/dev/null; true`, { check: false, timeoutMs: 30_000 });
  const dropped = await dropCounters(remote, faultId);
  if (dropped.input + dropped.output === 0) throw new QualError('FAULT_NOT_LANDED', `${remote.host.name}: packet loss ${faultId} dropped nothing out of ${probes} probes`);
  return { faultId, share, probesSent: probes, dropped };
}

function defaultProbeAddress(remote: Remote): string {
  // The local rig's bridge (the operations host); elsewhere pass probeAddress (the host's own address only exercises OUTPUT).
  return remote.host.address.startsWith('10.231.0.') ? '10.231.0.1' : remote.host.address;
}

export async function healPacketLoss(remote: Remote, faultId: string): Promise<{ faultId: string; removedRules: number; dropped: DropCounters }> {
  const dropped = await dropCounters(remote, faultId);
  const removedRules = await removeTaggedRules(remote, checkId(faultId));
  const left = await remote.exec(`${IPT} -S | grep -c -- 'clink-qual:${faultId}' || true`, { check: false });
  if (Number(left.stdout.trim()) > 0) throw new QualError('FAULT_NOT_LANDED', `${remote.host.name}: rules of ${faultId} still present after heal`);
  return { faultId, removedRules, dropped };
}

// ---- everything ------------------------------------------------------------------------

/** Stops every dead-man timer, removes every clink-qual rule on every host and SIGCONTs every paused service (used on abort and by the preflight). */
export async function healAll(rig: RigState, remote: (hostName: string) => Remote = (n) => remoteFor(rig.hosts.find((h) => h.name === n)!)): Promise<{ host: string; rules: number; resumed: string[]; ballast: number; clockReset: boolean; error?: string }[]> {
  return Promise.all(
    rig.hosts.map(async (h) => {
      const r = remote(h.name);
      try {
        // First the dead-man timers (rig/dead-man.ts), so none fires into the next run.
        await disarmDeadMan(r);
        const rules = await removeTaggedRules(r);
        const paused = (await listServices(r)).filter((s) => s.state === 'paused');
        for (const s of paused) await r.exec(`kill -CONT ${s.pid}`, { check: false });
        // disk-full ballast, and a stepped engine clock (rig/disk.ts, rig/clock.ts).
        const engineHost = h.roles.some((role) => role === 'worker' || role === 'coordinator');
        const ballast = engineHost ? (await freeFilesystem(r, hostStateDir(h))).removed : 0;
        const clockReset = await r.exec(`f=${shQuote(clockFile(h))}; [ -f "$f" ] && [ "$(cat "$f")" != +0 ] && echo +0 > "$f" && echo reset`, { check: false });
        return { host: h.name, rules, resumed: paused.map((s) => s.name), ballast, clockReset: clockReset.stdout.trim() === 'reset' };
      } catch (err) {
        return { host: h.name, rules: 0, resumed: [], ballast: 0, clockReset: false, error: (err as Error).message };
      }
    }),
  );
}
