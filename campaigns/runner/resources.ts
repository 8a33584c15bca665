/**
 * The resource sampler: every interval (the oracle's sample interval) it reads, over each
 * rig host's Remote, one cheap shell command that prints
 *   - the host's kernel boot id and MemTotal / MemAvailable (/proc/meminfo),
 *   - for every service under <dataDir>/services (rig/process.ts: Kafka, MinIO, the engine's
 *     coordinator and workers) its PID, VmRSS (/proc/<pid>/status) and CPU ticks and start
 *     time (/proc/<pid>/stat),
 *   - on a store host the size of MinIO's data directory, on a broker the size of Kafka's
 *     log directory (du), each with its filesystem's free space (df);
 * adds the controller's own RSS, heap and CPU (process.memoryUsage, process.cpuUsage), lists
 * the output prefix once to measure the oracle's lag behind the bucket, and appends one
 * ResourceSample (lib/evidence.ts) to resources.jsonl with the sample's own duration.
 *
 * Oracle lag, as defined here: the objects this sample's own listing of the prefix found
 * beyond those the oracle has judged (listed − judged, at least 0: objects visible to a
 * downstream reader that the oracle has not read yet), and the age of the oracle's last
 * completed sample.
 *
 * Nothing here is fatal: a host that does not answer (a partition, a paused process), a
 * listing that times out (a store outage) is recorded in the sample's `errors` and the
 * sample goes on with what it has. Samples never overlap; each host command has a deadline.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import type { ProcessResources, ResourceSample } from '../../lib/evidence.ts';
import { sleep } from '../../lib/sleep.ts';
import { kafkaPaths } from '../../rig/kafka.ts';
import { SERVICE_PID_SH, shQuote } from '../../rig/process.ts';
import type { Remote } from '../../rig/remote.ts';
import { minioDataDir, storeDrivesOf, storeKindOf, STORE_DATA_DIRS } from '../../rig/store.ts';
import type { HostSpec, RigState, StoreKind } from '../../rig/types.ts';

export interface ResourceSamplerOptions {
  rig: RigState;
  remote: (hostName: string) => Remote;
  path: string;
  intervalMs: number;
  /** Events produced and judged so far. */
  produced: () => number;
  judged: () => number;
  /** Lists the output prefix (object count); optional. */
  listObjects?: () => Promise<number>;
  /** Objects the oracle has judged, and when its last sample completed (ISO). */
  oracleObjects?: () => number;
  oracleLastSampleAt?: () => string | undefined;
  /** Per-host command deadline; default min(10 s, interval). */
  hostTimeoutMs?: number;
}

/** The data directories a host's command measures: the running store's on a store (rig/store.ts; MinIO's on its drive layout), Kafka's log dir on a broker (rig/kafka.ts). */
export function diskTargets(host: HostSpec, kafkaVersion: string, store: StoreKind = 'minio', drives = 1): { what: 'store' | 'broker'; path: string }[] {
  const out: { what: 'store' | 'broker'; path: string }[] = [];
  if (host.roles.includes('store')) out.push({ what: 'store', path: `${host.dataDir}/${store === 'minio' ? minioDataDir(drives) : STORE_DATA_DIRS[store]}` });
  if (host.roles.includes('broker')) out.push({ what: 'broker', path: kafkaPaths({ host } as Remote, kafkaVersion).data });
  return out;
}

/** The one command a host runs per sample. Output lines: boot, mem, tck, proc, disk (see parseHostProbe). */
export function hostProbeCommand(host: HostSpec, disks: { what: string; path: string }[]): string {
  const lines = [
    'echo "boot $(cat /proc/sys/kernel/random/boot_id 2>/dev/null)"',
    `echo "mem $(awk '/^MemTotal:/{t=$2} /^MemAvailable:/{a=$2} END{print t, a}' /proc/meminfo)"`,
    'echo "tck $(getconf CLK_TCK)"',
    SERVICE_PID_SH,
    `if cd ${shQuote(`${host.dataDir}/services`)} 2>/dev/null; then for d in */; do [ -d "$d" ] || continue; n=\${d%/}; svc_pid "$n"; [ -n "$p" ] || continue; st=$(sed 's/.*) //' /proc/$p/stat 2>/dev/null) || continue; r=$(awk '/^VmRSS:/{print $2}' /proc/$p/status 2>/dev/null); echo "proc $n $p \${r:-0} $st"; done; fi`,
    ...disks.map(
      (d) => `if [ -d ${shQuote(d.path)} ]; then echo "disk ${d.what} $(du -sk ${shQuote(d.path)} 2>/dev/null | cut -f1) $(df -Pk ${shQuote(d.path)} | awk 'NR==2{print $4, $6}')"; else echo "disk ${d.what} missing"; fi`,
    ),
  ];
  return lines.join('\n');
}

export interface HostProbe {
  boot?: string;
  memTotalBytes?: number;
  memAvailableBytes?: number;
  processes: { service: string; pid: number; rssBytes: number; cpuS: number; startTicks: number; state: string }[];
  disks: { what: 'store' | 'broker'; bytes: number; fsFreeBytes: number; fs: string }[];
  errors: string[];
}

/**
 * Parses a host's probe output. A `proc` line is `proc <service> <pid> <VmRSS kB> <stat
 * fields from the state on>`: the state is stat's field 3, so utime (14), stime (15) and
 * starttime (22) are at 0-based offsets 11, 12 and 19 of what follows the RSS.
 */
export function parseHostProbe(stdout: string): HostProbe {
  const out: HostProbe = { processes: [], disks: [], errors: [] };
  let tck = 100;
  const lines = stdout.split('\n').map((l) => l.trim()).filter(Boolean);
  const t = lines.find((l) => l.startsWith('tck '));
  if (t && Number(t.split(' ')[1]) > 0) tck = Number(t.split(' ')[1]);
  for (const line of lines) {
    const f = line.split(/\s+/);
    if (f[0] === 'boot' && f[1]) out.boot = f[1];
    else if (f[0] === 'mem') {
      const [total, avail] = [Number(f[1]), Number(f[2])];
      if (total > 0) out.memTotalBytes = total * 1024;
      if (avail >= 0 && f[2] !== undefined) out.memAvailableBytes = avail * 1024;
    } else if (f[0] === 'proc') {
      const [service, pid, rssKb] = [f[1]!, Number(f[2]), Number(f[3])];
      const stat = f.slice(4);
      const utime = Number(stat[11]);
      const stime = Number(stat[12]);
      const start = Number(stat[19]);
      if (!Number.isInteger(pid) || !Number.isFinite(utime) || !Number.isFinite(stime) || !Number.isFinite(rssKb)) {
        out.errors.push(`unreadable process line: ${line.slice(0, 120)}`);
        continue;
      }
      // A zombie (killed, not yet reaped) has no memory: not a live process.
      if (stat[0] === 'Z' || stat[0] === 'X') continue;
      out.processes.push({ service, pid, rssBytes: rssKb * 1024, cpuS: Math.round(((utime + stime) / tck) * 100) / 100, startTicks: start, state: stat[0] ?? '?' });
    } else if (f[0] === 'disk') {
      const what = f[1];
      if (what !== 'store' && what !== 'broker') continue;
      if (f[2] === 'missing') {
        out.errors.push(`${what} data directory missing`);
        continue;
      }
      const [kb, freeKb, fs] = [Number(f[2]), Number(f[3]), f[4]];
      if (!Number.isFinite(kb) || !Number.isFinite(freeKb) || !fs) {
        out.errors.push(`unreadable disk line: ${line.slice(0, 120)}`);
        continue;
      }
      out.disks.push({ what, bytes: kb * 1024, fsFreeBytes: freeKb * 1024, fs });
    }
  }
  return out;
}

function controllerBootId(): string | undefined {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

const errMsg = (e: unknown) => ((e as Error)?.message ?? String(e)).split('\n')[0]!.slice(0, 200);

export class ResourceSampler {
  readonly #o: ResourceSamplerOptions;
  readonly #boot = controllerBootId();
  /** Previous CPU reading per host/service/pid/start, for cpuPct. */
  #prev = new Map<string, { cpuS: number; at: number }>();
  #prevController: { cpuS: number; at: number } | undefined;
  #stop: AbortController | undefined;
  #loop: Promise<void> | undefined;
  samples = 0;
  last: ResourceSample | undefined;

  constructor(o: ResourceSamplerOptions) {
    this.#o = o;
  }

  start(): void {
    if (this.#loop) return;
    this.#stop = new AbortController();
    const signal = this.#stop.signal;
    this.#loop = (async () => {
      while (!signal.aborted) {
        const t0 = Date.now();
        await this.sample().catch(() => undefined);
        await sleep(Math.max(1000, this.#o.intervalMs - (Date.now() - t0)), signal);
      }
    })();
  }

  /** Stops sampling after a last sample (so the end of the run is in the evidence). */
  async stop(): Promise<void> {
    if (!this.#stop) return;
    this.#stop.abort();
    await this.#loop;
    this.#stop = undefined;
    this.#loop = undefined;
    await this.sample().catch(() => undefined);
  }

  /** Takes one sample and appends it to the file; never throws for what it reads. */
  async sample(): Promise<ResourceSample> {
    const o = this.#o;
    const started = Date.now();
    const errors: string[] = [];
    const timeoutMs = o.hostTimeoutMs ?? Math.min(10_000, Math.max(2000, o.intervalMs));
    const hosts = o.rig.hosts;
    // The listing runs beside the host probes, bounded by the same deadline: a paused store
    // makes it an error of this sample, never a late sample.
    const lagP = (async (): Promise<ResourceSample['oracleLag']> => {
      if (!o.listObjects || !o.oracleObjects) return undefined;
      const judged = o.oracleObjects();
      let timer: NodeJS.Timeout | undefined;
      try {
        const listed = await Promise.race([
          o.listObjects(),
          new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs))),
        ]);
        const last = o.oracleLastSampleAt?.();
        return { listed, judged, unjudged: Math.max(0, listed - judged), ...(last ? { lastSampleAgeS: Math.round((Date.now() - Date.parse(last)) / 100) / 10 } : {}) };
      } catch (err) {
        errors.push(`oracle lag: listing failed: ${errMsg(err)}`);
        return undefined;
      } finally {
        clearTimeout(timer);
      }
    })();
    const probes = await Promise.all(
      hosts.map(async (h) => {
        try {
          const r = await o.remote(h.name).exec(hostProbeCommand(h, diskTargets(h, o.rig.kafka.version, storeKindOf(o.rig.store ?? {}), storeDrivesOf(o.rig.store ?? {}))), { check: false, timeoutMs });
          const p = parseHostProbe(r.stdout);
          for (const e of p.errors) errors.push(`${h.name}: ${e}`);
          return p;
        } catch (err) {
          errors.push(`${h.name}: ${errMsg(err)}`);
          return undefined;
        }
      }),
    );
    const lag = await lagP;
    const now = Date.now();
    const processes: ProcessResources[] = [];
    const disks: ResourceSample['disks'] = [];
    const machines = new Map<string, { machine: string; hosts: string[]; memTotalBytes: number; memAvailableBytes: number }>();
    probes.forEach((p, i) => {
      if (!p) return;
      const h = hosts[i]!;
      const machine = p.boot ?? h.name;
      if (p.memTotalBytes !== undefined) {
        const m = machines.get(machine) ?? { machine, hosts: [], memTotalBytes: p.memTotalBytes, memAvailableBytes: p.memAvailableBytes ?? 0 };
        m.hosts.push(h.name);
        machines.set(machine, m);
      }
      for (const q of p.processes) {
        const key = `${h.name}/${q.service}/${q.pid}/${q.startTicks}`;
        const prev = this.#prev.get(key);
        const cpuPct = prev && now > prev.at ? Math.max(0, Math.round(((q.cpuS - prev.cpuS) / ((now - prev.at) / 1000)) * 1000) / 10) : undefined;
        this.#prev.set(key, { cpuS: q.cpuS, at: now });
        processes.push({ host: h.name, role: h.roles[0] ?? 'unknown', service: q.service, pid: q.pid, rssBytes: q.rssBytes, cpuS: q.cpuS, ...(cpuPct !== undefined ? { cpuPct } : {}) });
      }
      for (const d of p.disks) disks.push({ host: h.name, ...d, machine });
    });
    const mem = process.memoryUsage();
    const cpu = process.cpuUsage();
    const cpuS = Math.round((cpu.user + cpu.system) / 10_000) / 100;
    const pc = this.#prevController;
    const controllerPct = pc && now > pc.at ? Math.max(0, Math.round(((cpuS - pc.cpuS) / ((now - pc.at) / 1000)) * 1000) / 10) : undefined;
    this.#prevController = { cpuS, at: now };
    const s: ResourceSample = {
      t: new Date(now).toISOString(),
      durationS: Math.round((Date.now() - started) / 10) / 100,
      produced: o.produced(),
      judged: o.judged(),
      processes,
      controller: { rssBytes: mem.rss, heapUsedBytes: mem.heapUsed, cpuS, ...(controllerPct !== undefined ? { cpuPct: controllerPct } : {}), ...(this.#boot ? { machine: this.#boot } : {}) },
      disks,
      machines: [...machines.values()],
      ...(lag ? { oracleLag: lag } : {}),
      errors,
    };
    this.samples++;
    this.last = s;
    try {
      appendFileSync(o.path, JSON.stringify(s) + '\n');
    } catch {
      /* the evidence directory is gone: nothing to record into */
    }
    return s;
  }
}

/** resources.jsonl read back (torn or unreadable lines skipped); empty when the file is not there. */
export function readResources(file: string): ResourceSample[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const out: ResourceSample[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      out.push(JSON.parse(line) as ResourceSample);
    } catch {
      /* a torn last line */
    }
  }
  return out;
}
