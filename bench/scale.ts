/**
 * The scale curve (`npm run bench -- scale`): how Clink's sustained throughput and the
 * oracle's cost per event change with the number of partitions, on the local rig's three
 * workers.
 *
 * For each partition count of --partitions (default 4,16,64), in one run:
 *  - the sustained engine benchmark (bench/engine-sustained.ts) over the same rate ladder,
 *    engine against its raw consume -> put baseline, each on fresh topics of that many
 *    partitions: the engine's max sustained rate, its p99 at that rate, the ratio to the
 *    baseline and the ratio's bound;
 *  - the oracle benchmark (bench/oracle.ts) on a dataset of that many partitions, in the
 *    objects a run at --object-rate events/s with that checkpoint interval would write (one
 *    object per partition per checkpoint: rate × interval / partitions events each), so
 *    more partitions means more, smaller objects, as on the rig: the recount's events/s,
 *    its client CPU per event (this process and its judge workers: on a box whose store
 *    shares the cores, the wall time also carries the store's own per-request work and
 *    swings with the load, the client's CPU far less), its ratio to a raw GET of the same
 *    objects and its bytes per event.
 * With --oracle-only, the engine ladder is skipped (its columns are n/a): the oracle's curve
 * alone, against any store bench/oracle.ts can reach, without the rig.
 * Each benchmark runs as its own process (with --expose-gc), exactly as `npm run bench --
 * <name>` runs it; its output is shown with a `[P=n]` prefix and its RESULT line is read.
 *
 * Growth is stated against the first partition count, measured in the same run: the
 * engine's max and the oracle's cost per event (wall: 1 / events_per_s; CPU: the least
 * client CPU of the rounds) as multiples of the first's. A sub-benchmark that prints no
 * RESULT (refused or failed) makes its row n/a and the exit code 1.
 *
 * The raw GET of the same objects is shown beside the oracle (its wall time and client CPU
 * per event, and their growth; and the recount's client CPU beyond the raw GET's, what the
 * judging adds to the GETs), with a line saying what its growth implies for the oracle's:
 * a recount makes the same GETs, so it cannot grow less than the raw GET does times its
 * ratio to it at the first count.
 *
 * Last line: `RESULT scale partitions=4,16,64 engine_max_events_per_s=a,b,c
 * engine_ratio_vs_baseline=a,b,c oracle_ns_per_event=a,b,c oracle_ratio_vs_raw_get=a,b,c
 * raw_get_ns_per_event=a,b,c raw_get_growth=a,b,c oracle_cpu_ns_per_event=a,b,c
 * oracle_cpu_growth=a,b,c oracle_user_cpu_growth=a,b,c oracle_cpu_beyond_raw_get_ns_per_event=a,b,c`
 * (then store_cpu_ns_per_event=a,b,c when the store's CPU was measured).
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { optionsOrUsage, takeRigLock } from './cli.ts';
import { parseDurationOption } from '../lib/cli.ts';
import { RECOUNT_NODE_FLAGS } from '../oracle/recount-flags.ts';

const here = path.dirname(fileURLToPath(import.meta.url));

export interface ScaleOptions {
  partitions: number[];
  rates: string;
  checkpointMs: number;
  durationS?: number;
  oracleEvents: number;
  objectRate: number;
  /** Rounds of each oracle benchmark (raw GET, recount; the best of each). */
  oracleRounds: number;
  /** Only the oracle benchmark: no engine ladder, so no rig (the store is the bench's own). */
  oracleOnly: boolean;
}

export const USAGE = `Usage: npm run bench -- scale [options]

For each partition count: the sustained engine benchmark (engine vs raw consume -> put) and
the oracle benchmark (recount vs raw GET), each measured against its own baseline in the
same run; then a table of how both grow with the partitions. Takes the rig lock (exit 2
naming the holder while another command uses the rig); its benchmarks run under it. With
--oracle-only and CLINK_QUAL_S3_ENDPOINT (a store of your own) it touches no rig and takes
none.

Options:
  --partitions A,B,C    partition counts, ascending (default 4,16,64)
  --rates A,B,C         engine-sustained's ladder (default 10400,20000,30000)
  --checkpoint-ms MS    checkpoint interval of the engine and of the oracle's objects (default 8000)
  --duration-s DURATION how long each rate is offered: seconds, or with units: 300, 90s, 5m, 2h,
                        1h30m (default: engine-sustained's, 11 checkpoints)
  --oracle-events N     events in each oracle dataset (default 2000000)
  --object-rate R       the rate whose objects the oracle dataset imitates (default 10400)
  --oracle-rounds N     rounds of each oracle benchmark, the best of each kept (default 3)
  --oracle-only         only the oracle benchmark, no engine ladder (no rig needed: the store
                        is CLINK_QUAL_S3_ENDPOINT's, as bench/oracle.ts says); engine columns n/a
  -h, --help            this text`;

export function parseScaleOptions(args: string[]): ScaleOptions | 'help' {
  const { values } = parseArgs({
    args,
    strict: true,
    allowPositionals: false,
    options: {
      partitions: { type: 'string', default: '4,16,64' },
      rates: { type: 'string', default: '10400,20000,30000' },
      'checkpoint-ms': { type: 'string', default: '8000' },
      'duration-s': { type: 'string' },
      'oracle-events': { type: 'string', default: '2000000' },
      'object-rate': { type: 'string', default: '10400' },
      'oracle-rounds': { type: 'string', default: '3' },
      'oracle-only': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) return 'help';
  const int = (name: string, v: string, min: number): number => {
    const n = Number(v);
    if (!v.trim() || !Number.isInteger(n) || n < min) throw new Error(`--${name}: ${JSON.stringify(v)} is not an integer ≥ ${min}`);
    return n;
  };
  const partitions = values.partitions!.split(',').map((p) => int('partitions', p, 1));
  for (let i = 1; i < partitions.length; i++) if (!(partitions[i]! > partitions[i - 1]!)) throw new Error(`--partitions: not ascending (${partitions[i - 1]} then ${partitions[i]})`);
  for (const r of values.rates!.split(',')) if (!(Number(r) > 0)) throw new Error(`--rates: ${JSON.stringify(r)} is not a rate`);
  return {
    partitions,
    rates: values.rates!,
    checkpointMs: int('checkpoint-ms', values['checkpoint-ms']!, 1000),
    ...(values['duration-s'] !== undefined ? { durationS: parseDurationOption(values['duration-s'], 'duration-s') } : {}),
    oracleEvents: int('oracle-events', values['oracle-events']!, 1),
    objectRate: int('object-rate', values['object-rate']!, 1),
    oracleRounds: int('oracle-rounds', values['oracle-rounds']!, 1),
    oracleOnly: values['oracle-only']!,
  };
}

/**
 * Whether the run needs the rig lock: always, except the oracle alone against a store of
 * one's own (CLINK_QUAL_S3_ENDPOINT), which touches no rig (bench/oracle.ts takes none then).
 */
export function needsRigLock(o: Pick<ScaleOptions, 'oracleOnly'>, env: NodeJS.ProcessEnv): boolean {
  return !(o.oracleOnly && env.CLINK_QUAL_S3_ENDPOINT);
}

/** Events per oracle object: what one partition's subtask commits per checkpoint at the rate. */
export function eventsPerObject(rate: number, checkpointMs: number, partitions: number): number {
  return Math.max(1, Math.round((rate * checkpointMs) / 1000 / partitions));
}

/** The key=value pairs of a `RESULT <name> …` line among the output's lines, or null. */
export function parseResult(lines: readonly string[], name: string): Record<string, string> | null {
  const line = [...lines].reverse().find((l) => l.startsWith(`RESULT ${name} `));
  if (!line) return null;
  const out: Record<string, string> = {};
  for (const kv of line.slice(`RESULT ${name} `.length).trim().split(/\s+/)) {
    const i = kv.indexOf('=');
    if (i > 0) out[kv.slice(0, i)] = kv.slice(i + 1);
  }
  return out;
}

export interface ScaleRow {
  partitions: number;
  engineMax: number | null;
  engineP99Ms: number | null;
  engineRatio: number | null;
  engineBound: string | null;
  oracleEventsPerS: number | null;
  /** The recount's least client CPU per event over the rounds (ns). */
  oracleCpuNsPerEvent: number | null;
  /** Its user part (ns per event): the rest is the kernel's, on loopback the store's side of each send too. */
  oracleUserCpuNsPerEvent: number | null;
  oracleRatio: number | null;
  /** The raw GET of the same objects, ns per event by wall time (its best round). */
  rawGetNsPerEvent: number | null;
  /** The raw GET's least client CPU per event over the rounds (ns). */
  rawGetCpuNsPerEvent: number | null;
  oracleBytesPerEvent: number | null;
  oracleRssMiBPerMillion: number | null;
  /** The store's CPU per event during the recount (least of the rounds), when bench/oracle.ts was given its PID (CLINK_QUAL_STORE_PID). */
  storeCpuNsPerEvent: number | null;
}

const num = (v: string | undefined): number | null => (v === undefined || v === 'n/a' || !Number.isFinite(Number(v)) ? null : Number(v));

const nsPerEvent = (eventsPerS: number | null): number | null => (eventsPerS ? 1e9 / eventsPerS : null);

/** A row from the two benchmarks' outputs. */
export function rowOf(partitions: number, engineOut: readonly string[], oracleOut: readonly string[]): ScaleRow {
  const e = parseResult(engineOut, 'engine_sustained');
  const o = parseResult(oracleOut, 'oracle');
  const boundLine = engineOut.find((l) => l.startsWith('ratio_vs_baseline = '));
  return {
    partitions,
    engineMax: num(e?.max_events_per_s),
    engineP99Ms: num(e?.p99_ms_at_max),
    engineRatio: num(e?.ratio_vs_baseline),
    engineBound: boundLine ? boundLine.slice(boundLine.lastIndexOf(': ') + 2) : null,
    oracleEventsPerS: num(o?.events_per_s),
    oracleCpuNsPerEvent: num(o?.cpu_ns_per_event),
    oracleUserCpuNsPerEvent: num(o?.cpu_user_ns_per_event),
    oracleRatio: num(o?.ratio_vs_raw_get),
    rawGetNsPerEvent: nsPerEvent(num(o?.raw_get_events_per_s)),
    rawGetCpuNsPerEvent: num(o?.raw_get_cpu_ns_per_event),
    oracleBytesPerEvent: num(o?.bytes_per_event),
    oracleRssMiBPerMillion: num(o?.rss_mib_per_million_events),
    storeCpuNsPerEvent: num(o?.store_cpu_ns_per_event),
  };
}

/** "×1.00" of a value against the first row's, or n/a. */
function growth(v: number | null, first: number | null): string {
  return v === null || first === null || first === 0 ? 'n/a' : `×${(v / first).toFixed(2)}`;
}

/** The recount's client CPU per event beyond the raw GET's of the same objects: what judging adds to the GETs. */
export function beyondRawGet(r: ScaleRow): number | null {
  return r.oracleCpuNsPerEvent !== null && r.rawGetCpuNsPerEvent !== null ? r.oracleCpuNsPerEvent - r.rawGetCpuNsPerEvent : null;
}

/** The summary table, growth against the first row. */
export function scaleTable(rows: readonly ScaleRow[]): string {
  const first = rows[0];
  // The store's CPU only when measured (a store process on this machine: CLINK_QUAL_STORE_PID).
  const store = rows.some((r) => r.storeCpuNsPerEvent !== null);
  const head = ['partitions', 'engine max ev/s', 'vs first', 'p99 ms', 'vs baseline', 'oracle ns/event', 'vs first', 'oracle CPU ns/event', 'vs first', 'of it user', 'vs first', 'oracle vs raw GET', 'raw GET ns/event', 'vs first', 'raw GET CPU ns/event', 'vs first', 'oracle CPU beyond raw GET', 'vs first', 'oracle B/event', 'oracle RSS MiB/M events', ...(store ? ['store CPU ns/event', 'vs first'] : [])];
  const f = (v: number | null, digits = 0) => (v === null ? 'n/a' : v.toFixed(digits));
  const body = rows.map((r) => [
    String(r.partitions),
    f(r.engineMax),
    growth(r.engineMax, first?.engineMax ?? null),
    f(r.engineP99Ms),
    r.engineRatio === null ? 'n/a' : `${r.engineRatio.toFixed(3)}${r.engineBound && r.engineBound !== 'at ladder resolution' ? ` (${r.engineBound})` : ''}`,
    f(nsPerEvent(r.oracleEventsPerS)),
    growth(nsPerEvent(r.oracleEventsPerS), nsPerEvent(first?.oracleEventsPerS ?? null)),
    f(r.oracleCpuNsPerEvent),
    growth(r.oracleCpuNsPerEvent, first?.oracleCpuNsPerEvent ?? null),
    f(r.oracleUserCpuNsPerEvent),
    growth(r.oracleUserCpuNsPerEvent, first?.oracleUserCpuNsPerEvent ?? null),
    f(r.oracleRatio, 3),
    f(r.rawGetNsPerEvent),
    growth(r.rawGetNsPerEvent, first?.rawGetNsPerEvent ?? null),
    f(r.rawGetCpuNsPerEvent),
    growth(r.rawGetCpuNsPerEvent, first?.rawGetCpuNsPerEvent ?? null),
    f(beyondRawGet(r)),
    growth(beyondRawGet(r), first ? beyondRawGet(first) : null),
    f(r.oracleBytesPerEvent, 3),
    f(r.oracleRssMiBPerMillion, 2),
    ...(store ? [f(r.storeCpuNsPerEvent), growth(r.storeCpuNsPerEvent, first?.storeCpuNsPerEvent ?? null)] : []),
  ]);
  const w = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  return [head, ...body].map((row) => '  ' + row.map((c, i) => c.padStart(w[i]!)).join('  ')).join('\n');
}

/**
 * What the raw GET's own growth says of the oracle's, first row to last, by wall time: the
 * oracle's growth is the raw GET's × (its ratio at the first count ÷ at the last). A
 * recount makes the same GETs, so while its ratio stays at most 1 its growth is at least the
 * raw GET's × its ratio at the first count. Null without both rows' figures.
 */
export function rawGetFloorLine(rows: readonly ScaleRow[]): string | null {
  const a = rows[0];
  const b = rows[rows.length - 1];
  if (!a || !b || a === b || !a.rawGetNsPerEvent || !b.rawGetNsPerEvent || !a.oracleRatio || !b.oracleRatio || !a.oracleEventsPerS || !b.oracleEventsPerS) return null;
  const raw = b.rawGetNsPerEvent / a.rawGetNsPerEvent;
  const oracle = a.oracleEventsPerS / b.oracleEventsPerS;
  const x = (v: number) => `×${v.toFixed(2)}`;
  return (
    `the raw GET of the same objects grows ${x(raw)} by wall time from ${a.partitions} to ${b.partitions} partitions; the oracle's ${x(oracle)} is that × its ratio at ${a.partitions} ÷ at ${b.partitions} (${a.oracleRatio.toFixed(3)} ÷ ${b.oracleRatio.toFixed(3)})` +
    (b.oracleRatio <= 1 ? `. Making the same GETs, a recount at ratio r at ${a.partitions} partitions grows at least ${x(raw)} × r here: ${x(raw * 0.9)} at r = 0.9` : '')
  );
}

export function scaleResultLine(rows: readonly ScaleRow[]): string {
  const list = (f: (r: ScaleRow) => number | null, digits = 0) => rows.map((r) => (f(r) === null ? 'n/a' : f(r)!.toFixed(digits))).join(',');
  // A figure against the first row's (null when either is missing or the first is 0).
  const vsFirst = (f: (r: ScaleRow) => number | null) => (r: ScaleRow) => {
    const v = f(r);
    const first = rows[0] ? f(rows[0]) : null;
    return v !== null && first ? v / first : null;
  };
  return `RESULT scale partitions=${rows.map((r) => r.partitions).join(',')} engine_max_events_per_s=${list((r) => r.engineMax)} engine_ratio_vs_baseline=${list((r) => r.engineRatio, 3)} oracle_ns_per_event=${list((r) => nsPerEvent(r.oracleEventsPerS))} oracle_ratio_vs_raw_get=${list((r) => r.oracleRatio, 3)} raw_get_ns_per_event=${list((r) => r.rawGetNsPerEvent)} raw_get_growth=${list(vsFirst((r) => r.rawGetNsPerEvent), 2)} oracle_cpu_ns_per_event=${list((r) => r.oracleCpuNsPerEvent)} oracle_cpu_growth=${list(vsFirst((r) => r.oracleCpuNsPerEvent), 2)} oracle_user_cpu_growth=${list(vsFirst((r) => r.oracleUserCpuNsPerEvent), 2)} oracle_cpu_beyond_raw_get_ns_per_event=${list(beyondRawGet)}${rows.some((r) => r.storeCpuNsPerEvent !== null) ? ` store_cpu_ns_per_event=${list((r) => r.storeCpuNsPerEvent)}` : ''}`;
}

/** Runs bench/<file> in its own process (oracle.ts with the recount's Node flags), its lines shown with a prefix and kept. */
export function runBench(file: string, args: string[], prefix: string): Promise<{ lines: string[]; code: number }> {
  return new Promise((resolve) => {
    const flags = file === 'oracle.ts' ? RECOUNT_NODE_FLAGS : [];
    const child = spawn(process.execPath, ['--expose-gc', ...flags, path.join(here, file), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const lines: string[] = [];
    const take = (stream: NodeJS.ReadableStream, out: NodeJS.WriteStream) =>
      createInterface({ input: stream, crlfDelay: Infinity }).on('line', (l) => {
        lines.push(l);
        out.write(`${prefix} ${l}\n`);
      });
    take(child.stdout!, process.stdout);
    take(child.stderr!, process.stderr);
    child.on('close', (code, signal) => resolve({ lines, code: code ?? (signal ? 2 : 0) }));
  });
}

export async function main(args: string[]): Promise<void> {
  const o = optionsOrUsage(parseScaleOptions, args, USAGE);
  // Its engine-sustained and oracle children run under this lock (none for the oracle alone on a store of one's own).
  if (!o || (needsRigLock(o, process.env) && !takeRigLock('scale'))) return;
  const rows: ScaleRow[] = [];
  for (const p of o.partitions) {
    const prefix = `[P=${p}]`;
    console.log(`\n=== ${p} partitions: ${o.oracleOnly ? 'oracle only' : 'engine-sustained, then oracle'}`);
    const eng = o.oracleOnly ? { lines: [] as string[], code: 0 } : await runBench('engine-sustained.ts', ['--partitions', String(p), '--rates', o.rates, '--checkpoint-ms', String(o.checkpointMs), ...(o.durationS !== undefined ? ['--duration-s', String(o.durationS)] : [])], prefix);
    const perObject = eventsPerObject(o.objectRate, o.checkpointMs, p);
    const ora = await runBench('oracle.ts', ['--partitions', String(p), '--events', String(o.oracleEvents), '--per-object', String(perObject), '--rounds', String(o.oracleRounds)], prefix);
    const row = rowOf(p, eng.lines, ora.lines);
    if ((!o.oracleOnly && row.engineMax === null) || row.oracleEventsPerS === null) process.exitCode = 1;
    rows.push(row);
    console.log(`\n${scaleTable(rows)}`);
  }
  const engineSide = o.oracleOnly ? `oracle only, no engine ladder; ${o.checkpointMs} ms checkpoints` : `local rig, 3 workers; ladder ${o.rates} events/s at ${o.checkpointMs} ms checkpoints`;
  console.log(`\nScale curve (${engineSide}; oracle datasets of ${o.oracleEvents} events in the objects a ${o.objectRate} events/s run writes):`);
  console.log(scaleTable(rows));
  const floor = rawGetFloorLine(rows);
  if (floor) console.log(floor);
  console.log(`growth is against ${o.partitions[0]} partitions, in this run; an engine max at the ladder's top rung is capped (its true max may be higher); the oracle's wall time (best of ${o.oracleRounds} rounds) carries the store's own work where it shares the cores, its CPU (least of the rounds) is the client's alone`);
  console.log(scaleResultLine(rows));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv.slice(2)).catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
