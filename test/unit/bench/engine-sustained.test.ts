/**
 * The sustained engine benchmark's pure parts: options, the pacing schedule, the send log,
 * percentiles, the "kept up" decision, the max-rate selection, the ratio and its bound, the
 * RESULT line and the rig's peak RSS; the watcher and the paced producer against in-memory
 * fakes of the store and of LineProducer; and, through the CLI, --help and a refused ladder
 * (neither touches the rig).
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import t from 'tap';
import { GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import {
  CLIMB_DEFAULTS,
  SendLog,
  Watcher,
  awaitDrain,
  digitsAt,
  dueNow,
  keptUp,
  maxSustained,
  memorySummary,
  parseOptions,
  peakRss,
  percentile,
  produceAtRate,
  ratioVsBaseline,
  resultLine,
  climbResultLine,
  ratioAtBaselineMax,
  parseOptions as parseSustained,
  runClimb,
  type StepResult,
  splitBatches,
  summarize,
  totalRss,
  type Rung,
} from '../../../bench/engine-sustained.ts';
import type { ResourceSample } from '../../../lib/evidence.ts';
import { repoRoot } from '../../../lib/paths.ts';

t.test('options: defaults, overrides, help, and unusable values refused', async (t) => {
  const climb = { start: 40_000, resolution: 0.05, maxRungs: 12, confirmations: 1, step: 1000 };
  t.same(CLIMB_DEFAULTS, climb);
  t.same(parseOptions([]), { rates: null, climb, partitions: 4, checkpointMs: 8000, durationMs: 88_000, producerDurationMs: 30_000, producers: 1, producerThreads: false, producerJvm: false, producerNice: null, maxSend: 5000, tickMs: 50, keep: false }, 'no --rates: the climb; duration defaults to 11 checkpoints');
  const o = parseOptions(['--rates', '100,250.5,1000', '--partitions=8', '--checkpoint-ms', '5000', '--keep']);
  t.same(o, { rates: [100, 250.5, 1000], climb, partitions: 8, checkpointMs: 5000, durationMs: 55_000, producerDurationMs: 30_000, producers: 1, producerThreads: false, producerJvm: false, producerNice: null, maxSend: 5000, tickMs: 50, keep: true }, 'the default duration follows --checkpoint-ms');
  t.same(
    parseOptions(['--start', '80000', '--resolution', '0.1', '--max-rungs', '6', '--confirmations', '0', '--step', '500', '--producer-duration-s', '1m', '--producers', '4', '--producer-threads']),
    { rates: null, climb: { start: 80_000, resolution: 0.1, maxRungs: 6, confirmations: 0, step: 500 }, partitions: 4, checkpointMs: 8000, durationMs: 88_000, producerDurationMs: 60_000, producers: 4, producerThreads: true, producerJvm: false, producerNice: null, maxSend: 5000, tickMs: 50, keep: false },
    "the climb's options",
  );
  t.equal((parseOptions(['--producer-threads', '--producer-nice=-10']) as { producerNice: number }).producerNice, -10, '--producer-nice');
  t.throws(() => parseOptions(['--producer-nice=-10']), /--producer-nice: only with --producer-threads/);
  t.same((({ producerJvm, producerNice, producerThreads }) => ({ producerJvm, producerNice, producerThreads }))(parseOptions(['--producer-jvm', '--producer-nice=-10']) as { producerJvm: boolean; producerNice: number; producerThreads: boolean }), { producerJvm: true, producerNice: -10, producerThreads: false }, '--producer-jvm, with a nice value');
  t.throws(() => parseOptions(['--producer-jvm', '--producer-threads']), /choose one/);
  t.equal((parseOptions(['--max-send', '20000']) as { maxSend: number }).maxSend, 20_000, '--max-send');
  t.throws(() => parseOptions(['--max-send', '0']), /--max-send: "0" is not an integer ≥ 1/);
  t.throws(() => parseOptions(['--producer-threads', '--producer-nice=-21']), /--producer-nice: "-21" is not an integer in -20..19/);
  t.throws(() => parseOptions(['--producer-threads', '--producer-nice', 'high']), /--producer-nice: "high"/);
  t.throws(() => parseOptions(['--resolution', '1']), /--resolution: 1 is not below 1/);
  t.throws(() => parseOptions(['--resolution', '0']), /--resolution: "0" is not a number ≥ 0.001/);
  t.throws(() => parseOptions(['--start', '500']), /--start: "500" is not an integer ≥ 1000/, 'the start is at least one step');
  t.throws(() => parseOptions(['--max-rungs', '0']), /--max-rungs/);
  t.throws(() => parseOptions(['--confirmations', '-1']), /--confirmations/);
  t.throws(() => parseOptions(['--producers', '5']), /--producers: 5 producers for 4 partitions/);
  t.throws(() => parseOptions(['--producers', '0']), /--producers/);
  t.throws(() => parseOptions(['--producer-duration-s', 'soon']), /producer-duration-s/);
  t.equal((parseOptions(['--duration-s', '30']) as { durationMs: number }).durationMs, 30_000, '--duration-s overrides');
  t.equal(parseOptions(['--help']), 'help');
  t.equal(parseOptions(['-h', '--rates', '1']), 'help');
  t.throws(() => parseOptions(['--rates', '5000,2000']), /not ascending \(5000 then 2000\)/);
  t.throws(() => parseOptions(['--rates', '2000,2000']), /not ascending/);
  t.throws(() => parseOptions(['--rates', '1000,,2000']), /--rates: "" is not/);
  t.throws(() => parseOptions(['--rates', 'fast']), /--rates: "fast"/);
  t.throws(() => parseOptions(['--rates', '0']), /--rates: "0" is not a number ≥ 1/);
  t.throws(() => parseOptions(['--partitions', '0']), /--partitions/);
  t.throws(() => parseOptions(['--partitions', '2.5']), /--partitions: "2.5" is not an integer/);
  t.throws(() => parseOptions(['--checkpoint-ms', '500']), /--checkpoint-ms/);
  t.throws(() => parseOptions(['--duration-s', '-1']), /--duration-s/);
  t.throws(() => parseOptions(['--bogus']), /bogus/);
  t.throws(() => parseOptions(['10400']), /positional|Unexpected argument/i, 'a bare number is not a rate');
});

t.test('pacing: cumulative schedule, late ticks catch up, never ahead of the rate', async (t) => {
  t.equal(dueNow(2000, 50, 0), 100, '2000/s every 50 ms: 100 a tick');
  t.equal(dueNow(10_400, 50, 0), 520);
  t.equal(dueNow(2000, 100, 100), 100, 'the second tick');
  t.equal(dueNow(2000, 500, 100), 900, 'a tick 400 ms late sends what the schedule says is due');
  t.equal(dueNow(2000, 500, 1500), 0, 'never negative when ahead');
  t.equal(dueNow(2000, -5, 0), 0, 'nothing before the start');
  t.equal(dueNow(333, 50, 0), 16, 'whole events only (16.65 due)');
  // A jittered run of ticks: sent never exceeds the schedule, and ends on it.
  let sent = 0;
  let now = 0;
  let ticks = 0;
  const rate = 15_000;
  while (now < 88_000) {
    now += 50 + ((ticks++ * 37) % 23) - 11 + (ticks % 97 === 0 ? 700 : 0); // jitter and an occasional stall
    const n = dueNow(rate, now, sent);
    sent += n;
    t.ok(sent <= (rate * now) / 1000, `never ahead at ${now} ms`) || t.bailout();
  }
  t.equal(sent, Math.floor((rate * now) / 1000), 'on schedule at the end, stalls caught up');
  t.same(splitBatches(12_000, 5000), [5000, 5000, 2000]);
  t.same(splitBatches(10_000, 5000), [5000, 5000]);
  t.same(splitBatches(1, 5000), [1]);
  t.same(splitBatches(0, 5000), []);
});

t.test('send log: the send time of each (p, seq) by its batch range', async (t) => {
  const log = new SendLog(2);
  log.record(0, 0, 99, 1000);
  log.record(1, 0, 98, 1000);
  log.record(0, 100, 100, 1050);
  log.record(0, 101, 250, 1100);
  t.equal(log.timeOf(0, 0), 1000);
  t.equal(log.timeOf(0, 99), 1000, 'last of a range');
  t.equal(log.timeOf(0, 100), 1050, 'a one-event range');
  t.equal(log.timeOf(0, 101), 1100, 'first of a range');
  t.equal(log.timeOf(0, 250), 1100);
  t.equal(log.timeOf(0, 251), undefined, 'never sent');
  t.equal(log.timeOf(1, 99), undefined, 'per partition');
  t.equal(log.timeOf(1, 98), 1000);
  t.equal(log.timeOf(2, 0), undefined, 'no such partition');
  t.equal(log.timeOf(0, -1), undefined);
  t.equal(log.timeOf(0, 1.5), undefined);
  t.throws(() => log.record(0, 252, 300, 1200), /does not follow 250/, 'a gap in the seqs');
  t.throws(() => log.record(1, 50, 60, 1200), /does not follow 98/, 'an overlap');
  t.throws(() => log.record(1, 99, 98, 1200), /does not follow/, 'an empty range');
  t.throws(() => log.record(3, 0, 1, 1200), /no partition 3/);
  // Many ranges: the search agrees with a linear scan.
  const big = new SendLog(1);
  const ranges: [number, number, number][] = [];
  let next = 0;
  for (let i = 0; i < 500; i++) {
    const len = 1 + ((i * 7919) % 40);
    ranges.push([next, next + len - 1, 10 * i]);
    big.record(0, next, next + len - 1, 10 * i);
    next += len;
  }
  let wrong = 0;
  for (let s = 0; s < next + 5; s++) {
    const r = ranges.find(([f, l]) => f <= s && s <= l);
    if (big.timeOf(0, s) !== r?.[2]) wrong++;
  }
  t.equal(wrong, 0, `all ${next + 5} lookups agree`);
});

t.test('percentiles: nearest rank', async (t) => {
  const hundred = Float64Array.from({ length: 100 }, (_, i) => i + 1);
  t.equal(percentile(hundred, 50), 50);
  t.equal(percentile(hundred, 99), 99);
  t.equal(percentile(hundred, 100), 100);
  const ten = Float64Array.from({ length: 10 }, (_, i) => (i + 1) * 10);
  t.equal(percentile(ten, 99), 100, 'p99 of 10 values is the largest');
  t.equal(percentile(ten, 50), 50);
  t.equal(percentile([7], 50), 7);
  t.ok(Number.isNaN(percentile([], 99)), 'empty: NaN');
  const s = summarize(Float64Array.from([900, 5, 300, 8000, 40, 100, 1, 2, 3, 4]));
  t.same(s, { n: 10, p50: 5, p99: 8000, max: 8000 }, 'summarize sorts numerically, not as strings (as strings: p50 300, max 900)');
  const e = summarize(new Float64Array(0));
  t.equal(e.n, 0);
  t.ok(Number.isNaN(e.p99) && Number.isNaN(e.max));
});

t.test('kept up: produce share, drain and p99, each against checkpoint + 2 s', async (t) => {
  const base = { offered: 10_000, achieved: 9990, drainMs: 9000, p99Ms: 9500, checkpointMs: 8000 };
  t.same(keptUp(base), { ok: true, producerLimited: false, reasons: [] });
  t.same(keptUp({ ...base, achieved: 9800, drainMs: 10_000, p99Ms: 10_000 }).ok, true, 'exactly 98 % and exactly checkpoint + 2 s pass');
  const limited = keptUp({ ...base, achieved: 9799 });
  t.same([limited.ok, limited.producerLimited], [false, true]);
  t.match(limited.reasons[0], /producer-limited: achieved 9799\/s < 98 % of 10000\/s/);
  const late = keptUp({ ...base, drainMs: 10_001 });
  t.same([late.ok, late.producerLimited], [false, false]);
  t.match(late.reasons.join(), /committed 10001 ms after the producer stopped > 10000 ms/);
  t.match(keptUp({ ...base, drainMs: null }).reasons.join(), /not every produced event was committed/);
  t.match(keptUp({ ...base, p99Ms: 10_000.5 }).reasons.join(), /p99 10001 ms > 10000 ms/);
  const none = keptUp({ ...base, p99Ms: NaN });
  t.equal(none.ok, false, 'no latency measured is not a pass');
  t.equal(keptUp({ ...base, achieved: NaN }).producerLimited, true);
  t.equal(keptUp({ ...base, achieved: 5000, drainMs: null, p99Ms: 20_000 }).reasons.length, 3, 'every reason named');
  const growing = keptUp({ ...base, lag: { slopePerS: 612.4, troughs: 7, limitPerS: 500, growing: true } });
  t.same([growing.ok, growing.producerLimited], [false, false], 'a growing lag fails the rung (the producer did reach the rate)');
  t.match(growing.reasons.join(), /lag growing: its troughs' slope 612\/s after the first quarter > 500\/s \(5 % of offered\)/);
  t.equal(keptUp({ ...base, lag: { slopePerS: 400, troughs: 7, limitPerS: 500, growing: false } }).ok, true, 'a flat lag passes');
  t.equal(keptUp({ ...base, lag: { slopePerS: null, troughs: 2, limitPerS: 500, growing: false } }).ok, true, 'a lag not judged is not a reason');
});

t.test('max sustained rate: the last rung passed before the first failure', async (t) => {
  const r = (offered: number, ok: boolean, producerLimited = false): Rung => ({ offered, ok, producerLimited });
  t.same(maxSustained([r(2000, true), r(5000, true), r(10_400, false), r(15_000, true)]), { max: 5000, index: 1, capped: false }, 'a pass after the first failure does not count');
  t.same(maxSustained([r(2000, true), r(5000, true)]), { max: 5000, index: 1, capped: true }, 'every rung passed: capped');
  t.same(maxSustained([r(2000, false)]), { max: 0, index: -1, capped: false }, 'the first rung failed');
  t.same(maxSustained([r(2000, true), r(5000, false, true)]), { max: 2000, index: 0, capped: true }, 'stopped for want of load: capped');
  t.same(maxSustained([]), { max: 0, index: -1, capped: true });
  t.throws(() => maxSustained([r(5000, true), r(2000, true)]), /not ascending/);
});

t.test('ratio vs baseline: engine max / baseline max, and which bound it is', async (t) => {
  const m = (max: number, capped: boolean) => ({ max, index: max ? 0 : -1, capped });
  t.same(ratioVsBaseline(m(10_400, false), m(15_000, false)), { ratio: 10_400 / 15_000, bound: 'at ladder resolution' });
  t.same(ratioVsBaseline(m(10_400, false), m(20_000, true)), { ratio: 0.52, bound: 'upper bound' }, 'the baseline passed every rung: its true max may be higher');
  t.same(ratioVsBaseline(m(20_000, true), m(15_000, false)), { ratio: 20_000 / 15_000, bound: 'lower bound' });
  t.same(ratioVsBaseline(m(20_000, true), m(20_000, true)), { ratio: 1, bound: 'undetermined' });
  t.same(ratioVsBaseline(m(0, false), m(5000, false)), { ratio: 0, bound: 'at ladder resolution' });
  t.equal(ratioVsBaseline(m(5000, false), m(0, false)).ratio, null, 'no baseline max: no ratio');
});

t.test('RESULT line: the exact format', async (t) => {
  t.equal(resultLine(10_400, 9123.6, 0.52), 'RESULT engine_sustained max_events_per_s=10400 p99_ms_at_max=9124 ratio_vs_baseline=0.520');
  t.equal(resultLine(0, null, 0), 'RESULT engine_sustained max_events_per_s=0 p99_ms_at_max=n/a ratio_vs_baseline=0.000');
  t.equal(resultLine(2000, 8000, null), 'RESULT engine_sustained max_events_per_s=2000 p99_ms_at_max=8000 ratio_vs_baseline=n/a');
  t.match(resultLine(2000, 8000, 1), /^RESULT engine_sustained max_events_per_s=\d+ p99_ms_at_max=\d+ ratio_vs_baseline=\d+\.\d{3}$/);
});

t.test("the climb's RESULT line: the ladder's fields first, then each side's maximum, the ratio and what is determined", async (t) => {
  const rung = (p99: number) => ({ lat: { n: 1, p50: 1, p99, max: 1 } }) as never;
  const line = climbResultLine({
    clink: { max: 180_000, maxRung: rung(9321.4), determined: true },
    baseline: { max: 200_000, determined: true },
    producer: { max: 250_000, determined: false },
    resolution: 0.05,
    rungs: 27,
  });
  t.equal(line, 'RESULT engine_sustained max_events_per_s=180000 p99_ms_at_max=9321 ratio_vs_baseline=0.900 clink_max_events_per_s=180000 baseline_max_events_per_s=200000 producer_max_events_per_s=250000 ratio_at_baseline_max=0.900 determined=yes clink_determined=yes baseline_determined=yes producer_determined=no resolution=0.05 rungs=27');
  const undetermined = climbResultLine({ clink: { max: 160_000, maxRung: rung(9000), determined: false }, baseline: { max: 200_000, determined: true }, producer: { max: 160_000, determined: true }, resolution: 0.05, rungs: 20 });
  t.match(undetermined, / determined=no clink_determined=no baseline_determined=yes /, 'one side not determined: the pair is not');
  const none = climbResultLine({ clink: { max: null, maxRung: null, determined: false }, baseline: { max: null, determined: false }, producer: { max: null, determined: false }, resolution: 0.05, rungs: 3 });
  t.match(none, /^RESULT engine_sustained max_events_per_s=0 p99_ms_at_max=n\/a ratio_vs_baseline=n\/a clink_max_events_per_s=n\/a baseline_max_events_per_s=n\/a producer_max_events_per_s=n\/a ratio_at_baseline_max=n\/a determined=no /);
  t.equal(ratioAtBaselineMax(90, 100), 0.9);
  t.equal(ratioAtBaselineMax(90, null), null);
  t.equal(ratioAtBaselineMax(null, 100), null);
  t.equal(ratioAtBaselineMax(90, 0), null, 'no baseline maximum: no ratio');
});

t.test('rig peak RSS per host/service over the samples', async (t) => {
  const proc = (host: string, service: string, rssBytes: number) => ({ host, role: 'x', service, pid: 1, rssBytes, cpuS: 0 });
  const sample = (processes: ReturnType<typeof proc>[]) => ({ processes }) as unknown as ResourceSample;
  t.same(
    peakRss([sample([proc('w1', 'clink-worker', 100), proc('b1', 'kafka', 900)]), sample([proc('w1', 'clink-worker', 300), proc('w2', 'clink-worker', 50)])]),
    [
      { what: 'b1/kafka', rssBytes: 900 },
      { what: 'w1/clink-worker', rssBytes: 300 },
      { what: 'w2/clink-worker', rssBytes: 50 },
    ],
  );
  t.same(peakRss([]), []);
});

t.test('through the CLI: --help prints the options, a bad ladder exits 254; both before the rig', async (t) => {
  const file = path.join(repoRoot, 'bench', 'engine-sustained.ts');
  const help = spawnSync(process.execPath, [file, '--help'], { cwd: repoRoot, encoding: 'utf8', timeout: 60_000 });
  t.equal(help.status, 0);
  for (const o of ['--rates', '--start', '--resolution', '--max-rungs', '--confirmations', '--step', '--producer-duration-s', '--producers', '--producer-threads', '--producer-jvm', '--producer-nice', '--partitions', '--checkpoint-ms', '--duration-s', '--tick-ms', '--keep']) t.match(help.stdout, o);
  for (const f of ['clink_max_events_per_s', 'baseline_max_events_per_s', 'producer_max_events_per_s', 'ratio_at_baseline_max', 'determined=yes|no', 'producer-bound']) t.match(help.stdout, f, `--help says what ${f} is`);
  t.notMatch(help.stdout, /^RESULT /m, 'no RESULT line (the usage only says what it holds)');
  const bad = spawnSync(process.execPath, [file, '--rates', '5000,2000'], { cwd: repoRoot, encoding: 'utf8', timeout: 60_000 });
  t.equal(bad.status, 254);
  t.match(bad.stderr, /--rates: not ascending/);
  const list = spawnSync(process.execPath, [path.join(repoRoot, 'bench', 'index.ts'), '--help'], { cwd: repoRoot, encoding: 'utf8', timeout: 60_000 });
  t.equal(list.status, 0);
  t.match(list.stdout, /engine-sustained +Max sustained rate/, 'registered in bench/index.ts');
});

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** An in-memory bucket answering ListObjectsV2 (two keys a page) and GetObject. */
class FakeS3 {
  objects = new Map<string, string>();
  failing = new Set<string>();
  lists = 0;
  gets = new Map<string, number>();
  async send(cmd: unknown): Promise<unknown> {
    if (cmd instanceof ListObjectsV2Command) {
      this.lists++;
      const keys = [...this.objects.keys()].filter((k) => k.startsWith(cmd.input.Prefix ?? '')).sort();
      const from = Number(cmd.input.ContinuationToken ?? 0);
      const page = keys.slice(from, from + 2);
      const more = from + 2 < keys.length;
      return { Contents: page.map((Key) => ({ Key, Size: Buffer.byteLength(this.objects.get(Key)!) })), IsTruncated: more, NextContinuationToken: more ? String(from + 2) : undefined };
    }
    if (cmd instanceof GetObjectCommand) {
      const key = cmd.input.Key!;
      this.gets.set(key, (this.gets.get(key) ?? 0) + 1);
      if (this.failing.has(key)) throw new Error('store says no');
      const body = this.objects.get(key)!;
      return { Body: { transformToString: async () => body } };
    }
    throw new Error('unexpected command');
  }
}

const lines = (p: number, from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => JSON.stringify({ p, seq: from + i, pad: 'x' })).join('\n') + '\n';

t.test('watcher: first sight per object, latency per line, each object read once, drain time', async (t) => {
  const s3 = new FakeS3();
  const log = new SendLog(2);
  const t0 = Date.now();
  log.record(0, 0, 9, t0 - 1000);
  log.record(1, 0, 9, t0 - 500);
  s3.objects.set('other/x.jsonl', lines(0, 0, 9));
  s3.objects.set('pre/a.jsonl', lines(0, 0, 4));
  s3.objects.set('pre/empty.jsonl', '');
  const w = new Watcher(s3 as unknown as S3Client, 'b', 'pre/', log, 2);
  w.start();
  t.teardown(() => w.stop());
  await sleep(400);
  await w.settle();
  t.equal(w.distinct, 5, 'the prefix only');
  const first = w.latencies.values();
  t.equal(first.length, 5);
  t.ok(first.every((v) => v >= 1000 && v < 1000 + 400 + 200), `latency = first sight − send time (${[...first].join(', ')})`);
  const addedAt = Date.now();
  s3.objects.set('pre/b.jsonl', lines(0, 5, 9) + lines(1, 0, 9) + lines(0, 0, 0) + lines(0, 10, 10) + 'not json\n');
  const drain = await awaitDrain(w, 20, addedAt, 2000);
  t.ok(drain !== null && drain >= 0 && drain < 1000, `drained ${drain} ms after the stop`);
  t.ok(w.lastNewSightAt >= addedAt, 'the drain ends at the first sight of the object with the last events');
  t.same({ distinct: w.distinct, duplicates: w.duplicates, foreign: w.foreign, objects: w.objects }, { distinct: 20, duplicates: 1, foreign: 2, objects: 3 }, 'seq 10 was never sent: foreign, like a line that is not JSON');
  t.equal(w.latencies.length, 21, 'a latency per line of a sent event (the duplicate too)');
  const second = [...w.latencies.values()].slice(5);
  t.ok(second.slice(0, 5).every((v) => v >= addedAt - t0 + 1000), 'p0 lines of b: sent at t0 − 1 s, seen after they were added');
  t.ok(s3.lists >= 3, `listed again and again (${s3.lists})`);
  t.same([...s3.gets.entries()].sort(), [['pre/a.jsonl', 1], ['pre/b.jsonl', 1]], 'each object read once; the empty one and the foreign prefix never');
  const stalledAt = Date.now();
  t.equal(await awaitDrain(w, 21, stalledAt, 600), null, 'an event never seen: no drain time');
  const waited = Date.now() - stalledAt;
  t.ok(waited >= 600 && waited < 3000, `gave up after the stall (${waited} ms)`);
  await w.stop();
});

t.test('watcher: an object that cannot be read fails the step instead of vanishing', async (t) => {
  const s3 = new FakeS3();
  const log = new SendLog(1);
  log.record(0, 0, 9, Date.now());
  s3.objects.set('pre/bad.jsonl', lines(0, 0, 9));
  s3.failing.add('pre/bad.jsonl');
  const w = new Watcher(s3 as unknown as S3Client, 'b', 'pre/', log, 1);
  w.start();
  await sleep(300);
  await t.rejects(w.settle(), /cannot read pre\/bad\.jsonl: store says no/);
  await t.rejects(w.stop(), /cannot read/);
  t.equal(s3.gets.get('pre/bad.jsonl'), 5, 'five attempts');
  t.equal(w.distinct, 0);
});

/** The watcher's judgement of a body as it was before its fast path: a JSON.parse per line. */
function referenceRead(body: string, log: SendLog, partitions: number): { distinct: number; duplicates: number; foreign: number; sent: number[] } {
  const seen = Array.from({ length: partitions }, () => new Set<number>());
  const r = { distinct: 0, duplicates: 0, foreign: 0, sent: [] as number[] };
  for (const line of body.split('\n')) {
    if (!line) continue;
    let e: { p?: unknown; seq?: unknown };
    try {
      e = JSON.parse(line) as { p?: unknown; seq?: unknown };
    } catch {
      r.foreign++;
      continue;
    }
    const at = typeof e.p === 'number' && typeof e.seq === 'number' ? log.timeOf(e.p, e.seq) : undefined;
    if (at === undefined) {
      r.foreign++;
      continue;
    }
    r.sent.push(at);
    const s = seen[e.p as number]!;
    if (s.has(e.seq as number)) r.duplicates++;
    else {
      s.add(e.seq as number);
      r.distinct++;
    }
  }
  return r;
}

t.test('watcher: the fast path reads exactly the lines JSON.parse reads, and counts the rest as before', async (t) => {
  t.equal(digitsAt('{"p":120,', 5, 9), 120);
  t.equal(digitsAt('0,', 0, 2), 0, 'zero');
  t.equal(digitsAt('01,', 0, 3), -1, 'a leading zero is not JSON');
  t.equal(digitsAt('-1,', 0, 3), -1, 'no sign');
  t.equal(digitsAt(',', 0, 1), -1, 'no digit');
  t.equal(digitsAt('1234567890123456', 0, 16), -1, 'more than 15 digits');
  t.equal(digitsAt('12', 0, 1), 1, 'stops at the line end');
  const pad = 'x'.repeat(60);
  const good = (p: number, seq: number) => JSON.stringify({ p, seq, pad });
  const odd = [
    '{"p":0,"seq":013,"pad":"' + pad + '"}', // not JSON
    '{"p":0,"seq":13,"pad":"' + pad + '","more":1}', // JSON, another shape: counted by the parse
    '{"p":0,"seq":14,"pad":"xx"}', // another padding: counted by the parse
    '{"p":0,"seq":15,"pad":"' + pad + '"', // cut short
    '{"p":0,"seq":16,"pad":"' + pad + '"} ', // a trailing blank: JSON, counted
    '{"seq":17,"p":0,"pad":"' + pad + '"}', // keys in another order: JSON, counted
    '{"p":0,"seq":18.5,"pad":"' + pad + '"}', // not an integer: foreign
    '{"p":9,"seq":8,"pad":"' + pad + '"}', // no such partition: foreign
    '{"p":1,"seq":99999,"pad":"' + pad + '"}', // never sent: foreign
    '{"p":0,"seq":1.9e1,"pad":"' + pad + '"}', // 19 in another spelling: counted
    '{"p":"0","seq":11,"pad":"' + pad + '"}', // a string p: foreign
    '{"p":0,"seq":20,"pad":"' + pad.slice(1) + 'y"}', // the same length, another padding
    'not json',
  ];
  const rows: string[] = [];
  for (let seq = 0; seq < 20; seq++) rows.push(good(seq % 2, seq >> 1));
  rows.push(...odd, good(0, 0), good(1, 9)); // two duplicates
  for (let seq = 21; seq < 30; seq++) rows.push(good(0, seq), good(1, seq));
  const body = rows.join('\n') + '\n\n';
  const log = new SendLog(2);
  log.record(0, 0, 9, 1000);
  log.record(0, 10, 29, 2000);
  log.record(1, 0, 29, 1500);
  const want = referenceRead(body, log, 2);
  t.ok(want.foreign >= 6 && want.duplicates === 2, `the reference sees foreign ${want.foreign}, duplicates ${want.duplicates}`);
  const s3 = new FakeS3();
  s3.objects.set('pre/a.jsonl', body);
  s3.objects.set('pre/b.jsonl', good(0, 0) + '\n' + good(1, 0) + '\n'); // duplicates of a's, read after the padding is known
  const w = new Watcher(s3 as unknown as S3Client, 'b', 'pre/', log, 2);
  w.start();
  t.teardown(() => w.stop());
  await sleep(400);
  await w.settle();
  const both = referenceRead(body + good(0, 0) + '\n' + good(1, 0) + '\n', log, 2);
  t.same({ distinct: w.distinct, duplicates: w.duplicates, foreign: w.foreign }, { distinct: both.distinct, duplicates: both.duplicates, foreign: both.foreign }, 'the same counts as a parse of every line');
  t.equal(w.latencies.length, both.sent.length, 'a latency per line the parse would have timed');
  await w.stop();
});

t.test('send log: lookups in any order agree with a scan of the sends (the last send found is tried first)', async (t) => {
  const log = new SendLog(1);
  const sends: [number, number, number][] = [];
  for (let first = 0, k = 0; first < 5000; k++) {
    const n = 1 + ((k * 37) % 120);
    sends.push([first, first + n - 1, 1000 + k]);
    log.record(0, first, first + n - 1, 1000 + k);
    first += n;
  }
  const scan = (seq: number) => sends.find(([f, l]) => f <= seq && seq <= l)?.[2];
  let wrong = 0;
  for (let i = 0; i < 3000; i++) {
    const seq = i < 1500 ? i * 3 : (i * 7919) % 5200; // in order, then jumping about, past the end too
    if (log.timeOf(0, seq) !== scan(seq)) wrong++;
  }
  t.equal(wrong, 0, 'every lookup right');
});

/** A stand-in for LineProducer: numbers events round-robin at once, acknowledges after delayMs(n). */
/**
 * A virtual clock: a sleep moves time on by exactly its length, so the pacing is judged
 * on the schedule it keeps, not on how late this process was woken (the unit tests run at
 * nice 19 beside the rig; CI once saw 3,484/s of 4,000 from wake-up delays alone).
 */
class VirtualClock {
  t = 1_000_000;
  now = (): number => this.t;
  sleep = async (ms: number): Promise<void> => {
    this.t += Math.max(0, ms);
    await new Promise<void>((r) => setImmediate(r));
  };
}

class FakeProducer {
  seq: number[];
  sends: number[] = [];
  #delay: (n: number) => number;
  #numberLate: boolean;
  #clock: VirtualClock;
  constructor(clock: VirtualClock, partitions: number, delayMs: (n: number) => number, numberLate = false) {
    this.#clock = clock;
    this.seq = new Array(partitions).fill(0);
    this.#delay = delayMs;
    this.#numberLate = numberLate;
  }
  produce(count: number, batch = 1000): Promise<void> {
    if (batch !== count) throw new Error('one send per call expected');
    const number = () => {
      for (let j = 0; j < count; j++) {
        const produced = this.seq.reduce((a, b) => a + b, 0);
        this.seq[produced % this.seq.length]!++;
      }
    };
    if (this.#numberLate) return this.#clock.sleep(1).then(number);
    number();
    this.sends.push(count);
    return this.#clock.sleep(this.#delay(count));
  }
}

t.test('paced producer: the offered rate, every send in the log, a slow producer shows as producer-limited', async (t) => {
  const clock = new VirtualClock();
  const fast = new FakeProducer(clock, 3, () => 3);
  const log = new SendLog(3);
  const r = await produceAtRate(fast, log, 4000, 600, 50, undefined, clock);
  t.equal(r.produced, fast.seq.reduce((a, b) => a + b, 0));
  t.same(r.seq, fast.seq);
  // On the virtual clock the schedule is exact: a send at each 50 ms tick from 50 to 550 ms
  // (the 600 ms tick ends the run), 200 events each, the last acknowledged 3 ms later.
  t.same(fast.sends, new Array(11).fill(200), 'paced in 11 sends of one tick (50 ms of 4000/s) each');
  t.equal(r.produced, 2200, '0.55 s of 4000/s');
  t.equal(r.stoppedAt - r.startedAt, 553, 'stopped at the last acknowledgement');
  t.equal(Math.round(r.achieved), 3978, 'achieved: what was sent over the time to its last acknowledgement');
  t.ok(fast.sends.every((n) => n > 0 && n <= 5000));
  for (let p = 0; p < 3; p++) {
    t.type(log.timeOf(p, 0), 'number');
    t.type(log.timeOf(p, r.seq[p]! - 1), 'number', `partition ${p}: the last event is in the log`);
    t.equal(log.timeOf(p, r.seq[p]!), undefined);
  }
  t.ok(log.timeOf(0, 0)! >= r.startedAt && log.timeOf(0, r.seq[0]! - 1)! <= r.stoppedAt, 'send times within the run');

  const slow = new FakeProducer(clock, 2, (n) => n); // 1000 events/s at most
  const rs = await produceAtRate(slow, new SendLog(2), 4000, 600, 50, undefined, clock);
  t.ok(rs.achieved < 0.5 * 4000, `a 1000/s producer achieves ${Math.round(rs.achieved)}/s`);
  t.equal(keptUp({ offered: 4000, achieved: rs.achieved, drainMs: 0, p99Ms: 0, checkpointMs: 8000 }).producerLimited, true);

  await t.rejects(produceAtRate(new FakeProducer(clock, 2, () => 1, true), new SendLog(2), 4000, 300, 50, undefined, clock), /numbered 0 of \d+ events before sending/);

  // A smaller send: the same events, in sends of at most that many.
  const small = new FakeProducer(clock, 3, () => 3);
  const rsm = await produceAtRate(small, new SendLog(3), 4000, 600, 50, 50, clock);
  t.ok(small.sends.length > 0 && small.sends.every((n) => n > 0 && n <= 50), `every send at most 50 events (${Math.max(...small.sends)} the largest)`);
  t.ok(small.sends.some((n) => n === 50), 'a tick due more than 50 events was split');
  t.equal(rsm.produced, small.sends.reduce((a, b) => a + b, 0));
});

t.test('memory summary: the rig idle, the heaviest step loaded against it, the controller per step', async (t) => {
  const MiB = 1048576;
  const idle = [{ what: 'broker-1/kafka', rssBytes: 300 * MiB }, { what: 'store/minio', rssBytes: 100 * MiB }];
  t.equal(totalRss(idle), 400 * MiB);
  const rows = [
    { side: 'baseline' as const, offered: 10400, controllerRss: 400 * MiB, rigRss: [{ what: 'broker-1/kafka', rssBytes: 350 * MiB }] },
    { side: 'engine' as const, offered: 10400, controllerRss: 420 * MiB, rigRss: [{ what: 'broker-1/kafka', rssBytes: 400 * MiB }, { what: 'worker-1/clink-worker', rssBytes: 200 * MiB }] },
  ];
  const lines = memorySummary(idle, rows).split('\n');
  t.strictSame(lines, [
    'memory: rig idle 400 MiB over 2 processes',
    'memory: rig loaded (peaks, the heaviest step: engine at 10400/s) 600 MiB over 2 processes, ×1.50 idle',
    'memory: controller RSS after GC per step b10400 400, e10400 420 MiB',
  ]);
  t.strictSame(memorySummary([], []).split('\n'), ['memory: rig idle not sampled'], 'nothing measured: says so');
});

/** A rung's result as the rig would give it: kept up at or below `limit`, producer-bound above `producerMax`. */
function fakeStep(side: StepResult['side'], rate: number, limit: number, producerMax = Infinity): StepResult {
  const producerBound = side !== 'producer' && rate > producerMax;
  const ok = side === 'producer' ? rate <= limit : !producerBound && rate <= limit;
  const reasons = ok ? [] : producerBound ? ['producer-limited'] : ['p99 12000 ms > 10000 ms'];
  return {
    side,
    offered: rate,
    achieved: producerBound ? 0.9 * rate : rate,
    produced: rate * 88,
    drainMs: side === 'producer' ? null : 500,
    lat: side === 'producer' ? { n: 0, p50: NaN, p99: NaN, max: NaN } : { n: 10, p50: 4000, p99: ok ? 9000 + rate / 1000 : 12_000, max: 12_000 },
    kept: { ok, producerLimited: producerBound, reasons },
    ok,
    producerBound,
    lag: null,
    objects: 44,
    controllerRss: 500 * 1048576,
    rigRss: [],
    cpu: { windowS: 88, rows: [{ what: 'worker-1/clink-worker', cpuS: 80, pct: 91 }, { what: 'controller (producer + watcher)', cpuS: 40, pct: 45 }] },
    ...(side === 'engine' ? { split: { subtasks: [], barriersMs: [1200, 1500] } } : {}),
  };
}

t.test('the climb end to end with fake rungs: producer first, the sides under its ceiling, the tables at each top rung, the RESULT line', async (t) => {
  const o = parseSustained(['--start', '40000']);
  if (o === 'help') throw new Error('unexpected');
  const offered: Record<string, number[]> = { producer: [], baseline: [], engine: [] };
  const rows: StepResult[] = [];
  const lines = await runClimb(
    o,
    {
      producer: async (rate) => (offered.producer!.push(rate), fakeStep('producer', rate, 250_000)),
      baseline: async (rate) => (offered.baseline!.push(rate), fakeStep('baseline', rate, 200_000, 250_000)),
      engine: async (rate) => (offered.engine!.push(rate), fakeStep('engine', rate, 183_500, 250_000)),
    },
    rows,
  );
  t.same(rows.map((r) => r.side), [...offered.producer!.map(() => 'producer'), ...offered.baseline!.map(() => 'baseline'), ...offered.engine!.map(() => 'engine')], 'producer, then baseline, then Clink, every rung recorded');
  const producerMax = Math.max(...rows.filter((r) => r.side === 'producer' && r.ok).map((r) => r.offered));
  t.ok(producerMax <= 250_000 && producerMax >= 250_000 / 1.05, `the producer's ceiling ${producerMax}`);
  t.ok([...offered.baseline!, ...offered.engine!].every((r) => r <= producerMax), 'no side offered more than the producer reached');
  const result = lines.at(-1)!;
  const f = Object.fromEntries(result.split(' ').slice(2).map((kv) => kv.split('=') as [string, string]));
  t.equal(f.determined, 'yes');
  t.ok(Number(f.clink_max_events_per_s) <= 183_500 && Number(f.clink_max_events_per_s) >= 183_500 / 1.05, `Clink's max ${f.clink_max_events_per_s}`);
  t.ok(Number(f.baseline_max_events_per_s) <= 200_000 && Number(f.baseline_max_events_per_s) >= 200_000 / 1.05);
  t.equal(f.producer_max_events_per_s, String(producerMax));
  t.equal(f.ratio_at_baseline_max, (Number(f.clink_max_events_per_s) / Number(f.baseline_max_events_per_s)).toFixed(3));
  t.equal(f.ratio_vs_baseline, f.ratio_at_baseline_max);
  t.equal(f.max_events_per_s, f.clink_max_events_per_s);
  t.equal(f.p99_ms_at_max, String(9000 + Number(f.clink_max_events_per_s) / 1000), "p99 of Clink's rung at its maximum");
  t.equal(f.rungs, String(rows.length));
  const text = lines.join('\n');
  t.match(text, new RegExp(`Where the time goes at Clink's top passing rung: engine at ${f.clink_max_events_per_s} events/s, CPU while the producer ran \\(88 s\\):\\n.*process.*\\n.*worker-1/clink-worker\\s+80\\.0\\s+91`));
  t.match(text, /Clink's split at \d+ events\/s[\s\S]*checkpoint barrier → completed record: 2 checkpoints, median 1200 ms, max 1500 ms/);
  t.match(text, /Where the time goes at the baseline's top passing rung: baseline at \d+ events\/s/);
  t.match(text, /Where the time goes at the producer's top passing rung: producer at \d+ events\/s/);
  t.match(text, /clink: max \d+ events\/s \(passed 2×\); the lowest rate not passed \d+ events\/s \(fell behind\)/);
  t.match(text, /producer: max \d+ events\/s \(passed 2×\); the lowest rate not passed \d+ events\/s \(not reached\)/);

  // Clink above the producer's ceiling: not determined, and the RESULT line says so.
  const capped = await runClimb(
    o,
    {
      producer: async (rate) => fakeStep('producer', rate, 150_000),
      baseline: async (rate) => fakeStep('baseline', rate, 120_000, 150_000),
      engine: async (rate) => fakeStep('engine', rate, 400_000, 150_000),
    },
    [],
  );
  t.match(capped.at(-1), / determined=no clink_determined=no baseline_determined=yes /);
  t.match(capped.join('\n'), /clink: max \d+ events\/s .*NOT determined: reached the producer's ceiling/);
});
