/**
 * Where the time goes at the maximum (bench/time-split.ts): CPU per process between two
 * resource samples, the barrier durations from a checkpoint log, each subtask's last timing
 * line, the split read from collected logs, and both tables.
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { barrierDurations, cpuBetween, cpuTable, lastTimings, readEngineSplit, splitTable } from '../../../bench/time-split.ts';
import { encodeRecord } from '../../../engine/clink/durable-log.ts';
import type { ResourceSample } from '../../../lib/evidence.ts';

const sample = (t: string, controllerCpuS: number, procs: [string, string, number, number][]): ResourceSample =>
  ({
    t,
    durationS: 0.1,
    produced: 0,
    judged: 0,
    processes: procs.map(([host, service, pid, cpuS]) => ({ host, role: 'x', service, pid, rssBytes: 1, cpuS })),
    controller: { rssBytes: 1, heapUsedBytes: 1, cpuS: controllerCpuS },
    disks: [],
    machines: [],
    errors: [],
  }) as ResourceSample;

t.test('CPU per process over the window, busiest first, this process last; a restarted process is not compared', async (t) => {
  const before = sample('2026-12-05T07:00:00.000Z', 10, [['broker-1', 'kafka', 11, 100], ['worker-1', 'clink-worker', 21, 5], ['worker-2', 'clink-worker', 22, 7]]);
  const after = sample('2026-12-05T07:00:40.000Z', 30, [['broker-1', 'kafka', 11, 112], ['worker-1', 'clink-worker', 21, 41], ['worker-2', 'clink-worker', 99, 3]]);
  const c = cpuBetween(before, after);
  t.equal(c.windowS, 40);
  t.same(c.rows, [
    { what: 'worker-1/clink-worker', cpuS: 36, pct: 90 },
    { what: 'broker-1/kafka', cpuS: 12, pct: 30 },
    { what: 'controller (producer + watcher)', cpuS: 20, pct: 50 },
  ], 'worker-2 restarted (another pid): left out');
  const table = cpuTable(c).split('\n');
  t.match(table[0], /process\s+CPU s\s+% of a core/);
  t.match(table[1], /worker-1\/clink-worker\s+36\.0\s+90$/);
  t.match(table.at(-1), /total\s+68\.0\s+170$/, 'the total: 1.7 cores busy');
  t.same(cpuBetween(after, before).rows, [], 'a window that is not after its start: nothing');
  t.same(cpuBetween(before, after, 'producer + watcher + baseline thread').rows.at(-1), { what: 'controller (producer + watcher + baseline thread)', cpuS: 20, pct: 50 }, 'this process labelled with what the caller says it ran');
});

t.test('the checkpoint barrier: barrier record → completed record, per completed checkpoint', async (t) => {
  const log = [
    { t: 'epoch', epoch: 1, at: '2026-12-05T07:00:00.000Z' },
    { t: 'barrier', id: 1, epoch: 1, at: '2026-12-05T07:00:08.000Z' },
    { t: 'complete', id: 1, epoch: 1, at: '2026-12-05T07:00:09.250Z', offsets: {}, handles: {} },
    { t: 'barrier', id: 2, epoch: 1, at: '2026-12-05T07:00:16.000Z' },
    { t: 'barrier', id: 3, epoch: 2, at: '2026-12-05T07:00:30.000Z' },
    { t: 'complete', id: 3, epoch: 2, at: '2026-12-05T07:00:32.000Z', offsets: {}, handles: {} },
  ]
    .map(encodeRecord)
    .join('');
  t.same(barrierDurations(log), [1250, 2000], 'checkpoint 2 was abandoned: no duration');
  t.same(barrierDurations(log + 'deadbeef {"t":"torn'), [1250, 2000], 'a torn tail is ignored');
});

const timing = (s: number, e: number, readingMs: number, extra = '') => `2026-12-05T07:00:00Z clink worker: subtask ${s} epoch ${e} timing: readingMs=${readingMs} records=800000 idleMs=2000 prepares=10 prepareMs=3000 commits=10 commitMs=1000 fetches=400 fetchMs=6000 queueFullMs=500${extra}`;

t.test("each subtask's last timing line, the highest epoch's", async (t) => {
  const f = lastTimings(['noise', timing(1, 1, 5000), timing(0, 1, 5000), timing(1, 1, 10_000), timing(0, 2, 1000), timing(0, 1, 20_000)]);
  t.same(f.map((x) => [x.subtask, x.epoch, x.readingMs]), [[0, 2, 1000], [1, 1, 10_000]]);
});

t.test('the split read from collected logs, and its table', async (t) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'time-split-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(path.join(dir, 'worker-1'));
  mkdirSync(path.join(dir, 'coordinator'));
  writeFileSync(path.join(dir, 'worker-1', 'out.log'), [timing(0, 1, 10_000), timing(0, 1, 20_000), 'clink worker: other'].join('\n'));
  writeFileSync(path.join(dir, 'coordinator', 'checkpoints.log'), [{ t: 'barrier', id: 1, epoch: 1, at: '2026-12-05T07:00:08.000Z' }, { t: 'complete', id: 1, epoch: 1, at: '2026-12-05T07:00:08.900Z' }].map(encodeRecord).join(''));
  const s = readEngineSplit(dir);
  t.same(s.barriersMs, [900]);
  t.equal(s.subtasks.length, 1);
  t.equal(s.subtasks[0]!.readingMs, 20_000, 'the last line of the subtask');
  const table = splitTable(s).split('\n');
  t.match(table[0], /subtask\s+reading s\s+records\/s\s+idle\s+prepare \(S3 uploads\)\s+commit \(S3 complete\)\s+other \(records → sink\)\s+fetches\s+ms\/fetch\s+fetch queue full/);
  t.match(table[1], /^\s+0\s+20\.0\s+40000\s+10 %\s+15 % \(10× 300 ms\)\s+5 % \(10× 100 ms\)\s+70 %\s+400\s+15\.0\s+3 %$/);
  t.equal(table[2], '  checkpoint barrier → completed record: 1 checkpoints, median 900 ms, max 900 ms');
  t.same(readEngineSplit(path.join(dir, 'nothing')), { subtasks: [], barriersMs: [] });
  t.match(splitTable({ subtasks: [], barriersMs: [] }), /no timing lines[\s\S]*no completed checkpoint/);
});
