/**
 * Engine benchmark, sustained mode (`npm run bench -- engine-sustained`): the highest rate
 * Clink keeps up with on the local rig, and its end-to-end latency, against a raw
 * consume → put baseline measured the same way in the same run, and the producer's own
 * ceiling, so that the rates judged are rates the producer did offer.
 *
 * Two ways to choose the rates:
 *  - the climb (no --rates; bench/climb.ts): first the producer alone (produce-only rungs of
 *    --producer-duration-s to a fresh topic, no engine, no watcher; a rung passes when it
 *    achieved ≥ 98 % of the offered rate), then the baseline, then Clink, each on its own:
 *    doubling from --start until a rung fails, bisecting to --resolution, the maximum
 *    offered again (--confirmations); baseline and Clink never above the producer's
 *    maximum (its ceiling). A rung that is producer-bound bounds a side's search but is
 *    never its limit. A side's maximum is determined when a rung above it failed with the
 *    producer at the rate (climb.ts says exactly when);
 *  - the fixed ladder (--rates, ascending), as before: each side stops at its first
 *    failing rung (below).
 *
 * bench/engine.ts drains a pre-loaded backlog; this one offers a fixed rate and watches.
 * For each rung, on a fresh topic (--partitions, RF 3) and a fresh bucket prefix, per side:
 *  - producer: JSON lines {"p","seq","pad"} (test/helpers/rig-kit.ts LineProducer; with
 *    --producers N, N of them splitting the partitions and sending concurrently,
 *    bench/producer-pool.ts) sent at
 *    the offered rate, paced every --tick-ms (50 ms): each tick sends what the schedule
 *    rate × elapsed says is due and not sent yet (a late tick catches up, nothing more),
 *    for --duration-s (default 11 checkpoints, so at least 10 complete inside it). Each
 *    send's time is recorded per (partition, first seq, last seq), taken just before it.
 *  - engine side: Clink deployed and started as bench/engine.ts does (clinkEngine(), the
 *    same job spec, --checkpoint-ms), before the producer starts.
 *  - baseline side: the same PartitionSource per partition as bench/engine.ts's baseline,
 *    reading continuously, and one PutObject per partition every checkpoint interval (on a
 *    fixed grid, all partitions at once): the raw equivalent of a checkpointed sink, the
 *    same batching without the 2PC. Its consumers and puts run in their own worker thread
 *    of this process (bench/raw-sink-thread.ts), started before the producer, so that the
 *    event loop pacing the producer and running the watcher does not bound it.
 *  - watcher (both sides): lists the prefix every 250 ms (ListObjectsV2), reads each new
 *    object once, and per line takes latency = first sight − send time of its (p, seq).
 *    First sight is when the listing that first showed the object answered, so a latency
 *    includes up to one listing interval of watching; both sides pay the same. Every time
 *    is this process's clock: no skew.
 *  - after the producer stops: wait until every produced event is seen (drain time = the
 *    first sight of the last one − the producer's stop), giving up after no progress for
 *    max(3 checkpoints, 30 s) or 10 min; then the prefix is recounted line by line
 *    (countBucket). A duplicate, a gap or a foreign line refuses the whole benchmark: no
 *    RESULT line (for the baseline too: it would be a broken comparison).
 *
 * A side kept up at a rate (keptUp) when: the achieved produce rate is ≥ 98 % of offered,
 * every produced event was committed within checkpoint + 2 s of the producer's stop,
 * p99 latency ≤ checkpoint + 2 s, and its lag (sent − visible, every 250 ms) is not growing
 * (bench/lag-trend.ts: the least-squares slope of its troughs after the first quarter of the
 * rung ≤ 5 % of the offered rate). On the ladder, each side climbs the ladder on its own (at each rung
 * the baseline runs first, then the engine) and stops at its first rung that fails; its
 * max sustained rate is the last rung it passed (0 when the first fails). When the
 * producer (this process, on the same rig) cannot offer the rate, the rung says
 * "producer-limited": that is not a result for the side, whose max is then only a lower
 * bound (the ladder stopped for want of load, not because the side fell behind).
 *
 * ratio_vs_baseline = the engine's max sustained rate / the baseline's max sustained rate,
 * both from this ladder and these criteria (so each is known to ladder resolution: the true
 * max lies between it and the next rung). A side is "capped" when it passed every rung or
 * its first failing rung was producer-limited: its true max may be higher. Hence (each
 * statement at ladder resolution, i.e. taking the uncapped side's max as its rung):
 *  - neither capped: the ratio is as measured, to ladder resolution;
 *  - only the baseline capped (e.g. it passed every rung): the baseline's true max may be
 *    higher, so the ratio is an UPPER bound (the engine is at most this fraction);
 *  - only the engine capped: the ratio is a LOWER bound;
 *  - both capped: undetermined (raise --rates). The line before RESULT says which.
 *
 * Memory, per step: this process's RSS after a forced GC, and the rig processes' peak RSS
 * (Kafka, MinIO, Clink's coordinator and workers) from the campaign resource sampler
 * (campaigns/runner/resources.ts): a sample when the step starts, every 30 s, and one when
 * the drain ends (before the engine is stopped). Before the first step, one sample of the
 * rig at rest (Kafka and MinIO, no engine, no load); the summary sets the idle total beside
 * the heaviest step's total of peaks (memorySummary).
 *
 * Where the time goes (bench/time-split.ts), for each side's top passing rung: CPU per
 * process while the producer ran (the rig's processes from /proc over SSH, this process from
 * process.cpuUsage, which counts all its threads: the producer's, the watcher and, on the
 * baseline side, the baseline's thread), and for Clink its subtasks' own timing lines
 * (idle, S3 uploads at the barrier, S3 completes, Kafka fetches) and the coordinator's
 * barrier → completed record.
 *
 * Last line: `RESULT engine_sustained max_events_per_s=<N> p99_ms_at_max=<ms> ratio_vs_baseline=<r>`
 * (p99 and ratio are `n/a` when there is no max to speak of); the climb adds
 * `clink_max_events_per_s= baseline_max_events_per_s= producer_max_events_per_s=
 * ratio_at_baseline_max= determined=yes|no clink_determined= baseline_determined=
 * producer_determined= resolution= rungs=` (climbResultLine): max_events_per_s is Clink's
 * maximum and ratio_vs_baseline equals ratio_at_baseline_max (Clink's maximum / the
 * baseline's), kept under their old names for bench/scale.ts and older readers.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { ResourceSampler, readResources } from '../campaigns/runner/resources.ts';
import { clinkEngine } from '../engine/clink/plug.ts';
import type { S3Settings } from '../engine/clink/sink/sink-api.ts';
import type { ResourceSample } from '../lib/evidence.ts';
import { LineProducer, countBucket, createTopic, deleteTopic, rigKit, sleep, type BucketCount, type RigKit } from '../test/helpers/rig-kit.ts';
import { optionsOrUsage, takeRigLock } from './cli.ts';
import { climb, describeClimb, type Climb } from './climb.ts';
import { brokerDisks, guardRungDisk, rungDiskBytes, type RungDiskShape } from './disk-guard.ts';
import { QualError } from '../lib/errors.ts';
import { LAG_GROWTH_SHARE, lagGrowth, type LagGrowth, type LagPoint } from './lag-trend.ts';
import { ProducerPool, ownedBy } from './producer-pool.ts';
import { ThreadedProducer } from './producer-thread.ts';
import { JvmProducer, processCpuS } from './jvm-producer.ts';
import { ThreadedRawSink } from './raw-sink-thread.ts';
import { cpuBetween, cpuTable, readEngineSplit, splitTable, type CpuRow, type EngineSplit } from './time-split.ts';
import { parseDurationOption } from '../lib/cli.ts';

// ---------------------------------------------------------------------------------------
// Pure parts (unit-tested in test/unit/bench/engine-sustained.test.ts)
// ---------------------------------------------------------------------------------------

/** The climb's defaults (without --rates): see bench/climb.ts. */
export const CLIMB_DEFAULTS = { start: 40_000, resolution: 0.05, maxRungs: 12, confirmations: 1, step: 1000 } as const;
/**
 * Events a send of the pacing loop carries at most (--max-send): a tick's due events go in
 * sends of this size, one after the other, each split over the producers and awaited
 * together. So the rate it can offer is at most this many events per acknowledgement round
 * trip (acks=all over three brokers).
 */
export const DEFAULT_MAX_SEND = 5000;
/** The share of the offered rate the producer must achieve for the rung to count. */
export const MIN_ACHIEVED_SHARE = 0.98;
/** Slack over one checkpoint interval for the drain and for p99 latency. */
export const SLACK_MS = 2000;

export interface SustainedOptions {
  /** A fixed ladder (--rates), or null: climb to each side's maximum. */
  rates: number[] | null;
  /** The climb (bench/climb.ts), without --rates. */
  climb: { start: number; resolution: number; maxRungs: number; confirmations: number; step: number };
  partitions: number;
  checkpointMs: number;
  durationMs: number;
  /** How long each produce-only rung of the producer's own climb offers its rate. */
  producerDurationMs: number;
  /** Producers splitting the partitions (bench/producer-pool.ts). */
  producers: number;
  /** Each producer in its own worker thread (bench/producer-thread.ts). */
  producerThreads: boolean;
  /** Each producer in its own JVM process (bench/jvm-producer.ts). */
  producerJvm: boolean;
  /** The producer threads' own nice value (--producer-nice), or null: unchanged. */
  producerNice: number | null;
  /** Events a send carries at most (--max-send). */
  maxSend: number;
  tickMs: number;
  keep: boolean;
}

export const USAGE = `Usage: npm run bench -- engine-sustained [options]

Finds the highest rate Clink (deployed as bench/engine.ts does) keeps up with, and the
highest a raw consume -> put baseline (its consumers and puts in a worker thread of this
process) keeps up with, on the local rig, with end-to-end latency; and, first, the
producer's own ceiling (produce only, no engine), so that no rate the producer cannot
offer is judged. Takes the rig lock (exit 2 naming the holder while another command uses
the rig).

Without --rates, each of producer, baseline and Clink climbs on its own: from --start,
doubling until a rung fails, then bisecting between the highest passing and the lowest
failing rate to --resolution, then offering the maximum again (--confirmations). Baseline
and Clink never go above the producer's maximum. A rung fails when p99 produce -> visible
or the drain exceeds checkpoint + 2 s, or the lag grows (its troughs' least-squares slope
after the first quarter of the rung > 5 % of the offered rate); a rung whose rate the
producer did not reach (achieved < 98 %) is producer-bound: never the side's limit. With
--rates, the fixed ladder as before: each side stops at its first failing rung.

Last line: RESULT engine_sustained max_events_per_s=<Clink's> p99_ms_at_max=<ms>
ratio_vs_baseline=<r>, and without --rates also clink_max_events_per_s,
baseline_max_events_per_s, producer_max_events_per_s, ratio_at_baseline_max (Clink's
maximum / the baseline's), determined=yes|no (both maxima determined: a failing rung seen
above a passing one, the producer not the bound), per-side *_determined, resolution, rungs.
Before it, for each side's top passing rung: CPU per process while the producer ran (this
process's row counts all its threads, the baseline's included), and Clink's own split (its
subtasks' idle, S3 upload, S3 complete and Kafka fetch times, and the checkpoint barrier).

Options:
  --rates A,B,C         a fixed ladder of offered rates in events/s, ascending (default: climb)
  --start R             the climb's first rate, events/s (default ${CLIMB_DEFAULTS.start})
  --resolution F        bisect until (lowest failing - highest passing) / highest passing <= F
                        (default ${CLIMB_DEFAULTS.resolution})
  --max-rungs N         at most N rungs per side, confirmations included (default ${CLIMB_DEFAULTS.maxRungs})
  --confirmations N     times a side's maximum is offered again and must pass again (default ${CLIMB_DEFAULTS.confirmations})
  --step R              rates are multiples of R events/s (default ${CLIMB_DEFAULTS.step})
  --producer-duration-s DURATION
                        how long each produce-only rung of the producer's climb lasts (default 30)
  --producers N         producers splitting the partitions, sending concurrently (default 1)
  --producer-threads    each producer in its own worker thread (default: in this process's
                        event loop, beside the watcher)
  --producer-jvm        each producer in its own JVM process, Kafka's own Java client (the
                        rig's pinned jars; bench/jvm-producer/BenchProducer.java, compiled
                        once into the cache): the same lines and settings, far less CPU an
                        event than the Node client
  --producer-nice=N     with --producer-threads or --producer-jvm: each producer thread (or
                        JVM) gets this nice value (-20..19; below 0 needs root; a negative one
                        needs the '='), so that on a machine the rig shares, the load
                        generator gets the CPU first and a side's limit is its own, not the
                        producer's; the watcher, the baseline's thread and the rig keep theirs
  --max-send N          events a send carries at most, split over the producers; sends go one
                        after the other, so the rate offered is at most N per acknowledgement
                        round trip (default ${DEFAULT_MAX_SEND})
  --partitions N        partitions of each fresh topic, RF 3 (default 4)
  --checkpoint-ms MS    checkpoint interval; also the baseline's put interval (default 8000)
  --duration-s DURATION how long each rate is offered: seconds, or with units: 300, 90s, 5m, 2h,
                        1h30m (default 11 checkpoints)
  --tick-ms MS          pacing tick of the producer (default 50)
  --keep                keep each step's topic and bucket objects (default: deleted after the recount)
  -h, --help            this text`;

/** The options, or 'help'; an unusable value throws. */
export function parseOptions(args: string[]): SustainedOptions | 'help' {
  const { values } = parseArgs({
    args,
    strict: true,
    allowPositionals: false,
    options: {
      rates: { type: 'string' },
      start: { type: 'string', default: String(CLIMB_DEFAULTS.start) },
      resolution: { type: 'string', default: String(CLIMB_DEFAULTS.resolution) },
      'max-rungs': { type: 'string', default: String(CLIMB_DEFAULTS.maxRungs) },
      confirmations: { type: 'string', default: String(CLIMB_DEFAULTS.confirmations) },
      step: { type: 'string', default: String(CLIMB_DEFAULTS.step) },
      'producer-duration-s': { type: 'string', default: '30' },
      producers: { type: 'string', default: '1' },
      'producer-threads': { type: 'boolean', default: false },
      'producer-jvm': { type: 'boolean', default: false },
      'producer-nice': { type: 'string' },
      'max-send': { type: 'string', default: String(DEFAULT_MAX_SEND) },
      partitions: { type: 'string', default: '4' },
      'checkpoint-ms': { type: 'string', default: '8000' },
      'duration-s': { type: 'string' },
      'tick-ms': { type: 'string', default: '50' },
      keep: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return 'help';
  const num = (name: string, v: string, min: number, integer = true): number => {
    const n = Number(v);
    if (!v.trim() || !Number.isFinite(n) || n < min || (integer && !Number.isInteger(n))) throw new Error(`--${name}: ${JSON.stringify(v)} is not ${integer ? 'an integer' : 'a number'} ≥ ${min}`);
    return n;
  };
  const rates = values.rates === undefined ? null : values.rates.split(',').map((r) => num('rates', r, 1, false));
  if (rates) for (let i = 1; i < rates.length; i++) if (!(rates[i]! > rates[i - 1]!)) throw new Error(`--rates: not ascending (${rates[i - 1]} then ${rates[i]})`);
  const checkpointMs = num('checkpoint-ms', values['checkpoint-ms']!, 1000);
  const durationMs = values['duration-s'] === undefined ? 11 * checkpointMs : parseDurationOption(values['duration-s'], 'duration-s') * 1000;
  const step = num('step', values.step!, 1);
  const climb = { start: num('start', values.start!, step), resolution: num('resolution', values.resolution!, 0.001, false), maxRungs: num('max-rungs', values['max-rungs']!, 1), confirmations: num('confirmations', values.confirmations!, 0), step };
  if (!(climb.resolution < 1)) throw new Error(`--resolution: ${climb.resolution} is not below 1 (it is a share: 0.05 = 5 %)`);
  const partitions = num('partitions', values.partitions!, 1);
  const producers = num('producers', values.producers!, 1);
  if (producers > partitions) throw new Error(`--producers: ${producers} producers for ${partitions} partitions (each producer writes its own partitions)`);
  const producerDurationMs = parseDurationOption(values['producer-duration-s']!, 'producer-duration-s') * 1000;
  let producerNice: number | null = null;
  if (values['producer-nice'] !== undefined) {
    const v = values['producer-nice'];
    producerNice = Number(v);
    if (!v.trim() || !Number.isInteger(producerNice) || producerNice < -20 || producerNice > 19) throw new Error(`--producer-nice: ${JSON.stringify(v)} is not an integer in -20..19`);
    if (!values['producer-threads'] && !values['producer-jvm']) throw new Error('--producer-nice: only with --producer-threads or --producer-jvm (a nice value is set by the thread or process that sends)');
  }
  if (values['producer-threads'] && values['producer-jvm']) throw new Error('--producer-threads and --producer-jvm: choose one (a producer runs in a thread of this process or in its own JVM)');
  return { rates, climb, partitions, checkpointMs, durationMs, producerDurationMs, producers, producerThreads: values['producer-threads']!, producerJvm: values['producer-jvm']!, producerNice, maxSend: num('max-send', values['max-send']!, 1), tickMs: num('tick-ms', values['tick-ms']!, 1), keep: values.keep! };
}

/**
 * Pacing: events the producer should send now, `elapsedMs` into a `ratePerS` schedule with
 * `sent` already sent. Cumulative, so a late tick catches up and jitter does not add up.
 */
export function dueNow(ratePerS: number, elapsedMs: number, sent: number): number {
  return Math.max(0, Math.floor((ratePerS * Math.max(0, elapsedMs)) / 1000) - sent);
}

/** `n` split into sends of at most `max` events. */
export function splitBatches(n: number, max: number): number[] {
  const out: number[] = [];
  for (let left = n; left > 0; left -= max) out.push(Math.min(left, max));
  return out;
}

/** Send times per (partition, first seq, last seq); seqs of a partition are recorded in order. */
export class SendLog {
  readonly #first: number[][];
  readonly #last: number[][];
  readonly #at: number[][];
  /** Per partition, the send timeOf found last. */
  readonly #hint: number[];

  constructor(partitions: number) {
    this.#hint = new Array(partitions).fill(0);
    this.#first = Array.from({ length: partitions }, () => []);
    this.#last = Array.from({ length: partitions }, () => []);
    this.#at = Array.from({ length: partitions }, () => []);
  }

  record(p: number, first: number, last: number, at: number): void {
    const f = this.#first[p];
    if (!f) throw new Error(`SendLog: no partition ${p}`);
    const prevLast = this.#last[p]!.at(-1) ?? -1;
    if (first !== prevLast + 1 || last < first) throw new Error(`SendLog: partition ${p}: range ${first}..${last} does not follow ${prevLast}`);
    f.push(first);
    this.#last[p]!.push(last);
    this.#at[p]!.push(at);
  }

  /** The send time of (p, seq), or undefined when it was never sent. */
  timeOf(p: number, seq: number): number | undefined {
    const f = this.#first[p];
    if (!f || !Number.isInteger(seq) || seq < 0) return undefined;
    // An object's lines come in order: the send that held the last one asked for usually holds this one.
    const h = this.#hint[p]!;
    if (h < f.length && f[h]! <= seq && this.#last[p]![h]! >= seq) return this.#at[p]![h]!;
    let lo = 0;
    let hi = f.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (f[mid]! > seq) hi = mid - 1;
      else if (this.#last[p]![mid]! < seq) lo = mid + 1;
      else {
        this.#hint[p] = mid;
        return this.#at[p]![mid]!;
      }
    }
    return undefined;
  }
}

/** Nearest-rank percentile (0 < q ≤ 100) of values sorted ascending; NaN when empty. */
export function percentile(sorted: ArrayLike<number>, q: number): number {
  if (!sorted.length) return NaN;
  const rank = Math.ceil((q / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export interface LatencySummary {
  n: number;
  p50: number;
  p99: number;
  max: number;
}

/** p50, p99 and max of the latencies (sorted in place). */
export function summarize(latencies: Float64Array): LatencySummary {
  latencies.sort();
  return { n: latencies.length, p50: percentile(latencies, 50), p99: percentile(latencies, 99), max: latencies.length ? latencies[latencies.length - 1]! : NaN };
}

export interface StepFigures {
  offered: number;
  achieved: number;
  /** First sight of the last produced event − the producer's stop; null when not all were seen. */
  drainMs: number | null;
  p99Ms: number;
  checkpointMs: number;
  /** The lag trend over the rung (bench/lag-trend.ts); absent or not judged: not a reason. */
  lag?: LagGrowth | null;
}

export interface KeptUp {
  ok: boolean;
  /** The producer could not offer the rate: not a result for the side. */
  producerLimited: boolean;
  reasons: string[];
}

/** Did the side keep up with the offered rate? */
export function keptUp(f: StepFigures): KeptUp {
  const reasons: string[] = [];
  const limit = f.checkpointMs + SLACK_MS;
  const producerLimited = !(f.achieved >= MIN_ACHIEVED_SHARE * f.offered);
  if (producerLimited) reasons.push(`producer-limited: achieved ${Math.round(f.achieved)}/s < ${MIN_ACHIEVED_SHARE * 100} % of ${f.offered}/s (not a result for this side)`);
  if (f.drainMs === null) reasons.push('not every produced event was committed');
  else if (f.drainMs > limit) reasons.push(`committed ${f.drainMs} ms after the producer stopped > ${limit} ms`);
  if (!(f.p99Ms <= limit)) reasons.push(`p99 ${Number.isFinite(f.p99Ms) ? Math.round(f.p99Ms) : f.p99Ms} ms > ${limit} ms`);
  if (f.lag?.growing) reasons.push(`lag growing: its troughs' slope ${Math.round(f.lag.slopePerS!)}/s after the first quarter > ${Math.round(f.lag.limitPerS)}/s (${LAG_GROWTH_SHARE * 100} % of offered)`);
  return { ok: reasons.length === 0, producerLimited, reasons };
}

export interface Rung {
  offered: number;
  ok: boolean;
  producerLimited: boolean;
}

export interface MaxSustained {
  /** The last rung passed before the first failure; 0 when the first rung failed. */
  max: number;
  /** Its index in the ladder, -1 when none. */
  index: number;
  /** Passed every rung measured, or its first failure was producer-limited: the true max may be higher. */
  capped: boolean;
}

/** The max sustained rate from rungs in ladder order (those past the first failure are ignored). */
export function maxSustained(rungs: Rung[]): MaxSustained {
  let index = -1;
  for (let i = 0; i < rungs.length; i++) {
    if (!rungs[i]!.ok) return { max: index >= 0 ? rungs[index]!.offered : 0, index, capped: rungs[i]!.producerLimited };
    if (i > 0 && !(rungs[i]!.offered > rungs[i - 1]!.offered)) throw new Error('maxSustained: rungs not ascending');
    index = i;
  }
  return { max: index >= 0 ? rungs[index]!.offered : 0, index, capped: true };
}

export type RatioBound = 'at ladder resolution' | 'upper bound' | 'lower bound' | 'undetermined';

/** ratio_vs_baseline: engine max / baseline max (null when the baseline has none), and what kind of figure it is. */
export function ratioVsBaseline(engine: MaxSustained, baseline: MaxSustained): { ratio: number | null; bound: RatioBound } {
  const ratio = baseline.max > 0 ? engine.max / baseline.max : null;
  const bound: RatioBound = engine.capped && baseline.capped ? 'undetermined' : baseline.capped ? 'upper bound' : engine.capped ? 'lower bound' : 'at ladder resolution';
  return { ratio, bound };
}

export function resultLine(engineMax: number, p99AtMax: number | null, ratio: number | null): string {
  const p99 = engineMax > 0 && p99AtMax !== null && Number.isFinite(p99AtMax) ? String(Math.round(p99AtMax)) : 'n/a';
  return `RESULT engine_sustained max_events_per_s=${engineMax} p99_ms_at_max=${p99} ratio_vs_baseline=${ratio === null ? 'n/a' : ratio.toFixed(3)}`;
}

/** Peak RSS per host/service over resource samples, largest first. */
export function peakRss(samples: ResourceSample[]): { what: string; rssBytes: number }[] {
  const peak = new Map<string, number>();
  for (const s of samples) for (const p of s.processes) {
    const k = `${p.host}/${p.service}`;
    peak.set(k, Math.max(peak.get(k) ?? 0, p.rssBytes));
  }
  return [...peak].map(([what, rssBytes]) => ({ what, rssBytes })).sort((a, b) => b.rssBytes - a.rssBytes || a.what.localeCompare(b.what));
}

// ---------------------------------------------------------------------------------------
// The rig side
// ---------------------------------------------------------------------------------------

const MiB = 1048576;
const LIST_INTERVAL_MS = 250;

/** Grows as needed; latencies in ms. */
class Samples {
  #a = new Float64Array(1 << 16);
  length = 0;
  push(v: number): void {
    if (this.length === this.#a.length) {
      const b = new Float64Array(this.#a.length * 2);
      b.set(this.#a);
      this.#a = b;
    }
    this.#a[this.length++] = v;
  }
  values(): Float64Array {
    return this.#a.slice(0, this.length);
  }
}

/**
 * The non-negative integer written at body[i..] as JSON writes one (no sign, no leading zero,
 * at most 15 digits, followed by no digit), or -1.
 */
export function digitsAt(body: string, i: number, end: number): number {
  let n = 0;
  let k = i;
  for (; k < end && k - i < 16; k++) {
    const c = body.charCodeAt(k) - 48;
    if (c < 0 || c > 9) break;
    n = n * 10 + c;
  }
  const len = k - i;
  if (len === 0 || len > 15 || (len > 1 && body.charCodeAt(i) === 48)) return -1;
  return n;
}

/** Digits of a non-negative integer written in decimal. */
function digitCount(n: number): number {
  let d = 1;
  while (n >= 10) {
    n = Math.floor(n / 10);
    d++;
  }
  return d;
}

/** Watches a prefix: first sight of each object, latency of each line, distinct (p, seq) seen. */
export class Watcher {
  readonly #s3: S3Client;
  readonly #bucket: string;
  readonly #prefix: string;
  readonly #log: SendLog;
  readonly #keys = new Set<string>();
  readonly #reads = new Set<Promise<void>>();
  readonly #seen: Uint8Array[];
  readonly #readErrors: string[] = [];
  #stopped = false;
  #loop: Promise<void> | null = null;
  readonly latencies = new Samples();
  distinct = 0;
  duplicates = 0;
  foreign = 0;
  objects = 0;
  errors = 0;
  /** The latest first sight of an object that brought a new (p, seq). */
  lastNewSightAt = 0;
  /** The producers' padding, once a line showed it (see #fastLine). */
  #pad: string | null = null;
  /** The partition of the line #fastLine last read. */
  #fastP = 0;

  constructor(s3: S3Client, bucket: string, prefix: string, log: SendLog, partitions: number) {
    this.#s3 = s3;
    this.#bucket = bucket;
    this.#prefix = prefix;
    this.#log = log;
    this.#seen = Array.from({ length: partitions }, () => new Uint8Array(1 << 16));
  }

  start(): void {
    this.#loop = (async () => {
      while (!this.#stopped) {
        const t0 = Date.now();
        try {
          await this.#list();
        } catch (err) {
          if (++this.errors <= 5) console.log(`  watcher: listing failed: ${(err as Error).message}`);
        }
        await sleep(Math.max(0, t0 + LIST_INTERVAL_MS - Date.now()));
      }
    })();
  }

  async #list(): Promise<void> {
    let token: string | undefined;
    do {
      const r = await this.#s3.send(new ListObjectsV2Command({ Bucket: this.#bucket, Prefix: this.#prefix, ContinuationToken: token }));
      const sight = Date.now();
      for (const o of r.Contents ?? []) {
        if (!o.Key || this.#keys.has(o.Key)) continue;
        this.#keys.add(o.Key);
        this.objects++;
        if (!o.Size) continue;
        const p = this.#read(o.Key, sight).finally(() => this.#reads.delete(p));
        this.#reads.add(p);
      }
      token = r.IsTruncated ? r.NextContinuationToken : undefined;
    } while (token);
  }

  async #read(key: string, sight: number): Promise<void> {
    let body: string | undefined;
    for (let attempt = 1; body === undefined; attempt++) {
      try {
        body = await (await this.#s3.send(new GetObjectCommand({ Bucket: this.#bucket, Key: key }))).Body!.transformToString();
      } catch (err) {
        if (attempt >= 5) {
          this.#readErrors.push(`cannot read ${key}: ${(err as Error).message}`);
          return;
        }
        await sleep(500);
      }
    }
    let fresh = false;
    for (let start = 0; start < body.length; ) {
      let end = body.indexOf('\n', start);
      if (end < 0) end = body.length;
      const from = start;
      start = end + 1;
      if (end === from) continue;
      let p: number;
      let seq: number;
      const fast = this.#fastLine(body, from, end);
      if (fast >= 0) {
        p = this.#fastP;
        seq = fast;
      } else {
        const line = body.slice(from, end);
        let e: { p?: unknown; seq?: unknown; pad?: unknown };
        try {
          e = JSON.parse(line) as { p?: unknown; seq?: unknown; pad?: unknown };
        } catch {
          this.foreign++;
          continue;
        }
        if (typeof e.p !== 'number' || typeof e.seq !== 'number') {
          this.foreign++;
          continue;
        }
        p = e.p;
        seq = e.seq;
        // The producers' own line: later lines with this padding take the fast path.
        if (typeof e.pad === 'string' && JSON.stringify({ p, seq, pad: e.pad }) === line) this.#pad = e.pad;
      }
      const sent = this.#log.timeOf(p, seq);
      if (sent === undefined) {
        this.foreign++;
        continue;
      }
      this.latencies.push(sight - sent);
      let arr = this.#seen[p]!;
      if (seq >= arr.length) {
        const b = new Uint8Array(Math.max(arr.length * 2, seq + 1));
        b.set(arr);
        arr = this.#seen[p] = b;
      }
      if (arr[seq]) this.duplicates++;
      else {
        arr[seq] = 1;
        this.distinct++;
        fresh = true;
      }
    }
    if (fresh) this.lastNewSightAt = Math.max(this.lastNewSightAt, sight);
  }

  /**
   * The seq of body[from, end) when that line is exactly the producers' own,
   * JSON.stringify({ p, seq, pad }) with the padding seen before, read without a parse or a
   * substring (its p in #fastP); -1 for any other line, which then goes through JSON.parse as
   * before. At a few hundred thousand lines a second the parse was most of the watcher's CPU.
   */
  #fastLine(body: string, from: number, end: number): number {
    const pad = this.#pad;
    if (pad === null || !body.startsWith('{"p":', from)) return -1;
    let i = from + 5;
    const p = digitsAt(body, i, end);
    if (p < 0) return -1;
    i += digitCount(p);
    if (!body.startsWith(',"seq":', i)) return -1;
    i += 7;
    const seq = digitsAt(body, i, end);
    if (seq < 0) return -1;
    i += digitCount(seq);
    if (!body.startsWith(',"pad":"', i)) return -1;
    i += 8;
    if (i + pad.length + 2 !== end || !body.startsWith(pad, i) || !body.startsWith('"}', i + pad.length)) return -1;
    this.#fastP = p;
    return seq;
  }

  /** Every read started so far has finished; a read that failed throws here (its lines are unknown). */
  async settle(): Promise<void> {
    while (this.#reads.size) await Promise.all([...this.#reads]);
    if (this.#readErrors.length) throw new Error(`watcher: ${this.#readErrors.join('; ')}`);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    await this.#loop;
    await this.settle();
  }
}

export interface Produced {
  produced: number;
  seq: number[];
  startedAt: number;
  stoppedAt: number;
  achieved: number;
}

/** The time the paced producer reads and waits on: the wall clock, or a test's virtual one. */
export interface PaceClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}
const WALL_CLOCK: PaceClock = { now: () => Date.now(), sleep };

/** Offers `rate` events/s for `durationMs`, paced every `tickMs`, each send recorded in `log`. */
export async function produceAtRate(producer: Pick<LineProducer, 'seq' | 'produce'>, log: SendLog, rate: number, durationMs: number, tickMs: number, maxSend = DEFAULT_MAX_SEND, clock: PaceClock = WALL_CLOCK): Promise<Produced> {
  const startedAt = clock.now();
  let sent = 0;
  let lastAck = startedAt;
  for (;;) {
    const elapsed = clock.now() - startedAt;
    if (elapsed >= durationMs) break;
    for (const n of splitBatches(dueNow(rate, elapsed, sent), maxSend)) {
      const before = [...producer.seq];
      const at = clock.now();
      // LineProducer numbers a batch's events before its first await: record them before the ack.
      const pending = producer.produce(n, n);
      let numbered = 0;
      for (let p = 0; p < before.length; p++) {
        const d = producer.seq[p]! - before[p]!;
        if (d > 0) log.record(p, before[p]!, producer.seq[p]! - 1, at);
        numbered += d;
      }
      if (numbered !== n) throw new Error(`LineProducer numbered ${numbered} of ${n} events before sending: the send log cannot be kept`);
      await pending;
      sent += n;
      lastAck = clock.now();
    }
    // The next tick boundary (a tick overrun by a slow send is skipped, its events go with the next).
    const now = clock.now();
    await clock.sleep(startedAt + (Math.floor((now - startedAt) / tickMs) + 1) * tickMs - now);
  }
  // The producer stopped at its last acknowledged send: the drain is measured from there.
  const stoppedAt = lastAck;
  return { produced: sent, seq: [...producer.seq], startedAt, stoppedAt, achieved: stoppedAt > startedAt ? sent / ((stoppedAt - startedAt) / 1000) : 0 };
}

/**
 * Waits until the watcher has seen `total` distinct events (the drain time: first sight of
 * the last one − stoppedAt), or gives up (null) after `stallMs` without progress or 10 min.
 */
export async function awaitDrain(w: Watcher, total: number, stoppedAt: number, stallMs: number): Promise<number | null> {
  let last = w.distinct;
  let progressAt = Date.now();
  while (w.distinct < total) {
    if (w.distinct > last) {
      last = w.distinct;
      progressAt = Date.now();
    }
    if (Date.now() - progressAt > stallMs || Date.now() - stoppedAt > 600_000) break;
    await sleep(LIST_INTERVAL_MS);
    await Promise.race([w.settle(), sleep(1000)]);
  }
  await w.settle();
  if (w.distinct < total) {
    console.log(`  drain: ${w.distinct}/${total} events seen; gave up ${Math.round((Date.now() - stoppedAt) / 1000)} s after the producer stopped`);
    return null;
  }
  return Math.max(0, w.lastNewSightAt - stoppedAt);
}

export type Side = 'engine' | 'baseline' | 'producer';

export interface StepResult {
  /** engine = Clink; producer = produce only, no engine, no watcher. */
  side: Side;
  offered: number;
  achieved: number;
  produced: number;
  drainMs: number | null;
  lat: LatencySummary;
  kept: KeptUp;
  /** As bench/climb.ts reads a rung: kept up; the producer did not reach the rate. */
  ok: boolean;
  producerBound: boolean;
  lag: LagGrowth | null;
  checkpoints?: number;
  objects: number;
  controllerRss: number;
  rigRss: { what: string; rssBytes: number }[];
  /** CPU per process while the producer ran. */
  cpu: { windowS: number; rows: CpuRow[] };
  /** Clink's own split (engine side only). */
  split?: EngineSplit;
}

function describeRss(rss: { what: string; rssBytes: number }[]): string {
  return rss.length ? `${rss.map((x) => `${x.what} ${(x.rssBytes / MiB).toFixed(0)} MiB`).join(', ')}; total ${(totalRss(rss) / MiB).toFixed(0)} MiB` : 'not sampled';
}

/** The sum of the RSS of the processes given. */
export function totalRss(rss: readonly { rssBytes: number }[]): number {
  return rss.reduce((a, x) => a + x.rssBytes, 0);
}

/**
 * The memory lines of the summary: the rig idle, the rig loaded (the largest total of any
 * step's per-process peaks, and at which step) and the controller's RSS after GC per step.
 */
export function memorySummary(idle: readonly { what: string; rssBytes: number }[], rows: readonly Pick<StepResult, 'side' | 'offered' | 'controllerRss' | 'rigRss'>[]): string {
  const loaded = rows.reduce<(typeof rows)[number] | null>((m, r) => (m === null || totalRss(r.rigRss) > totalRss(m.rigRss) ? r : m), null);
  const lines = [`memory: rig idle ${idle.length ? `${(totalRss(idle) / MiB).toFixed(0)} MiB over ${idle.length} processes` : 'not sampled'}`];
  if (loaded) lines.push(`memory: rig loaded (peaks, the heaviest step: ${loaded.side} at ${loaded.offered}/s) ${(totalRss(loaded.rigRss) / MiB).toFixed(0)} MiB over ${loaded.rigRss.length} processes${idle.length ? `, ×${(totalRss(loaded.rigRss) / totalRss(idle)).toFixed(2)} idle` : ''}`);
  if (rows.length) lines.push(`memory: controller RSS after GC per step ${rows.map((r) => `${r.side[0]}${r.offered} ${(r.controllerRss / MiB).toFixed(0)}`).join(', ')} MiB`);
  return lines.join('\n');
}

function controllerRssAfterGc(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  return process.memoryUsage().rss;
}

function refuseUnlessExact(side: string, c: BucketCount, produced: number): void {
  console.log(`  ${side}: recount ${c.distinct}/${produced} distinct, ${c.duplicates} duplicates, ${c.missing} missing, ${c.foreign} foreign, ${c.objects} objects`);
  if (c.duplicates || c.missing || c.foreign) throw new Error(`${side}: not exactly once (${c.duplicates} duplicates, ${c.missing} missing, ${c.foreign} foreign): no result`);
}

async function deletePrefix(s3: S3Client, bucket: string, prefix: string): Promise<void> {
  let token: string | undefined;
  const keys: string[] = [];
  do {
    const r = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
    for (const o of r.Contents ?? []) if (o.Key) keys.push(o.Key);
    token = r.IsTruncated ? r.NextContinuationToken : undefined;
  } while (token);
  for (const Key of keys) await s3.send(new DeleteObjectCommand({ Bucket: bucket, Key }));
}

/** The store's endpoint, region and keys as plain settings, for the baseline's own thread (rigKit()'s kit.s3 is built from the same). */
function storeSettings(kit: RigKit): S3Settings {
  return { endpoint: kit.state.store.endpoint, region: kit.state.store.region, accessKeyId: kit.credentials.accessKeyId, secretAccessKey: kit.credentials.secretAccessKey };
}

/**
 * The pool of --producers producers for a topic (bench/producer-pool.ts), each in its own
 * thread with --producer-threads or its own JVM with --producer-jvm; resolves once every
 * member can send (a JVM's start takes about a second: not inside the rung's clock).
 */
async function producerPool(kit: RigKit, o: SustainedOptions, topic: string): Promise<ProducerPool> {
  const nice = o.producerNice === null ? {} : { nice: o.producerNice };
  const member = (i: number) => {
    const owned = ownedBy(i, o.producers, o.partitions);
    if (o.producerJvm) return new JvmProducer(kit.bootstrap, topic, o.partitions, 60, owned, nice);
    if (o.producerThreads) return new ThreadedProducer(kit.bootstrap, topic, o.partitions, 60, owned, nice);
    return new LineProducer(kit.bootstrap, topic, o.partitions, 60, owned);
  };
  const pool = new ProducerPool(o.partitions, Array.from({ length: o.producers }, (_, i) => member(i)));
  try {
    await pool.ready();
  } catch (err) {
    await pool.close().catch(() => undefined);
    throw err;
  }
  return pool;
}

/** CPU seconds so far of the pool's JVM producers (null without --producer-jvm). */
function jvmCpuS(pool: ProducerPool): number | null {
  const pids = pool.members.map((m) => (m instanceof JvmProducer ? m.pid : undefined)).filter((p): p is number => p !== undefined);
  if (!pids.length) return null;
  return pids.reduce((a, pid) => a + (processCpuS(pid) ?? 0), 0);
}

/** The CPU table of a rung, with the JVM producers' own row when they ran (they are processes of their own, outside this process's row). */
function withJvmRow(cpu: StepResult['cpu'], before: number | null, after: number | null, o: SustainedOptions): StepResult['cpu'] {
  if (before === null || after === null || !(cpu.windowS > 0)) return cpu;
  const cpuS = Math.max(0, after - before);
  const row: CpuRow = { what: `producer JVM${o.producers === 1 ? '' : 's'}${o.producerNice === null ? '' : ` (nice ${o.producerNice})`}`, cpuS, pct: (cpuS / cpu.windowS) * 100 };
  const rows = [...cpu.rows];
  rows.splice(rows.length - 1, 0, row); // this process's row stays last
  return { ...cpu, rows };
}

/**
 * What this process ran during a rung, for its CPU row (process.cpuUsage counts every thread
 * of the process): the producer (in its threads with --producer-threads), on the engine and
 * baseline sides the watcher, and on the baseline side the baseline's own thread.
 */
function controllerRuns(side: Side, o: SustainedOptions): string {
  if (o.producerJvm) return side === 'producer' ? 'pacing' : side === 'engine' ? 'pacing + watcher' : 'pacing + watcher + baseline thread';
  const producer = o.producerThreads ? 'producer threads' : 'producer';
  return side === 'producer' ? producer : side === 'engine' ? `${producer} + watcher` : `${producer} + watcher + baseline thread`;
}

/** "4 producers in threads", for the headings. */
function describeProducers(o: SustainedOptions): string {
  return `${o.producers} producer${o.producers === 1 ? '' : 's'}${o.producerJvm ? ` in ${o.producers === 1 ? 'its own JVM' : 'their own JVMs'}` : o.producerThreads ? ` in ${o.producers === 1 ? 'its own thread' : 'their own threads'}` : ''}${o.producerNice === null ? '' : ` at nice ${o.producerNice}`}`;
}

/** The rig's shape for a rung's disk need (bench/disk-guard.ts). */
function diskShape(kit: RigKit, output: boolean): RungDiskShape {
  return { local: kit.state.kind === 'local', brokers: kit.state.hosts.filter((h) => h.roles.includes('broker')).length, output };
}

/** Before a rung: the brokers' disks have its need and the headroom free (waiting a while for earlier rungs' topics to go), or the rung is refused. */
function guardDisk(kit: RigKit, what: string, needBytes: number): Promise<void> {
  return guardRungDisk(what, needBytes, () => brokerDisks(kit.state, kit.remote));
}

/** Rungs run so far in this process (a rate offered again gets a fresh topic and prefix: Kafka deletes a topic asynchronously). */
let stepCount = 0;

const NO_LATENCY: LatencySummary = { n: 0, p50: NaN, p99: NaN, max: NaN };

/** A produce-only rung: the producer offers the rate to a fresh topic, nothing reads it; it passes when it reached ≥ 98 % of the rate. */
async function producerStep(kit: RigKit, o: SustainedOptions, rate: number, runId: string, workDir: string): Promise<StepResult> {
  const tag = `prod-${runId}-${rate}-${++stepCount}`;
  const topic = `clink-bench-sus-${tag}`;
  console.log(`\n== producer only at ${rate} events/s: topic ${topic}, ${o.producerDurationMs / 1000} s, ${describeProducers(o)}`);
  await guardDisk(kit, `the producer rung at ${rate} events/s`, rungDiskBytes(rate, o.producerDurationMs, diskShape(kit, false)));
  await createTopic(kit.bootstrap, topic, o.partitions, 3);
  const pool = await producerPool(kit, o, topic);
  const resFile = path.join(workDir, `resources-${tag}.jsonl`);
  const sampler = new ResourceSampler({ rig: kit.state, remote: kit.remote, path: resFile, intervalMs: 30_000, produced: () => pool.produced, judged: () => 0 });
  let prod: Produced;
  let cpu: StepResult['cpu'];
  try {
    const before = await sampler.sample();
    const jvm0 = jvmCpuS(pool);
    prod = await produceAtRate(pool, new SendLog(o.partitions), rate, o.producerDurationMs, o.tickMs, o.maxSend);
    const jvm1 = jvmCpuS(pool);
    cpu = withJvmRow(cpuBetween(before, await sampler.sample(), controllerRuns('producer', o)), jvm0, jvm1, o);
  } finally {
    await pool.close().catch(() => undefined);
  }
  if (!o.keep) await deleteTopic(kit.bootstrap, topic).catch((err) => console.log(`  cleanup: ${(err as Error).message}`));
  const ok = prod.achieved >= MIN_ACHIEVED_SHARE * rate;
  const kept: KeptUp = { ok, producerLimited: false, reasons: ok ? [] : [`achieved ${Math.round(prod.achieved)}/s < ${MIN_ACHIEVED_SHARE * 100} % of ${rate}/s`] };
  const r: StepResult = { side: 'producer', offered: rate, achieved: prod.achieved, produced: prod.produced, drainMs: null, lat: NO_LATENCY, kept, ok, producerBound: false, lag: null, objects: 0, controllerRss: controllerRssAfterGc(), rigRss: peakRss(readResources(resFile)), cpu };
  console.log(`  produced ${prod.produced} events in ${((prod.stoppedAt - prod.startedAt) / 1000).toFixed(1)} s = ${Math.round(prod.achieved)}/s: ${ok ? 'REACHED' : `NOT REACHED: ${kept.reasons.join('; ')}`}`);
  return r;
}

async function step(kit: RigKit, o: SustainedOptions, side: 'engine' | 'baseline', rate: number, runId: string, workDir: string): Promise<StepResult> {
  const tag = `${side === 'engine' ? 'eng' : 'base'}-${runId}-${rate}-${++stepCount}`;
  const topic = `clink-bench-sus-${tag}`;
  const bucket = kit.state.store.bucket;
  const prefix = `bench-sus-${tag}/`;
  console.log(`\n== ${side} at ${rate} events/s: topic ${topic}, prefix ${prefix}, ${o.durationMs / 1000} s`);
  await guardDisk(kit, `the ${side} rung at ${rate} events/s`, rungDiskBytes(rate, o.durationMs, diskShape(kit, true)));
  await createTopic(kit.bootstrap, topic, o.partitions, 3);
  const log = new SendLog(o.partitions);
  const watcher = new Watcher(kit.s3, bucket, prefix, log, o.partitions);
  const producer = await producerPool(kit, o, topic);
  const resFile = path.join(workDir, `resources-${tag}.jsonl`);
  const sampler = new ResourceSampler({ rig: kit.state, remote: kit.remote, path: resFile, intervalMs: 30_000, produced: () => producer.produced, judged: () => watcher.distinct });
  const engine = side === 'engine' ? clinkEngine() : null;
  let sink: ThreadedRawSink | null = null;
  let prod: Produced;
  let drainMs: number | null;
  let checkpoints: number | undefined;
  let cpu: StepResult['cpu'];
  let split: EngineSplit | undefined;
  const lagPoints: LagPoint[] = [];
  const lagTimer = setInterval(() => lagPoints.push({ t: Date.now(), lag: producer.produced - watcher.distinct }), LIST_INTERVAL_MS);
  try {
    if (engine) {
      await engine.deploy(kit.ctx(tag, (l) => console.log(`  ${l}`)), { topic, partitions: o.partitions, bucket, prefix, checkpointIntervalMs: o.checkpointMs });
      await engine.start();
    } else {
      sink = new ThreadedRawSink({ bootstrap: kit.bootstrap, topic, partitions: o.partitions, s3: storeSettings(kit), bucket, prefix, intervalMs: o.checkpointMs });
      // Its consumers in place before the producer starts, as the engine's are (deploy, start).
      await sink.started();
    }
    watcher.start();
    sampler.start();
    // CPU over the producer's run: a sample just before it starts and one just after it stops.
    const before = await sampler.sample();
    const jvm0 = jvmCpuS(producer);
    prod = await produceAtRate(producer, log, rate, o.durationMs, o.tickMs, o.maxSend);
    const jvm1 = jvmCpuS(producer);
    cpu = withJvmRow(cpuBetween(before, await sampler.sample(), controllerRuns(side, o)), jvm0, jvm1, o);
    clearInterval(lagTimer);
    console.log(`  produced ${prod.produced} events in ${((prod.stoppedAt - prod.startedAt) / 1000).toFixed(1)} s = ${Math.round(prod.achieved)}/s (offered ${rate}/s)`);
    const finished = sink?.finish(prod.seq);
    finished?.catch(() => undefined); // awaited below; this only keeps an early failure from being unhandled
    drainMs = await awaitDrain(watcher, prod.produced, prod.stoppedAt, Math.max(3 * o.checkpointMs, 30_000));
    await watcher.stop(); // a read that failed throws here: its lines' latencies would be missing
    if (finished) await (drainMs === null ? Promise.race([finished, sleep(5000)]) : finished);
    await sampler.stop();
    if (engine) {
      const h = await engine.health();
      checkpoints = h.completedCheckpoints;
      if (h.integrityStop) console.log(`  engine: integrity stop at ${h.integrityStop.at}: ${h.integrityStop.message}`);
      const logsDir = path.join(workDir, `logs-${tag}`);
      await engine.collectLogs(logsDir).catch((err) => console.log(`  engine logs: ${(err as Error).message}`));
      split = readEngineSplit(logsDir);
    }
  } finally {
    clearInterval(lagTimer);
    await sampler.stop().catch(() => undefined);
    await watcher.stop().catch((err) => console.log(`  watcher: ${(err as Error).message}`));
    await sink?.abort();
    await engine?.stop().catch(() => undefined);
    await producer.close().catch(() => undefined);
  }
  const count = await countBucket(kit.s3, bucket, prefix, prod.seq);
  refuseUnlessExact(side, count, prod.produced);
  if (watcher.foreign || watcher.duplicates) throw new Error(`${side}: the watcher saw ${watcher.foreign} foreign and ${watcher.duplicates} duplicate lines: no result`);
  const lat = summarize(watcher.latencies.values());
  const lag = lagGrowth(lagPoints, prod.startedAt, prod.stoppedAt, o.checkpointMs, rate);
  const kept = keptUp({ offered: rate, achieved: prod.achieved, drainMs, p99Ms: lat.p99, checkpointMs: o.checkpointMs, lag });
  const rigRss = peakRss(readResources(resFile));
  if (!o.keep) {
    await deletePrefix(kit.s3, bucket, prefix).catch((err) => console.log(`  cleanup: ${(err as Error).message}`));
    await deleteTopic(kit.bootstrap, topic).catch((err) => console.log(`  cleanup: ${(err as Error).message}`));
  }
  const r: StepResult = { side, offered: rate, achieved: prod.achieved, produced: prod.produced, drainMs, lat, kept, ok: kept.ok, producerBound: kept.producerLimited, lag, checkpoints, objects: count.objects, controllerRss: controllerRssAfterGc(), rigRss, cpu, ...(split ? { split } : {}) };
  console.log(table([r]));
  console.log(`  ${side} at ${rate}/s: ${kept.ok ? 'KEPT UP' : `FAILED: ${kept.reasons.join('; ')}`}`);
  console.log(`  lag: ${lag.slopePerS === null ? `not judged (${lag.troughs} troughs)` : `troughs' slope ${Math.round(lag.slopePerS)}/s over ${lag.troughs} troughs (growing above ${Math.round(lag.limitPerS)}/s)`}`);
  console.log(`  memory: controller RSS after GC ${(r.controllerRss / MiB).toFixed(0)} MiB; rig peak RSS ${describeRss(rigRss)}`);
  return r;
}

function table(rows: StepResult[]): string {
  const head = ['side', 'offered/s', 'achieved/s', 'p50 ms', 'p99 ms', 'max ms', 'drain ms', 'lag slope/s', 'ckpts', 'objects', 'ctl RSS MiB', 'verdict'];
  const ms = (v: number) => (Number.isFinite(v) ? String(Math.round(v)) : 'n/a');
  const body = rows.map((r) => [
    r.side,
    String(r.offered),
    String(Math.round(r.achieved)),
    ms(r.lat.p50),
    ms(r.lat.p99),
    ms(r.lat.max),
    r.side === 'producer' ? '-' : r.drainMs === null ? 'never' : String(r.drainMs),
    r.lag?.slopePerS == null ? '-' : String(Math.round(r.lag.slopePerS)),
    r.checkpoints === undefined ? '-' : String(r.checkpoints),
    String(r.objects),
    (r.controllerRss / MiB).toFixed(0),
    r.side === 'producer' ? (r.ok ? 'reached' : 'not reached') : r.kept.ok ? 'kept up' : r.kept.producerLimited ? 'producer-bound' : 'behind',
  ]);
  const w = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  return [head, ...body].map((row) => '  ' + row.map((c, i) => (i === 0 || i === row.length - 1 ? c.padEnd(w[i]!) : c.padStart(w[i]!))).join('  ').trimEnd()).join('\n');
}

/** Where the time went at a rung: CPU per process, and Clink's own split. */
function whereTimeGoes(title: string, r: StepResult | null): string {
  if (!r) return `\n${title}: no passing rung`;
  const lines = [`\n${title}: ${r.side} at ${r.offered} events/s, CPU while the producer ran (${r.cpu.windowS.toFixed(0)} s):`, cpuTable(r.cpu)];
  if (r.split) lines.push(`Clink's split at ${r.offered} events/s (each subtask's share of its reading time; the prefetcher's fetches overlap it):`, splitTable(r.split));
  return lines.join('\n');
}

function ladderSummary(o: SustainedOptions & { rates: number[] }, rows: StepResult[]): { eng: MaxSustained; base: MaxSustained; ratio: number | null; bound: RatioBound; p99AtMax: number | null; engRow: StepResult | null; baseRow: StepResult | null } {
  const sideRows = (side: 'engine' | 'baseline') => rows.filter((r) => r.side === side);
  const rungs = (side: 'engine' | 'baseline') => sideRows(side).map((r) => ({ offered: r.offered, ok: r.kept.ok, producerLimited: r.kept.producerLimited }));
  const eng = maxSustained(rungs('engine'));
  const base = maxSustained(rungs('baseline'));
  const { ratio, bound } = ratioVsBaseline(eng, base);
  console.log(`\nAll steps (ladder ${o.rates.join(', ')} events/s; checkpoint ${o.checkpointMs} ms; ${o.durationMs / 1000} s per step; ${keptUpRule(o)}):`);
  console.log(rows.length ? table(rows) : '  (none)');
  const engRow = eng.index >= 0 ? sideRows('engine')[eng.index]! : null;
  const baseRow = base.index >= 0 ? sideRows('baseline')[base.index]! : null;
  return { eng, base, ratio, bound, p99AtMax: engRow ? engRow.lat.p99 : null, engRow, baseRow };
}

function keptUpRule(o: SustainedOptions): string {
  return `kept up = achieved ≥ ${MIN_ACHIEVED_SHARE * 100} % of offered, drain and p99 ≤ ${o.checkpointMs + SLACK_MS} ms, lag not growing (troughs' slope ≤ ${LAG_GROWTH_SHARE * 100} % of offered)`;
}

/** The fixed ladder (--rates): each side climbs it and stops at its first failing rung; the RESULT line as before. */
async function runLadder(kit: RigKit, o: SustainedOptions & { rates: number[] }, runId: string, workDir: string, rows: StepResult[]): Promise<string[]> {
  const climbing = { engine: true, baseline: true };
  for (const rate of o.rates) {
    if (!climbing.engine && !climbing.baseline) break;
    for (const side of ['baseline', 'engine'] as const) {
      if (!climbing[side]) continue;
      const r = await step(kit, o, side, rate, runId, workDir);
      rows.push(r);
      if (!r.kept.ok) climbing[side] = false;
    }
  }
  const { eng, base, ratio, bound, p99AtMax, engRow, baseRow } = ladderSummary(o, rows);
  const describe = (name: string, m: MaxSustained) => `${name}: max sustained ${m.max} events/s${m.capped ? ' (capped: it passed every rung measured, or its first failure was producer-limited; its true max may be higher)' : ''}`;
  return [
    whereTimeGoes('Where the time goes at the baseline\'s top passing rung', baseRow),
    whereTimeGoes("Where the time goes at Clink's top passing rung", engRow),
    describe('engine', eng),
    describe('baseline', base),
    `ratio_vs_baseline = engine max / baseline max = ${ratio === null ? 'n/a (the baseline passed no rung)' : ratio.toFixed(3)}: ${bound}`,
    resultLine(eng.max, p99AtMax, ratio),
  ];
}

export interface ClimbSummary {
  clink: Pick<Climb<StepResult>, 'max' | 'maxRung' | 'determined'>;
  baseline: Pick<Climb<StepResult>, 'max' | 'determined'>;
  producer: Pick<Climb<StepResult>, 'max' | 'determined'>;
  resolution: number;
  rungs: number;
}

/** ratio_at_baseline_max: Clink's maximum / the baseline's (null without both). */
export function ratioAtBaselineMax(clinkMax: number | null, baselineMax: number | null): number | null {
  return clinkMax !== null && baselineMax ? clinkMax / baselineMax : null;
}

/**
 * The climb's RESULT line: the ladder's three fields first (Clink's maximum, its p99, the
 * ratio, as bench/scale.ts reads them), then each side's maximum, the ratio at the
 * baseline's maximum (the same figure as ratio_vs_baseline, named for what it is), whether
 * each maximum and both together are determined, the resolution and the rungs run.
 */
export function climbResultLine(c: ClimbSummary): string {
  const n = (v: number | null) => (v === null ? 'n/a' : String(v));
  const ratio = ratioAtBaselineMax(c.clink.max, c.baseline.max);
  const yes = (b: boolean) => (b ? 'yes' : 'no');
  const old = resultLine(c.clink.max ?? 0, c.clink.maxRung ? c.clink.maxRung.lat.p99 : null, ratio);
  return `${old} clink_max_events_per_s=${n(c.clink.max)} baseline_max_events_per_s=${n(c.baseline.max)} producer_max_events_per_s=${n(c.producer.max)} ratio_at_baseline_max=${ratio === null ? 'n/a' : ratio.toFixed(3)} determined=${yes(c.clink.determined && c.baseline.determined)} clink_determined=${yes(c.clink.determined)} baseline_determined=${yes(c.baseline.determined)} producer_determined=${yes(c.producer.determined)} resolution=${c.resolution} rungs=${c.rungs}`;
}

/** One rung of each kind (on the rig: producerStep and step; fakes in unit tests). */
export interface RungRunners {
  producer(rate: number): Promise<StepResult>;
  baseline(rate: number): Promise<StepResult>;
  engine(rate: number): Promise<StepResult>;
}

/**
 * The climb: the producer's own ceiling first, then the baseline and Clink, each up to it;
 * every rung appended to `rows` as it ends. Returns the closing lines: where the time goes
 * at each top passing rung, what each climb showed, the ratio and the RESULT line.
 */
export async function runClimb(o: SustainedOptions, run: RungRunners, rows: StepResult[]): Promise<string[]> {
  const opts = o.climb;
  const record = async (r: Promise<StepResult>): Promise<StepResult> => {
    const x = await r;
    rows.push(x);
    return x;
  };
  console.log(`\n=== the producer's own ceiling: produce only, no engine (${describeProducers(o)})`);
  const producer = await climb((rate) => record(run.producer(rate)), opts);
  console.log(describeClimb('producer', producer, opts, 'not reached'));
  const ceiling = producer.max ?? undefined;
  console.log(`\n=== the raw consume -> put baseline${ceiling !== undefined ? `, up to the producer's ${ceiling} events/s` : ''}`);
  const baseline = await climb((rate) => record(run.baseline(rate)), { ...opts, ...(ceiling !== undefined ? { ceiling } : {}) });
  console.log(describeClimb('baseline', baseline, opts));
  console.log(`\n=== Clink${ceiling !== undefined ? `, up to the producer's ${ceiling} events/s` : ''}`);
  const clink = await climb((rate) => record(run.engine(rate)), { ...opts, ...(ceiling !== undefined ? { ceiling } : {}) });
  console.log(describeClimb('clink', clink, opts));

  console.log(`\nAll rungs (climb from ${opts.start} events/s, resolution ${opts.resolution * 100} %, ${opts.confirmations} confirmation${opts.confirmations === 1 ? '' : 's'}, at most ${opts.maxRungs} rungs a side; checkpoint ${o.checkpointMs} ms; ${o.durationMs / 1000} s per rung, ${o.producerDurationMs / 1000} s produce only; ${keptUpRule(o)}; producer-bound = achieved < ${MIN_ACHIEVED_SHARE * 100} %):`);
  console.log(table(rows));
  const ratio = ratioAtBaselineMax(clink.max, baseline.max);
  return [
    whereTimeGoes("Where the time goes at the producer's top passing rung", producer.maxRung),
    whereTimeGoes("Where the time goes at the baseline's top passing rung", baseline.maxRung),
    whereTimeGoes("Where the time goes at Clink's top passing rung", clink.maxRung),
    '',
    describeClimb('producer', producer, opts, 'not reached'),
    describeClimb('baseline', baseline, opts),
    describeClimb('clink', clink, opts),
    `ratio_vs_baseline = engine max / baseline max = ${ratio === null ? 'n/a' : ratio.toFixed(3)}: ${clink.determined && baseline.determined ? `at ${opts.resolution * 100} % resolution` : 'undetermined'}`,
    climbResultLine({ clink, baseline, producer, resolution: opts.resolution, rungs: rows.length }),
  ];
}

export async function main(args: string[]): Promise<void> {
  const o = optionsOrUsage(parseOptions, args, USAGE);
  if (!o || !takeRigLock('engine-sustained')) return;
  if (o.durationMs < 10 * o.checkpointMs) console.log(`warning: ${o.durationMs / 1000} s spans fewer than 10 checkpoints of ${o.checkpointMs} ms`);
  if (!(globalThis as { gc?: unknown }).gc) console.log('warning: run with --expose-gc (npm run bench does) for honest memory figures');
  const kit = rigKit();
  const runId = String(Date.now());
  const workDir = mkdtempSync(path.join(os.tmpdir(), 'bench-sustained-'));
  const rows: StepResult[] = [];
  let idle: { what: string; rssBytes: number }[] = [];
  let last: string[];
  try {
    // The rig at rest (Kafka and MinIO up, no engine, no load): the base the steps' peaks are compared with.
    const idleFile = path.join(workDir, 'resources-idle.jsonl');
    await new ResourceSampler({ rig: kit.state, remote: kit.remote, path: idleFile, intervalMs: 30_000, produced: () => 0, judged: () => 0 }).sample();
    idle = peakRss(readResources(idleFile));
    console.log(`rig idle RSS (no engine, no load): ${describeRss(idle)}`);
    last = o.rates
      ? await runLadder(kit, { ...o, rates: o.rates }, runId, workDir, rows)
      : await runClimb(
          o,
          {
            producer: (rate) => producerStep(kit, o, rate, runId, workDir),
            baseline: (rate) => step(kit, o, 'baseline', rate, runId, workDir),
            engine: (rate) => step(kit, o, 'engine', rate, runId, workDir),
          },
          rows,
        );
  } catch (err) {
    console.log(`\nSteps so far:\n${rows.length ? table(rows) : '  (none)'}`);
    console.log('no RESULT: a step was refused or could not run (below)');
    throw err;
  } finally {
    await kit.close();
    rmSync(workDir, { recursive: true, force: true });
  }
  console.log(memorySummary(idle, rows.filter((r) => r.side !== 'producer')));
  for (const l of last) console.log(l);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv.slice(2)).catch((err) => {
    // A refusal (the disk a rung needs, …) is said in its own words; anything else with its stack.
    console.error(err instanceof QualError ? `engine-sustained: ${err.message}` : err);
    process.exit(1);
  });
}
