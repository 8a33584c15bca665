/**
 * Preflight: before anything of a run is deployed, the rig must be the rig, not what a
 * crashed controller left behind. A controller killed by SIGKILL, the OOM killer or a
 * lost SSH session (SIGHUP before it was trapped) cannot heal its faults, so the next run
 * would start inside them: a tagged iptables rule still dropping a worker's traffic, a
 * broker or the store still SIGSTOPped.
 *
 *   1. every host answers over SSH with its pinned host key (nothing touched otherwise);
 *   2. heal everything of ours (rig/faults.ts healAll: iptables rules tagged clink-qual,
 *      paused services resumed, disk ballast removed, a stepped engine clock reset);
 *   3. check, until a deadline, that it holds: no clink-qual rule left on any host, no
 *      stopped (T) process among the services, every broker running and registered with a
 *      quorum leader, the store's service running and answering health/live;
 *   4. the engine can keep its durable files (engineStateCheck): on each engine host, the
 *      directory of each file the plug declares (Clink's checkpoint log and its sinks' upload
 *      journal) can be created and written, and a file already there is a regular file.
 *      Otherwise the deploy would fail after the run began, or (a journal that cannot be
 *      read) the pending uploads would be counted wrong only at the wrap-up.
 *
 * What was healed and what was checked is returned for the run's evidence (preflight.json);
 * a rig that cannot be brought back fails the run before the gate (PRECONDITION, exit 2).
 */
import type { EngineDurableFiles, EngineRole } from '../../engine/engine.ts';
import { QualError } from '../../lib/errors.ts';
import { healAll } from '../../rig/faults.ts';
import { kafkaHealth, KAFKA_SERVICE } from '../../rig/kafka.ts';
import { waitFor } from '../../rig/process.ts';
import type { Remote } from '../../rig/remote.ts';
import { shQuote } from '../../rig/process.ts';
import { listServices } from '../../rig/services.ts';
import { storeKindOf, storeLive, storeServiceOf, STORE_HEALTH_PATHS } from '../../rig/store.ts';
import type { RigState } from '../../rig/types.ts';

export type HealedHost = Awaited<ReturnType<typeof healAll>>[number];

export interface PreflightCheck {
  name: string;
  passed: boolean;
  evidence: string;
}

export interface PreflightResult {
  t: string;
  /** Per host: what the heal removed or resumed (rules, resumed services, ballast, clock). */
  healed: HealedHost[];
  /** True when the heal found anything left over (a crashed controller's faults). */
  leftovers: boolean;
  checks: PreflightCheck[];
}

/** The rig's state after the heal: one check per condition, with what shows it. */
export async function rigChecks(rig: RigState, remote: (hostName: string) => Remote): Promise<PreflightCheck[]> {
  const perHost = await Promise.all(
    rig.hosts.map(async (h) => {
      const r = remote(h.name);
      const rules = await r.exec(`command -v iptables >/dev/null || { echo 0; exit 0; }; iptables -w 5 -S | grep -c -- clink-qual || true`, { check: false, timeoutMs: 15_000 });
      return { host: h.name, rules: Number(rules.stdout.trim()) || 0, services: await listServices(r) };
    }),
  );
  const checks: PreflightCheck[] = [];
  const withRules = perHost.filter((x) => x.rules > 0);
  checks.push({
    name: 'no clink-qual iptables rule',
    passed: withRules.length === 0,
    evidence: withRules.length ? withRules.map((x) => `${x.host}: ${x.rules} rule(s)`).join(', ') : `iptables -S on ${perHost.length} hosts: none tagged clink-qual`,
  });
  const stopped = perHost.flatMap((x) => x.services.filter((s) => s.state === 'paused').map((s) => `${x.host}/${s.name} (pid ${s.pid})`));
  checks.push({ name: 'no stopped process', passed: stopped.length === 0, evidence: stopped.length ? `stopped (T): ${stopped.join(', ')}` : 'no service in state T' });
  const brokerDown = rig.kafka.brokers.filter((b) => perHost.find((x) => x.host === b.host)?.services.find((s) => s.name === KAFKA_SERVICE)?.state !== 'running');
  const health = await kafkaHealth(rig.kafka, 5000);
  const unregistered = rig.kafka.brokers.filter((b) => !health.brokers.includes(b.nodeId));
  checks.push({
    name: 'every broker up',
    passed: brokerDown.length === 0 && unregistered.length === 0 && health.quorum !== null && health.quorum.leaderId >= 0,
    evidence:
      brokerDown.length || unregistered.length || !health.quorum
        ? `not running: ${brokerDown.map((b) => b.host).join(', ') || 'none'}; not registered: ${unregistered.map((b) => b.nodeId).join(', ') || 'none'}; quorum leader: ${health.quorum?.leaderId ?? 'none'}${health.error ? ` (${health.error})` : ''}`
        : `brokers ${health.brokers.join(', ')} registered, quorum leader ${health.quorum!.leaderId}`,
  });
  const storeService = storeServiceOf(rig.store);
  const storeSvc = perHost.find((x) => x.host === rig.store.host)?.services.find((s) => s.name === storeService);
  const live = await storeLive(rig.store.endpoint, storeKindOf(rig.store), 3000);
  checks.push({
    name: 'store answering',
    passed: storeSvc?.state === 'running' && live,
    evidence: `${rig.store.host}/${storeService} ${storeSvc?.state ?? 'not found'}; ${rig.store.endpoint}${STORE_HEALTH_PATHS[storeKindOf(rig.store)]} ${live ? 'answered 200' : 'did not answer 200'}`,
  });
  return checks;
}

/**
 * Whether the engine can keep its durable files (the plug's durableFiles: Clink's checkpoint
 * log, its sinks' upload journal) on each engine host: each file's directory (a glob's fixed
 * part) can be created and a probe file written in it and removed (a read-only or full
 * filesystem, or a path through a regular file, fails), and a file already at a declared
 * path is a regular file (a directory there fails the deploy's clean-up and every read).
 * One check, whose evidence names each host and path that failed.
 */
export async function engineStateCheck(rig: RigState, remote: (hostName: string) => Remote, engine: EngineDurableFiles): Promise<PreflightCheck> {
  if (!engine.durableFiles) return { name: 'engine state writable', passed: true, evidence: 'the engine declares no durable files' };
  const probes = rig.hosts.flatMap((h) =>
    h.roles
      .filter((r): r is EngineRole => r === 'worker' || r === 'coordinator')
      .flatMap((role) => engine.durableFiles!(h, role))
      .map((f) => ({ host: h, file: f, dir: fixedDir(f.path, f.glob ?? false) })),
  );
  const failed: string[] = [];
  const checked = new Set<string>();
  for (const { host, file, dir } of probes) {
    const key = `${host.name}\n${dir}\n${file.glob ? '' : file.path}`;
    if (checked.has(key)) continue;
    checked.add(key);
    const d = shQuote(dir);
    const p = shQuote(`${dir}/.clink-qual-preflight-probe`);
    const notRegular = file.glob ? '' : `f=${shQuote(file.path)}; if [ -e "$f" ] && [ ! -f "$f" ]; then echo "$f is not a regular file"; exit 1; fi; `;
    const r = await remote(host.name).exec(`${notRegular}mkdir -p -- ${d} 2>&1 && : > ${p} 2>&1 && rm -f -- ${p} 2>&1`, { check: false, timeoutMs: 15_000 });
    if (r.code !== 0) failed.push(`${host.name}: ${file.glob ? dir : file.path} (${file.what}): ${(r.stdout + r.stderr).trim().split('\n').pop() || `exit ${r.code}`}`);
  }
  return {
    name: 'engine state writable',
    passed: failed.length === 0,
    evidence: failed.length ? `cannot keep: ${failed.join('; ')}` : `${checked.size} durable file place(s) on ${new Set(probes.map((x) => x.host.name)).size} host(s) writable`,
  };
}

/** The directory of a declared path: its dirname, or for a glob the part before the first component with a wildcard. */
function fixedDir(p: string, glob: boolean): string {
  const parts = p.split('/');
  const upTo = glob ? parts.findIndex((c) => /[*?[]/.test(c)) : parts.length - 1;
  return parts.slice(0, upTo < 0 ? parts.length - 1 : upTo).join('/') || '/';
}

export async function preflight(rig: RigState, remote: (hostName: string) => Remote, log: (l: string) => void, opts: { deadlineMs?: number; engine?: EngineDurableFiles } = {}): Promise<PreflightResult> {
  const reach = await Promise.allSettled(rig.hosts.map((h) => remote(h.name).exec('true', { timeoutMs: 15_000 })));
  const bad = reach.map((r, i) => (r.status === 'rejected' ? `${rig.hosts[i]!.name}: ${(r.reason as Error).message}` : null)).filter(Boolean);
  if (bad.length) throw new QualError('HOST_UNREACHABLE', `the rig is not fit to run on; nothing was touched:\n  ${bad.join('\n  ')}`);
  log(`preflight: all ${rig.hosts.length} hosts answer over SSH with their pinned host keys`);

  const healed = await healAll(rig, remote);
  const failedHeal = healed.filter((h) => h.error);
  if (failedHeal.length) throw new QualError('PRECONDITION', `preflight: could not heal what an earlier run left behind:\n  ${failedHeal.map((h) => `${h.host}: ${h.error}`).join('\n  ')}`, { healed });
  const left = healed.filter((h) => h.rules > 0 || h.resumed.length > 0 || h.ballast > 0 || h.clockReset);
  for (const h of left) {
    log(`preflight: healed leftovers on ${h.host}: ${[h.rules ? `${h.rules} iptables rule(s) removed` : '', h.resumed.length ? `resumed ${h.resumed.join(', ')}` : '', h.ballast ? `${h.ballast} ballast file(s) removed` : '', h.clockReset ? 'clock reset' : ''].filter(Boolean).join('; ')}`);
  }

  let checks: PreflightCheck[] = [];
  try {
    // A broker resumed from SIGSTOP may take a few seconds to be registered again.
    await waitFor('the rig healthy after the preflight heal', async () => (checks = await rigChecks(rig, remote)).every((c) => c.passed), opts.deadlineMs ?? 90_000, 1000);
  } catch (err) {
    const failed = checks.filter((c) => !c.passed).map((c) => `${c.name}: ${c.evidence}`);
    throw new QualError('PRECONDITION', `preflight: the rig is not fit to run on after healing leftovers:\n  ${(failed.length ? failed : [(err as Error).message]).join('\n  ')}`, { healed, checks });
  }
  // After the heal: a crashed run's disk-full ballast would fail the probe, and the heal removes it.
  if (opts.engine) {
    const state = await engineStateCheck(rig, remote, opts.engine);
    checks.push(state);
    if (!state.passed) throw new QualError('PRECONDITION', `preflight: the engine cannot keep its durable files; nothing was deployed:\n  ${state.evidence}`, { healed, checks });
  }
  log(`preflight: ${checks.map((c) => c.name).join(', ')}`);
  return { t: new Date().toISOString(), healed, leftovers: left.length > 0, checks };
}
