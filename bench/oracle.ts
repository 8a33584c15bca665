/**
 * The oracle benchmark: can the recount keep up with the store?
 *
 * 1. Makes sure the bench bucket holds the dataset: --events events (default 7,500,000,
 *    QUAL-03's scale) over --partitions partitions, in objects of --per-object events
 *    (default 2,027 ≈ 7,477,200 / 3,688), written with PutObject. A marker object records
 *    a complete dataset, so a second run skips the writing.
 * 2. Times, in the same run and alternating (raw, recount, raw, recount: the best of each),
 *    a raw GET of every object (bytes read and dropped) and the full recount (list, GET,
 *    judge every line, tally), both with --concurrency parallel GETs (default 16).
 *    Each phase's client CPU (process.cpuUsage: user + system, this thread and the judge
 *    workers) is shown with it: on a box with no idle core the wall time swings with the
 *    load, the client's own CPU far less.
 * 3. Memory: heapUsed + arrayBuffers after a forced GC, with the recount's tally alive,
 *    minus the same measured just before the recount began, over the events (the worst round);
 *    and the process's RSS measured the same way, per million events judged (RSS also holds
 *    what the allocator keeps after a GC, so it is the figure an operator sees).
 *
 * Last line: RESULT oracle events_per_s=<N> ratio_vs_raw_get=<r> raw_get_events_per_s=<R> bytes_per_event=<b> rss_mib_per_million_events=<m>
 * cpu_ns_per_event=<c> cpu_user_ns_per_event=<u> raw_get_cpu_ns_per_event=<g> (the client's CPU, least of the
 * rounds; <u> the user part of that round: the rest is the kernel's, on loopback the store's side of each send too)
 * Credentials and endpoint: CLINK_QUAL_S3_ENDPOINT + AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY
 * (no rig touched, no rig lock), else the live rig's store, under the rig lock.
 *
 * With CLINK_QUAL_STORE_PID, the PID of the store's process on this machine (a loopback MinIO
 * of one's own), or on the local rig's store (found by itself), each phase's store CPU too (/proc/<pid>/stat, 10 ms ticks), and the cores the
 * two kept busy: (client CPU + store CPU) / wall time. On a 2-core box at 2.0, the recount
 * cannot come closer to the raw GET than the raw GET's CPU over the recount's allows. The
 * RESULT line then ends with store_cpu_ns_per_event=<s> raw_get_store_cpu_ns_per_event=<r>
 * (the least of the rounds).
 *
 * The judge is the one a campaign's recount runs: the compiled fast path (oracle/wasm-judge.ts);
 * CLINK_QUAL_JUDGE=js judges in JavaScript alone, for a comparison in the same tree.
 */
import { parseArgs } from 'node:util';
import { CreateBucketCommand, HeadBucketCommand, HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { Generator } from '../oracle/generator.ts';
import { recount } from '../oracle/recount.ts';
import { JUDGE_IMPL } from '../oracle/tally.ts';
import { ObjectStore, makeS3Client, mapLimit, type StoreSettings } from '../oracle/store.ts';
import { servicePid } from '../rig/process.ts';
import { remoteFor } from '../rig/ssh.ts';
import { readRigState, readStoreCredentials } from '../rig/state.ts';
import { storeServiceOf } from '../rig/store.ts';
import { processCpuS } from './jvm-producer.ts';
import { takeRigLock } from './cli.ts';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '7500000' },
    'per-object': { type: 'string', default: '2027' },
    partitions: { type: 'string', default: '4' },
    keys: { type: 'string', default: '50000' },
    seed: { type: 'string', default: 'oracle-bench' },
    bucket: { type: 'string', default: 'oracle-bench' },
    concurrency: { type: 'string', default: '16' },
    rounds: { type: 'string', default: '2' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  console.log(`Usage: npm run bench -- oracle [--events N] [--per-object N] [--partitions N] [--keys K] [--seed S] [--bucket B] [--concurrency N] [--rounds N]

On the rig's store it takes the rig lock (exit 2 naming the holder while another command uses
the rig); with CLINK_QUAL_S3_ENDPOINT (a store of your own) it touches no rig and takes none.
With CLINK_QUAL_STORE_PID (that store's process on this machine), or on the local rig's store,
it shows the store's CPU too.`);
  process.exit(0);
}
// On the rig's store: one command on the rig at a time (an external store needs no lock).
if (!process.env.CLINK_QUAL_S3_ENDPOINT && !takeRigLock('oracle')) process.exit(2);
const events = Number(values.events);
const perObject = Number(values['per-object']);
const partitions = Number(values.partitions);
const keys = Number(values.keys);
const concurrency = Number(values.concurrency);
const rounds = Number(values.rounds);
const seed = values.seed!;
const bucket = values.bucket!;

function endpoint(): StoreSettings {
  const env = process.env;
  if (env.CLINK_QUAL_S3_ENDPOINT) return { endpoint: env.CLINK_QUAL_S3_ENDPOINT, region: 'us-east-1', accessKeyId: env.AWS_ACCESS_KEY_ID ?? '', secretAccessKey: env.AWS_SECRET_ACCESS_KEY ?? '' };
  const state = readRigState();
  return { endpoint: state.store.endpoint, region: state.store.region, ...readStoreCredentials(state) };
}

const log = (s: string) => console.log(`bench oracle: ${s}`);
const st: StoreSettings = { ...endpoint(), requestTimeoutMs: 60_000 };
/**
 * The store's process on this machine, whose CPU is read around each phase: CLINK_QUAL_STORE_PID,
 * or, on the local rig's store (its hosts are namespaces of this machine), the store service's
 * PID as the rig recorded it. None for a store elsewhere.
 */
async function findStorePid(): Promise<number | undefined> {
  if (process.env.CLINK_QUAL_STORE_PID) return Number(process.env.CLINK_QUAL_STORE_PID);
  if (process.env.CLINK_QUAL_S3_ENDPOINT) return undefined;
  const state = readRigState();
  const host = state.kind === 'local' ? state.hosts.find((h) => h.name === state.store.host) : undefined;
  if (!host) return undefined;
  const remote = remoteFor(host);
  try {
    const pid = await servicePid(remote, storeServiceOf(state.store));
    if (pid !== null) log(`the store's CPU: the local rig's ${storeServiceOf(state.store)} on ${host.name}, PID ${pid}`);
    return pid ?? undefined;
  } finally {
    await remote.close();
  }
}
const storePid = await findStorePid();
if (storePid !== undefined && processCpuS(storePid) === null) {
  console.error(`bench oracle: ${process.env.CLINK_QUAL_STORE_PID ? `CLINK_QUAL_STORE_PID=${process.env.CLINK_QUAL_STORE_PID}` : `the store's PID ${storePid}`} is not a live process here`);
  process.exit(254);
}
/** The store's CPU seconds now (0 without a store PID). */
const storeCpu = (): number => (storePid === undefined ? 0 : (processCpuS(storePid) ?? Number.NaN));
const prefix = `data-${seed}-${events}-${partitions}-${perObject}/`;
const marker = `markers/${prefix}complete`;
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) log('warning: run with --expose-gc (npm run bench does) for honest memory figures');
/** Memory after a forced GC: the heap the recount holds (heapUsed + arrayBuffers) and the process's RSS. */
const memAfterGc = () => {
  gc?.();
  gc?.();
  const m = process.memoryUsage();
  return { heap: m.heapUsed + m.arrayBuffers, rss: m.rss };
};

// Per partition: events split as evenly as the producer does.
const perPartition = Array.from({ length: partitions }, (_, p) => Math.floor(events / partitions) + (p < events % partitions ? 1 : 0));

async function ensureDataset(): Promise<void> {
  const s3 = makeS3Client(st);
  try {
    try {
      await s3.send(new HeadBucketCommand({ Bucket: bucket }));
    } catch {
      await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    }
    try {
      await s3.send(new HeadObjectCommand({ Bucket: bucket, Key: marker }));
      log(`dataset already in s3://${bucket}/${prefix} (marker found); not writing it again`);
      return;
    } catch {
      /* not there: write it */
    }
    const gen = new Generator({ seed, partitions, keys });
    const jobs: { p: number; from: number; to: number }[] = [];
    for (let p = 0; p < partitions; p++) for (let from = 0; from < perPartition[p]!; from += perObject) jobs.push({ p, from, to: Math.min(perPartition[p]!, from + perObject) });
    const t0 = Date.now();
    let done = 0;
    let bytes = 0;
    await mapLimit(jobs, concurrency, async ({ p, from, to }) => {
      const parts: string[] = [];
      for (let seq = from; seq < to; seq++) parts.push(gen.line(p, seq));
      const body = Buffer.from(parts.join('\n') + '\n');
      bytes += body.length;
      await s3.send(new PutObjectCommand({ Bucket: bucket, Key: `${prefix}p${p}/${String(from).padStart(10, '0')}.jsonl`, Body: body }));
      if (++done % 500 === 0) log(`wrote ${done}/${jobs.length} objects`);
    });
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: marker, Body: JSON.stringify({ events, partitions, perObject, objects: jobs.length, bytes }) }));
    log(`wrote ${jobs.length} objects, ${(bytes / 1e6).toFixed(0)} MB, ${events} events in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  } finally {
    s3.destroy();
  }
}

/** The client process's CPU seconds (user + system, every thread) since `from`, and its user part. */
const cpuSince = (from: NodeJS.CpuUsage): { cpuS: number; userS: number } => {
  const d = process.cpuUsage(from);
  return { cpuS: (d.user + d.system) / 1e6, userS: d.user / 1e6 };
};

async function rawGet(): Promise<{ s: number; cpuS: number; userS: number; storeCpuS: number; bytes: number; objects: number }> {
  const store = new ObjectStore(st, bucket);
  try {
    const store0 = storeCpu();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const listed = await store.list(prefix);
    let bytes = 0;
    await mapLimit(listed, concurrency, async (o) => {
      const got = await store.get(o.key);
      bytes += got?.body.length ?? 0;
    });
    return { s: (performance.now() - t0) / 1000, ...cpuSince(cpu0), storeCpuS: storeCpu() - store0, bytes, objects: listed.length };
  } finally {
    store.destroy();
  }
}

async function oracle(): Promise<{ s: number; cpuS: number; userS: number; storeCpuS: number; bytesPerEvent: number; rssPerEvent: number; distinct: number; clean: boolean; bitsetBytes: number }> {
  const base = memAfterGc();
  const store0 = storeCpu();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const r = await recount({ settings: { seed, partitions, keys, bucket, prefix, endpoint: st.endpoint, region: st.region }, credentials: st, produced: perPartition, concurrency, requestTimeoutMs: 60_000 });
  const s = (performance.now() - t0) / 1000;
  const { cpuS, userS } = cpuSince(cpu0);
  const storeCpuS = storeCpu() - store0;
  const after = memAfterGc();
  const grown = after.heap - base.heap;
  const grownRss = after.rss - base.rss;
  const clean = Object.values(r.recount.counters).every((c) => c === 0) && r.recount.distinctEvents === events;
  if (!clean) log(`the recount is not clean: ${JSON.stringify(r.recount.counters)}, distinct ${r.recount.distinctEvents}; ${r.findings.slice(0, 3).join('; ')}`);
  // Keep the tally alive until after the measurement.
  const bitsetBytes = r.tally.bitsetBytes;
  return { s, cpuS, userS, storeCpuS, bytesPerEvent: Math.max(0, grown) / r.recount.distinctEvents, rssPerEvent: Math.max(0, grownRss) / r.recount.distinctEvents, distinct: r.recount.distinctEvents, clean, bitsetBytes };
}

await ensureDataset();
let bestRaw = Infinity;
let bestOracle = Infinity;
let leastRawCpu = Infinity;
let leastOracleCpu = Infinity;
/** The user part of the recount's least-CPU round (the rest is the kernel's: on loopback, the store's side of each send too). */
let leastOracleUser = 0;
let leastRawStoreCpu = Infinity;
let leastOracleStoreCpu = Infinity;
let bytesPerEvent = 0;
let rssPerEvent = 0;
/** A phase's store CPU and the cores busy, when the store's PID was given. */
const storeSays = (x: { s: number; cpuS: number; storeCpuS: number }): string =>
  storePid === undefined ? '' : `; store CPU ${x.storeCpuS.toFixed(2)} s; cores busy ${((x.cpuS + x.storeCpuS) / x.s).toFixed(2)}`;
let rawBytes = 0;
let objects = 0;
let allClean = true;
for (let i = 0; i < rounds; i++) {
  const raw = await rawGet();
  rawBytes = raw.bytes;
  objects = raw.objects;
  log(`round ${i + 1}: raw GET  ${raw.objects} objects, ${(raw.bytes / 1e6).toFixed(0)} MB in ${raw.s.toFixed(2)} s (${(raw.bytes / 1e6 / raw.s).toFixed(0)} MB/s), client CPU ${raw.cpuS.toFixed(2)} s (user ${raw.userS.toFixed(2)} s)${storeSays(raw)}`);
  const o = await oracle();
  allClean &&= o.clean;
  log(`round ${i + 1}: recount ${o.distinct} events in ${o.s.toFixed(2)} s (${Math.round(o.distinct / o.s)} events/s), client CPU ${o.cpuS.toFixed(2)} s (user ${o.userS.toFixed(2)} s), memory growth ${o.bytesPerEvent.toFixed(3)} B/event (bitsets ${o.bitsetBytes} B), process RSS growth ${((o.rssPerEvent * 1e6) / 1048576).toFixed(2)} MiB per million events${storeSays(o)}`);
  bestRaw = Math.min(bestRaw, raw.s);
  bestOracle = Math.min(bestOracle, o.s);
  leastRawCpu = Math.min(leastRawCpu, raw.cpuS);
  leastRawStoreCpu = Math.min(leastRawStoreCpu, raw.storeCpuS);
  leastOracleStoreCpu = Math.min(leastOracleStoreCpu, o.storeCpuS);
  if (o.cpuS < leastOracleCpu) [leastOracleCpu, leastOracleUser] = [o.cpuS, o.userS];
  // Memory: the worst round (a collection can make one round's growth look smaller than it is).
  bytesPerEvent = Math.max(bytesPerEvent, o.bytesPerEvent);
  rssPerEvent = Math.max(rssPerEvent, o.rssPerEvent);
}
log(`dataset: ${objects} objects, ${(rawBytes / 1e6).toFixed(0)} MB, ${events} events, ${(rawBytes / events).toFixed(1)} B/event on the wire; concurrency ${concurrency}; best of ${rounds}; recount clean: ${allClean}`);
log(`this process: Node flags ${process.execArgv.join(' ') || '(none)'}; judge ${JUDGE_IMPL === 'wasm' ? 'compiled (oracle/wasm/judge.wasm)' : 'JavaScript alone (CLINK_QUAL_JUDGE=js)'}; peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB (the dataset's writing, every raw GET and recount)`);
log(`controller RSS per million events judged (the recount's process, after GC, with its tally alive; worst round): ${((rssPerEvent * 1e6) / 1048576).toFixed(2)} MiB`);
console.log(`RESULT oracle events_per_s=${Math.round(events / bestOracle)} ratio_vs_raw_get=${(bestRaw / bestOracle).toFixed(3)} raw_get_events_per_s=${Math.round(events / bestRaw)} bytes_per_event=${bytesPerEvent.toFixed(3)} rss_mib_per_million_events=${((rssPerEvent * 1e6) / 1048576).toFixed(2)} cpu_ns_per_event=${Math.round((leastOracleCpu * 1e9) / events)} cpu_user_ns_per_event=${Math.round((leastOracleUser * 1e9) / events)} raw_get_cpu_ns_per_event=${Math.round((leastRawCpu * 1e9) / events)}${storePid === undefined ? '' : ` store_cpu_ns_per_event=${Math.round((leastOracleStoreCpu * 1e9) / events)} raw_get_store_cpu_ns_per_event=${Math.round((leastRawStoreCpu * 1e9) / events)}`}`);
if (!allClean) process.exitCode = 1;
