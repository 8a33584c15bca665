import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ResourceSampler, diskTargets, hostProbeCommand, parseHostProbe, readResources } from '../../../../campaigns/runner/resources.ts';
import { resourceWarnings } from '../../../../campaigns/runner/verdict.ts';
import type { ResourceSample } from '../../../../lib/evidence.ts';
import { exhaustionChecks, growthPerMillionEvents, leastSquares } from '../../../../lib/resource-trend.ts';
import type { ExecResult, Remote } from '../../../../rig/remote.ts';
import type { HostSpec, RigState } from '../../../../rig/types.ts';

const MiB = 1048576;

// A probe's output as a rig host prints it (captured from a real run of the command).
const CAPTURED = [
  'boot be632e44-d004-4d49-9bcf-0182aa32906d',
  'mem 24683568 21799664',
  'tck 100',
  'proc kafka 7294 614400 S 7293 7294 7294 0 -1 4194560 17676 1446264 0 157 2530 470 7615 1128 20 0 1 0 54606 5361664 996 18446744073709551615 0',
  'proc clink-worker 8001 9000 Z 7293 8001 8001 0 -1 4194560 0 0 0 0 12 3 0 0 20 0 1 0 60001 0 0 0 0',
  'proc minio 8100 not-a-number S 1',
  'disk broker 20480 79260616 /',
  'disk store missing',
].join('\n');

t.test('parseHostProbe: RSS, CPU seconds and start time from /proc, zombies skipped, bad lines named', async (t) => {
  const p = parseHostProbe(CAPTURED);
  t.equal(p.boot, 'be632e44-d004-4d49-9bcf-0182aa32906d');
  t.equal(p.memTotalBytes, 24683568 * 1024);
  t.equal(p.memAvailableBytes, 21799664 * 1024);
  t.equal(p.processes.length, 1, 'the zombie and the unreadable line are not processes');
  const k = p.processes[0]!;
  t.same({ service: k.service, pid: k.pid, rssBytes: k.rssBytes, startTicks: k.startTicks }, { service: 'kafka', pid: 7294, rssBytes: 614400 * 1024, startTicks: 54606 });
  t.equal(k.cpuS, 30, 'utime 2530 + stime 470 ticks at 100 Hz');
  t.same(p.disks, [{ what: 'broker', bytes: 20480 * 1024, fsFreeBytes: 79260616 * 1024, fs: '/' }]);
  t.equal(p.errors.length, 2);
  t.match(p.errors.join('\n'), /unreadable process line: proc minio/);
  t.match(p.errors.join('\n'), /store data directory missing/);
  // Another tick rate scales the CPU seconds.
  t.equal(parseHostProbe(CAPTURED.replace('tck 100', 'tck 250')).processes[0]!.cpuS, 12);
});

/** A Remote that runs commands with the local bash (a real shell, real /proc); `fail` makes exec throw. */
function localRemote(host: HostSpec, fail = false): Remote {
  return {
    host,
    async exec(cmd: string): Promise<ExecResult> {
      if (fail) throw new Error(`${host.name}: connect ETIMEDOUT`);
      const r = spawnSync('bash', ['-c', cmd], { encoding: 'utf8' });
      return { code: r.status, stdout: r.stdout, stderr: r.stderr };
    },
    upload: () => Promise.reject(new Error('unused')),
    writeFile: () => Promise.reject(new Error('unused')),
    readFile: () => Promise.reject(new Error('unused')),
    download: () => Promise.reject(new Error('unused')),
    close: async () => {},
  };
}

function hostDir(t: { teardown(fn: () => void): void }, name: string, roles: HostSpec['roles']): HostSpec {
  const dir = mkdtempSync(path.join(os.tmpdir(), `clink-qual-res-${name}-`));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return { name, address: '127.0.0.1', roles, dataDir: dir, ssh: { user: 'root', port: 22, privateKeyPath: '', knownHostsPath: '' } };
}

t.test('the probe command, run for real: this process as a service, a data directory of known size', async (t) => {
  const host = hostDir(t, 'store', ['store']);
  mkdirSync(path.join(host.dataDir, 'services', 'minio'), { recursive: true });
  writeFileSync(path.join(host.dataDir, 'services', 'minio', 'pid'), `${process.pid}\n`);
  mkdirSync(path.join(host.dataDir, 'minio-data'));
  writeFileSync(path.join(host.dataDir, 'minio-data', 'part.1'), Buffer.alloc(3 * MiB, 7));
  const p = parseHostProbe(localRemoteOut(host));
  t.same(p.errors, []);
  const me = p.processes.find((x) => x.pid === process.pid);
  t.ok(me, 'this process is found through its pid file');
  const rss = process.memoryUsage().rss;
  t.ok(me!.rssBytes > rss / 2 && me!.rssBytes < rss * 2, `VmRSS ${me!.rssBytes} is near process.memoryUsage().rss ${rss}`);
  t.ok(me!.cpuS > 0, 'CPU seconds read');
  const d = p.disks.find((x) => x.what === 'store');
  t.ok(d && d.bytes >= 3 * MiB, 'du counts the 3 MiB written');
  t.ok(d!.fsFreeBytes > 0);
  t.ok(p.memTotalBytes! >= os.totalmem() * 0.9 && p.memTotalBytes! <= os.totalmem() * 1.1, 'MemTotal matches os.totalmem()');
});

function localRemoteOut(host: HostSpec): string {
  const r = spawnSync('bash', ['-c', hostProbeCommand(host, diskTargets(host, '4.1.1'))], { encoding: 'utf8' });
  return r.stdout;
}

t.test("the store's disk is the data directory of the store the rig runs", async (t) => {
  const host = hostDir(t, 'store', ['store']);
  t.same(diskTargets(host, '4.1.1'), [{ what: 'store', path: `${host.dataDir}/minio-data` }], 'MinIO by default');
  t.same(diskTargets(host, '4.1.1', 'seaweedfs'), [{ what: 'store', path: `${host.dataDir}/seaweedfs-data` }]);
  t.same(diskTargets(hostDir(t, 'worker-1', ['worker']), '4.1.1', 'seaweedfs'), [], 'no store disk on another host');
});

t.test('ResourceSampler: a host that does not answer is an error in the sample, never fatal; CPU share from the second sample', async (t) => {
  const store = hostDir(t, 'store', ['store']);
  const broker = hostDir(t, 'broker-1', ['broker']);
  mkdirSync(path.join(store.dataDir, 'services', 'minio'), { recursive: true });
  writeFileSync(path.join(store.dataDir, 'services', 'minio', 'pid'), `${process.pid}\n`);
  const rig = { hosts: [store, broker], kafka: { version: '4.1.1' } } as unknown as RigState;
  const out = path.join(store.dataDir, 'resources.jsonl');
  let produced = 1000;
  const sampler = new ResourceSampler({
    rig,
    remote: (n) => localRemote(n === 'store' ? store : broker, n === 'broker-1'),
    path: out,
    intervalMs: 1000,
    produced: () => produced,
    judged: () => 900,
    listObjects: async () => 12,
    oracleObjects: () => 10,
    oracleLastSampleAt: () => new Date(Date.now() - 3000).toISOString(),
  });
  const a = await sampler.sample();
  for (let i = 0; i < 2e6; i++) produced += i % 2; // some CPU between the samples
  const b = await sampler.sample();
  t.equal(a.processes.length, 1);
  t.equal(a.processes[0]!.role, 'store');
  t.equal(a.processes[0]!.cpuPct, undefined, 'no CPU share on the first sample');
  t.type(b.processes[0]!.cpuPct, 'number');
  t.type(b.controller.cpuPct, 'number');
  t.match(a.errors.join('\n'), /broker-1: .*ETIMEDOUT/);
  t.match(a.errors.join('\n'), /store: store data directory missing/);
  t.same(a.oracleLag && { listed: a.oracleLag.listed, judged: a.oracleLag.judged, unjudged: a.oracleLag.unjudged }, { listed: 12, judged: 10, unjudged: 2 });
  t.ok(a.oracleLag!.lastSampleAgeS! >= 2.9);
  t.ok(a.durationS >= 0 && a.durationS < 10);
  t.ok(a.controller.rssBytes > 0);
  const back = readResources(out);
  t.equal(back.length, 2, 'both samples appended');
  t.equal(back[1]!.produced, produced);
  writeFileSync(out, readFileSync(out, 'utf8') + '{"torn":');
  t.equal(readResources(out).length, 2, 'a torn last line is skipped');
});

t.test('least squares and growth per million events', async (t) => {
  const fit = leastSquares([0, 1, 2, 3], [3, 5, 7, 9])!;
  t.equal(fit.slope, 2);
  t.equal(fit.intercept, 3);
  t.equal(leastSquares([1, 1], [2, 3]), undefined, 'no slope without distinct x');
  const g = growthPerMillionEvents([0, 500_000, 1_000_000, 2_000_000].map((p, i) => ({ tMs: i * 1000, produced: p, value: 100 * MiB + p * 40 })));
  t.equal(Math.round(g! / MiB), Math.round((40e6) / MiB), '40 bytes an event = 40 MB per million');
});

/** Samples every 60 s over `minutes`, one machine with MemTotal `memTotal`, a process growing `growPerS` bytes/s, disk growing `diskPerS` with `free` left. */
function samples(minutes: number, memTotal: number, start: number, growPerS: number, diskPerS: number, free: number): ResourceSample[] {
  const T = Date.parse('2026-12-03T07:00:00Z');
  return Array.from({ length: minutes + 1 }, (_, i) => ({
    t: new Date(T + i * 60_000).toISOString(),
    durationS: 0.4,
    produced: i * 60_000,
    judged: i * 59_000,
    processes: [{ host: 'broker-1', role: 'broker', service: 'kafka', pid: 10, rssBytes: start + growPerS * i * 60, cpuS: i }],
    controller: { rssBytes: 200 * MiB, heapUsedBytes: 50 * MiB, cpuS: i, machine: 'm1' },
    disks: [{ host: 'store', what: 'store' as const, bytes: 10 * MiB + diskPerS * i * 60, fs: '/', fsFreeBytes: free - diskPerS * i * 60, machine: 'm1' }],
    machines: [{ machine: 'm1', hosts: ['broker-1', 'store'], memTotalBytes: memTotal, memAvailableBytes: memTotal / 2 }],
    errors: [],
  }));
}

t.test('exhaustion: a trend that reaches MemTotal or the free disk within twice the campaign length warns; a flat one does not', async (t) => {
  // 30 min campaign: horizon 60 min. 1 GiB now + 1 MiB/s → +3.5 GiB in 60 min; MemTotal 4 GiB → warns.
  const leaking = samples(30, 4096 * MiB, 1024 * MiB, MiB * 0.6, 0, 50_000 * MiB);
  const checks = exhaustionChecks(leaking);
  const mem = checks.find((c) => c.kind === 'memory')!;
  t.ok(Math.abs(mem.slopePerS - MiB * 0.6) < 1, 'slope is the leak rate');
  t.equal(mem.horizonS, 3600);
  t.ok(mem.exhausts);
  t.ok(mem.secondsToLimit! > 0 && mem.secondsToLimit! < 3600);
  const w = resourceWarnings(leaking);
  t.equal(w.length, 1);
  t.match(w[0]!, /^resources: the memory of machine m1 .*would reach its limit \(MemTotal 4,096 MiB\) in about \d+ min, within twice the campaign's length \(60 min\)/);
  // The same leak on a 64 GiB machine: no warning.
  t.same(resourceWarnings(samples(30, 65536 * MiB, 1024 * MiB, MiB * 0.6, 0, 50_000 * MiB)), []);
  // Flat memory: never reaches it.
  const flat = exhaustionChecks(samples(30, 4096 * MiB, 3000 * MiB, 0, 0, 50_000 * MiB)).find((c) => c.kind === 'memory')!;
  t.equal(flat.secondsToLimit, undefined);
  t.notOk(flat.exhausts);
  // Disk: 2 MiB/s with 4 GiB free at the end → 2048 s = 34 min < 60 min: warns.
  const disk = samples(30, 65536 * MiB, 1024 * MiB, 0, 2 * MiB, 4096 * MiB + 2 * MiB * 1800);
  const dw = resourceWarnings(disk);
  t.equal(dw.length, 1);
  t.match(dw[0]!, /store disk on \/ .*4,096 MiB free\) in about 34 min/);
  // Fitted from the soak's start: a start-up jump before it does not count.
  const jump = samples(30, 4096 * MiB, 1024 * MiB, 0, 0, 50_000 * MiB).map((s, i) => (i < 5 ? { ...s, processes: [{ ...s.processes[0]!, rssBytes: 100 * MiB * (i + 1) }] } : s));
  t.ok(exhaustionChecks(jump).find((c) => c.kind === 'memory')!.slopePerS > 0, 'over all samples the jump is a trend');
  t.equal(exhaustionChecks(jump, Date.parse(jump[5]!.t)).find((c) => c.kind === 'memory')!.secondsToLimit, undefined, 'from the soak on it is flat');
});

t.test('the verdict: an exhausting trend is a warning on a PASS, never a reason', async (t) => {
  const { decideVerdict } = await import('../../../../campaigns/runner/verdict.ts');
  const { zeroCounters } = await import('../../../../lib/evidence.ts');
  const input = {
    runId: 'r',
    startedAt: 'a',
    endedAt: 'b',
    aborted: false,
    gate: { passed: true, conditions: [{ name: 'input flowing', passed: true, evidence: 'x' }] },
    chaos: [],
    mandatoryPoints: [],
    oracle: zeroCounters(),
    recount: { t: 'x', objects: 1, lines: 10, distinctEvents: 10, bytes: 1, counters: zeroCounters(), perPartition: [], durationS: 1 },
    produced: 10,
    drainConverged: true,
    pendingUploads: 0,
  };
  const leaking = samples(30, 4096 * MiB, 1024 * MiB, MiB * 0.6, 0, 50_000 * MiB);
  const v = decideVerdict({ ...input, resources: leaking, soakStartMs: Date.parse(leaking[0]!.t) });
  t.equal(v.verdict, 'PASS');
  t.equal(v.exitCode, 0);
  t.same(v.reasons, []);
  t.equal(v.warnings.filter((w) => w.startsWith('resources: the memory of machine m1')).length, 1);
  t.same(decideVerdict({ ...input, resources: samples(30, 65536 * MiB, 1024 * MiB, 0, 0, 50_000 * MiB) }).warnings, [], 'no warning for a flat trend');
});

t.test('a listing that does not answer (a paused store) is an error of the sample, bounded by the deadline', async (t) => {
  const store = hostDir(t, 'store', ['store']);
  const rig = { hosts: [store], kafka: { version: '4.1.1' } } as unknown as RigState;
  const sampler = new ResourceSampler({
    rig,
    remote: () => localRemote(store),
    path: path.join(store.dataDir, 'resources.jsonl'),
    intervalMs: 1000,
    hostTimeoutMs: 500,
    produced: () => 0,
    judged: () => 0,
    listObjects: () => new Promise<number>(() => {}),
    oracleObjects: () => 0,
  });
  const s = await sampler.sample();
  t.equal(s.oracleLag, undefined);
  t.match(s.errors.join('\n'), /oracle lag: listing failed: no answer within 0\.5 s/);
  t.ok(s.durationS < 2, `the sample took ${s.durationS} s`);
});
