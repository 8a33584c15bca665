import t, { type Test } from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { campaignText } from '../../../../campaigns/probe-text.ts';

// Issue 29 item 3, through the CLI: each probe of `campaign plan` ends with exit 254 and a
// message naming the file, line and field (or the file), within 5 s and 300 MB of memory.
// /usr/bin/time measures the child's peak resident memory and its CPU time (user + system):
// on a shared 2-core machine the wall clock of a node start alone varies from 1 s to 15 s
// with the other users' load, so the 5 s bound is on the work the command does; the wall
// clock is bounded too (a hang on a FIFO, say), by a limit that load cannot reach. The wall
// time against the 5 s target is a benchmark's figure: `npm run bench -- input-probes`.
const repo = path.join(import.meta.dirname, '../../../..');
const cli = path.join(repo, 'bin', 'clink-qual.ts');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'cq-plan-bounds-'));
const MAX_CPU_MS = 5000;
const MAX_WALL_MS = 45_000;
const MAX_RSS_KB = 300 * 1024;

/** Runs the CLI under /usr/bin/time: exit status, output, peak memory (KB), CPU time and wall time (ms). */
export function runBounded(args: string[], cwd = repo) {
  const timeFile = path.join(tmp, `time-${process.hrtime.bigint()}`);
  const started = Date.now();
  const r = spawnSync('/usr/bin/time', ['-f', '%M %U %S', '-o', timeFile, process.execPath, cli, ...args], { cwd, encoding: 'utf8', timeout: 60_000 });
  const ms = Date.now() - started;
  const [rss, user, sys] = readFileSync(timeFile, 'utf8').trim().split('\n').pop()!.split(' ').map(Number);
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, ms, cpuMs: Math.round((user! + sys!) * 1000), rssKB: rss! };
}

let n = 0;
function file(text: string): string {
  const f = path.join(tmp, `c${++n}.yaml`);
  writeFileSync(f, text);
  return f;
}

/** Asserts a bounded exit 254 whose stderr matches `message`. */
function refused(t: Test, args: string[], message: RegExp) {
  const r = runBounded(args);
  t.equal(r.status, 254, r.stderr);
  t.match(r.stderr, message);
  t.ok(r.cpuMs < MAX_CPU_MS, `within ${MAX_CPU_MS} ms of CPU (took ${r.cpuMs} ms)`);
  t.ok(r.ms < MAX_WALL_MS, `ended (${r.ms} ms of wall time)`);
  t.ok(r.rssKB < MAX_RSS_KB, `under 300 MB (peak ${Math.round(r.rssKB / 1024)} MB)`);
  return r;
}

t.test('a valid campaign plans (the probe file itself is fine)', async (t) => {
  const r = runBounded(['campaign', 'plan', file(campaignText())]);
  t.equal(r.status, 0, r.stderr);
  t.match(r.stdout, /faults: 2 \(worker-kill 2\)/);
});

t.test('a composition of 1,000 steps × count 5000 is refused before planning: planned faults are counted by step', async (t) => {
  const steps = Array.from({ length: 1000 }, (_, i) => `      - { kind: worker-kill, afterS: ${i % 10} }`).join('\n');
  const f = file(
    campaignText({
      workload: 'workload: { rate: 300, partitions: 4, keys: 50000, checkpointIntervalS: 6, soakS: 86400 }',
      faults: 'faults: []',
      compositions: `compositions:\n  - name: big\n    count: 5000\n    steps:\n${steps}`,
      schedule: 'schedule: { startAfterS: 10, spacingS: 1 }',
    }),
  );
  refused(t, ['campaign', 'plan', f], /c\d+\.yaml:10: compositions\[0\]\.count: 5000000 planned faults; at most 10000 in one campaign/);
});

t.test('only a regular campaign file of at most 1 MiB is read', async (t) => {
  const zero = path.join(tmp, 'zero.yaml');
  symlinkSync('/dev/zero', zero);
  refused(t, ['campaign', 'plan', zero], /campaign .*zero\.yaml is a character device: only a regular file is read/);
  const fifo = path.join(tmp, 'fifo.yaml');
  t.equal(spawnSync('mkfifo', [fifo]).status, 0);
  refused(t, ['campaign', 'plan', fifo], /campaign .*fifo\.yaml is a FIFO \(named pipe\): only a regular file is read/);
  const dir = path.join(tmp, 'dir.yaml');
  mkdirSync(dir);
  refused(t, ['campaign', 'plan', dir], /campaign .*dir\.yaml is a directory/);
  const big = file(campaignText().replace('name: probe', `name: probe\ndescription: "${'x'.repeat(20 * 1024 * 1024)}"`));
  refused(t, ['campaign', 'plan', big], /campaign .*\.yaml is \d+ bytes: at most 1048576 bytes are read/);
});

t.test("a fault held past the soak's end is refused at its field (afterS + durationS count against the soak)", async (t) => {
  const late = file(campaignText({ compositions: 'compositions:\n  - name: late\n    steps:\n      - { kind: worker-kill, afterS: 86400 }' }));
  refused(t, ['campaign', 'plan', late], /c\d+\.yaml:12: compositions\[0\]\.steps\[0\]\.afterS: ends past the soak: the last slot may start at 43 s .* \+ afterS 86400 s \+ durationS 0 s = 86443 s > workload\.soakS 300 s/);
  const long = file(campaignText({ faults: 'faults:\n  - { kind: store-outage, durationS: 86400 }' }));
  refused(t, ['campaign', 'plan', long], /c\d+\.yaml:8: faults\[0\]\.durationS: ends past the soak: .* = 86413 s > workload\.soakS 300 s/);
});

t.test('durations and checkpoint intervals below their physical minimums are refused', async (t) => {
  const tiny = file(campaignText({ faults: 'faults:\n  - { kind: partition, durationS: 5e-324 }' }));
  refused(t, ['campaign', 'plan', tiny], /c\d+\.yaml:8: faults\[0\]\.durationS: must be >= 1/);
  const ckpt = file(campaignText({ workload: 'workload: { rate: 300, partitions: 4, keys: 50000, checkpointIntervalS: 5e-324, soakS: 300 }' }));
  refused(t, ['campaign', 'plan', ckpt], /c\d+\.yaml:5: workload\.checkpointIntervalS: must be >= 1/);
  const pause = file(campaignText({ faults: 'faults:\n  - { kind: process-pause, durationS: 2 }' }));
  refused(t, ['campaign', 'plan', pause], /c\d+\.yaml:8: faults\[0\]\.durationS: a process-pause of 2 s is too short to mean anything: at least 6 s/);
  const pauseCkpt = file(
    campaignText({ workload: 'workload: { rate: 300, partitions: 4, keys: 50000, checkpointIntervalS: 10, soakS: 300 }', faults: 'faults:\n  - { kind: process-pause, durationS: 8 }' }),
  );
  refused(t, ['campaign', 'plan', pauseCkpt], /faults\[0\]\.durationS: a process-pause of 8 s is too short to mean anything: at least 10 s/);
  // A protocol point that pauses its process holds it for durationS, which must outlast the loss detection; a killing one holds nothing.
  const pointNoHold = file(campaignText({ faults: 'faults:\n  - { kind: protocol-point, points: [sink.after-prepare], variant: pause }' }));
  refused(t, ['campaign', 'plan', pointNoHold], /c\d+\.yaml:8: faults\[0\]\.variant: a protocol point with variant pause holds its process stopped for durationS seconds: give durationS/);
  const pointShort = file(campaignText({ faults: 'faults:\n  - { kind: protocol-point, points: [sink.after-prepare], variant: pause, durationS: 3 }' }));
  refused(t, ['campaign', 'plan', pointShort], /faults\[0\]\.durationS: a pause at a protocol point of 3 s is too short to outlast the engine's loss detection: at least 6 s/);
  const killHeld = file(campaignText({ faults: 'faults:\n  - { kind: protocol-point, points: [sink.after-prepare], durationS: 10 }' }));
  refused(t, ['campaign', 'plan', killHeld], /faults\[0\]\.durationS: durationS is for a protocol point with variant pause/);
});

t.test("engine.name is looked up as the engine's own name: __proto__, toString, constructor are unknown engines (254, at the field)", async (t) => {
  for (const name of ['__proto__', 'toString', 'constructor']) {
    refused(t, ['campaign', 'plan', file(campaignText({ engine: `engine: { name: ${name}, mutant: none }` }))], new RegExp(`c\\d+\\.yaml:4: engine\\.name: unknown engine '${name}' \\(known: clink, flink\\)`));
  }
});

t.test("gate.fault must be a kind the gate can land with its kind alone", async (t) => {
  for (const kind of ['protocol-point', 'clock-step', 'store-outage']) {
    refused(t, ['campaign', 'plan', file(campaignText({ gate: `gate: { deadlineS: 60, fault: ${kind} }` }))], new RegExp(`c\\d+\\.yaml:6: gate\\.fault: ${kind} cannot be the gate's fault.*use one of worker-kill, coordinator-kill, broker-restart`));
  }
});

t.test('two steps of one composition holding the same kind on a target they may share, overlapping in time, are refused', async (t) => {
  const twoOutages = 'compositions:\n  - name: twice\n    steps:\n      - { kind: store-outage, durationS: 10 }\n      - { kind: store-outage, afterS: 5, durationS: 10 }';
  refused(t, ['campaign', 'plan', file(campaignText({ compositions: twoOutages }))], /c\d+\.yaml:13: compositions\[0\]\.steps\[1\]\.afterS: overlaps steps\[0\]: both hold store-outage on store \(steps\[0\] from 0 s to 10 s, this one from 5 s\)/);
  const workers = 'compositions:\n  - name: cut\n    steps:\n      - { kind: partition, targets: [worker-1, worker-2], durationS: 10 }\n      - { kind: partition, targets: [worker-2, worker-3], afterS: 3, durationS: 10 }';
  refused(t, ['campaign', 'plan', file(campaignText({ compositions: workers }))], /steps\[1\]\.afterS: overlaps steps\[0\]: both hold partition on worker-2/);
  // One after the other, or on targets they cannot share: planned.
  const apart = 'compositions:\n  - name: apart\n    steps:\n      - { kind: store-outage, durationS: 5 }\n      - { kind: store-outage, afterS: 5, durationS: 5 }\n      - { kind: partition, targets: [worker-1], durationS: 10 }\n      - { kind: partition, targets: [worker-2], durationS: 10 }';
  const ok = runBounded(['campaign', 'plan', file(campaignText({ compositions: apart, schedule: 'schedule: { startAfterS: 10, spacingS: 30 }' }))]);
  t.equal(ok.status, 0, ok.stderr);
});

t.test("an inventory rig's targets are checked against the inventory's hosts and roles", async (t) => {
  const host = (name: string, role: string, i: number) =>
    `  - { name: ${name}, address: 10.0.0.${i}, roles: [${role}], ssh: { user: root, key: id, knownHosts: known }, dataDir: /opt/cq }\n`;
  const inv = path.join(tmp, 'inventory.yaml');
  writeFileSync(inv, `hosts:\n${host('worker-1', 'worker', 1)}${host('worker-2', 'worker', 2)}${host('coordinator', 'coordinator', 3)}${host('broker-1', 'broker', 4)}${host('store', 'store', 5)}`);
  const withInventory = (faults: string) => campaignText({ faults }).replace('rig: { kind: local }', 'rig: { kind: inventory, file: inventory.yaml }');
  refused(t, ['campaign', 'plan', file(withInventory('faults:\n  - { kind: worker-kill, targets: [worker-3] }'))], /c\d+\.yaml:8: faults\[0\]\.targets\[0\]: 'worker-3' is not a host of this rig \(worker-kill targets .*: worker-1, worker-2\)/);
  refused(t, ['campaign', 'plan', file(withInventory('faults:\n  - { kind: broker-restart, targets: [broker-2] }'))], /'broker-2' is not a host of this rig/);
  const ok = runBounded(['campaign', 'plan', file(withInventory('faults:\n  - { kind: worker-kill, count: 2 }'))]);
  t.equal(ok.status, 0, ok.stderr);
  t.notMatch(ok.stdout, /worker-3/, "default targets are the inventory's workers");
  writeFileSync(inv, `hosts:\n${host('worker-1', 'worker', 1)}${host('coordinator', 'coordinator', 3)}${host('broker-1', 'broker', 4)}${host('store', 'store', 5)}`.replace('dataDir: /opt/cq', 'dataDir: /etc'));
  refused(t, ['campaign', 'plan', file(withInventory('faults:\n  - { kind: worker-kill }'))], /c\d+\.yaml:3: rig\.file: the inventory is not valid: inventory\.yaml:2: hosts\[0\]\.dataDir: is the system directory \/etc: /);
});
