/**
 * The scale benchmark's pure parts: options, the oracle's object size per partition count,
 * reading the sub-benchmarks' RESULT lines, the table's growth and the RESULT line; and,
 * through the CLI, --help and a refused option (neither touches the rig); when it needs the rig lock.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import t from 'tap';
import { beyondRawGet, eventsPerObject, needsRigLock, parseResult, parseScaleOptions, rawGetFloorLine, rowOf, runBench, scaleResultLine, scaleTable } from '../../../bench/scale.ts';

t.test('options: defaults, ascending partitions, bad values refused', async (t) => {
  t.strictSame(parseScaleOptions([]), { partitions: [4, 16, 64], rates: '10400,20000,30000', checkpointMs: 8000, oracleEvents: 2_000_000, objectRate: 10400, oracleRounds: 3, oracleOnly: false });
  t.equal((parseScaleOptions(['--oracle-only']) as { oracleOnly: boolean }).oracleOnly, true, '--oracle-only: no engine ladder');
  t.equal(parseScaleOptions(['--help']), 'help');
  t.strictSame((parseScaleOptions(['--partitions', '2,8', '--duration-s', '44']) as { partitions: number[]; durationS: number }).partitions, [2, 8]);
  t.equal((parseScaleOptions(['--duration-s', '44']) as { durationS: number }).durationS, 44);
  t.throws(() => parseScaleOptions(['--partitions', '16,4']), /not ascending/);
  t.throws(() => parseScaleOptions(['--partitions', '4,x']), /--partitions: "x" is not an integer/);
  t.throws(() => parseScaleOptions(['--rates', '100,abc']), /--rates: "abc" is not a rate/);
  t.throws(() => parseScaleOptions(['--checkpoint-ms', '10']), /--checkpoint-ms/);
  t.throws(() => parseScaleOptions(['--nope']), /Unknown option/);
});

t.test('the rig lock: needed unless the oracle alone runs against a store of its own', async (t) => {
  t.equal(needsRigLock({ oracleOnly: true }, { CLINK_QUAL_S3_ENDPOINT: 'http://127.0.0.1:19400' }), false, '--oracle-only on CLINK_QUAL_S3_ENDPOINT: no rig touched');
  t.equal(needsRigLock({ oracleOnly: true }, {}), true, "--oracle-only on the rig's store");
  t.equal(needsRigLock({ oracleOnly: false }, { CLINK_QUAL_S3_ENDPOINT: 'http://127.0.0.1:19400' }), true, 'the engine ladder uses the rig whatever the store');
  t.equal(needsRigLock({ oracleOnly: true }, { CLINK_QUAL_S3_ENDPOINT: '' }), true, 'an empty endpoint is none');
});

t.test("the oracle's objects: one per partition per checkpoint at the rate", async (t) => {
  t.equal(eventsPerObject(10400, 8000, 4), 20800);
  t.equal(eventsPerObject(10400, 8000, 16), 5200);
  t.equal(eventsPerObject(10400, 8000, 64), 1300);
  t.equal(eventsPerObject(1, 1000, 64), 1, 'never an empty object');
});

const engOut = (max: string, p99: string, ratio: string, bound: string) => [
  'engine: max sustained 20000 events/s',
  `ratio_vs_baseline = engine max / baseline max = ${ratio}: ${bound}`,
  `RESULT engine_sustained max_events_per_s=${max} p99_ms_at_max=${p99} ratio_vs_baseline=${ratio}`,
];
const oraOut = (eps: string, ratio: string, bpe: string, cpu = '1000', user = '700', rawEps = '500000', rawCpu = '400') => ['bench oracle: round 1', `RESULT oracle events_per_s=${eps} ratio_vs_raw_get=${ratio} raw_get_events_per_s=${rawEps} bytes_per_event=${bpe} rss_mib_per_million_events=1.25 cpu_ns_per_event=${cpu} cpu_user_ns_per_event=${user} raw_get_cpu_ns_per_event=${rawCpu}`];

t.test('RESULT lines read; a missing one gives n/a', async (t) => {
  t.strictSame(parseResult(['x', 'RESULT oracle a=1 b=2.5', 'y'], 'oracle'), { a: '1', b: '2.5' });
  t.equal(parseResult(['RESULT engine_sustained a=1'], 'oracle'), null);
  t.strictSame(parseResult(['RESULT oracle a=1', 'RESULT oracle a=2'], 'oracle'), { a: '2' }, 'the last one counts');
  const r = rowOf(16, engOut('20000', '9100', '0.667', 'upper bound'), oraOut('250000', '0.850', '0.190'));
  t.strictSame(r, { partitions: 16, engineMax: 20000, engineP99Ms: 9100, engineRatio: 0.667, engineBound: 'upper bound', oracleEventsPerS: 250000, oracleCpuNsPerEvent: 1000, oracleUserCpuNsPerEvent: 700, oracleRatio: 0.85, rawGetNsPerEvent: 2000, rawGetCpuNsPerEvent: 400, oracleBytesPerEvent: 0.19, oracleRssMiBPerMillion: 1.25, storeCpuNsPerEvent: null });
  const none = rowOf(64, ['no RESULT: a step was refused'], oraOut('1', '1', '1'));
  t.equal(none.engineMax, null);
  t.equal(rowOf(4, engOut('0', 'n/a', 'n/a', 'undetermined'), []).engineP99Ms, null, 'n/a is null');
});

t.test("engine-sustained's climb RESULT line (the ladder's fields first, more after) reads as the ladder's", async (t) => {
  const climbLine = 'RESULT engine_sustained max_events_per_s=180000 p99_ms_at_max=9321 ratio_vs_baseline=0.900 clink_max_events_per_s=180000 baseline_max_events_per_s=200000 producer_max_events_per_s=250000 ratio_at_baseline_max=0.900 determined=yes clink_determined=yes baseline_determined=yes producer_determined=no resolution=0.05 rungs=27';
  const row = rowOf(4, ['ratio_vs_baseline = engine max / baseline max = 0.900: at 5 % resolution', climbLine], oraOut('1000', '0.9', '1'));
  t.same([row.engineMax, row.engineP99Ms, row.engineRatio, row.engineBound], [180_000, 9321, 0.9, 'at 5 % resolution']);
});

t.test('growth against the first row, and the RESULT line', async (t) => {
  const rows = [
    rowOf(4, engOut('30000', '9000', '1.000', 'undetermined'), oraOut('400000', '0.900', '0.190', '1000', '700', '444444', '300')),
    rowOf(16, engOut('20000', '9500', '0.667', 'at ladder resolution'), oraOut('200000', '0.800', '0.200', '1100', '700', '250000', '330')),
    rowOf(64, [], oraOut('100000', '0.700', '0.250', '1290', '840', '142857', '510')),
  ];
  const table = scaleTable(rows);
  const lines = table.split('\n');
  t.equal(lines.length, 4, 'a header and one line per partition count');
  t.match(lines[1]!, /\s4\s+30000\s+×1\.00\s+9000\s+1\.000 \(undetermined\)\s+2500\s+×1\.00\s+1000\s+×1\.00/);
  t.match(lines[2]!, /\s16\s+20000\s+×0\.67\s+9500\s+0\.667\s+5000\s+×2\.00\s+1100\s+×1\.10/, 'half the oracle rate is twice the cost per event; the CPU column its own');
  t.match(lines[3]!, /\s64\s+n\/a\s+n\/a\s+n\/a\s+n\/a\s+10000\s+×4\.00\s+1290\s+×1\.29\s+840\s+×1\.20/, 'the user part and its growth beside the CPU');
  t.match(lines[0]!, /oracle vs raw GET\s+raw GET ns\/event\s+vs first\s+raw GET CPU ns\/event\s+vs first\s+oracle CPU beyond raw GET\s+vs first\s+oracle B\/event/);
  t.match(lines[3]!, /\s0\.700\s+7000\s+×3\.11\s+510\s+×1\.70\s+780\s+×1\.11\s+0\.250/, "the raw GET's wall time and client CPU per event, and their growth, beside the oracle's ratio; the recount's CPU beyond the raw GET's (1290 − 510) against the first row's (1000 − 300)");
  t.equal(
    rawGetFloorLine(rows),
    "the raw GET of the same objects grows ×3.11 by wall time from 4 to 64 partitions; the oracle's ×4.00 is that × its ratio at 4 ÷ at 64 (0.900 ÷ 0.700). Making the same GETs, a recount at ratio r at 4 partitions grows at least ×3.11 × r here: ×2.80 at r = 0.9",
  );
  t.equal(
    scaleResultLine(rows),
    'RESULT scale partitions=4,16,64 engine_max_events_per_s=30000,20000,n/a engine_ratio_vs_baseline=1.000,0.667,n/a oracle_ns_per_event=2500,5000,10000 oracle_ratio_vs_raw_get=0.900,0.800,0.700 raw_get_ns_per_event=2250,4000,7000 raw_get_growth=1.00,1.78,3.11 oracle_cpu_ns_per_event=1000,1100,1290 oracle_cpu_growth=1.00,1.10,1.29 oracle_user_cpu_growth=1.00,1.00,1.20 oracle_cpu_beyond_raw_get_ns_per_event=700,770,780',
  );
});

t.test("the raw GET's floor: said only with both ends' figures, the bound only while the recount is the slower", async (t) => {
  t.equal(rawGetFloorLine([rowOf(4, [], oraOut('400000', '0.9', '1'))]), null, 'one row: no growth');
  const noRaw = ['RESULT oracle events_per_s=100000 ratio_vs_raw_get=0.7 bytes_per_event=1'];
  t.equal(rawGetFloorLine([rowOf(4, [], oraOut('400000', '0.9', '1')), rowOf(64, [], noRaw)]), null, 'an older oracle RESULT without the raw GET rate: nothing said');
  t.equal(rowOf(64, [], noRaw).rawGetNsPerEvent, null);
  t.equal(beyondRawGet(rowOf(64, [], noRaw)), null, "no raw GET CPU: nothing beyond it");
  const faster = rawGetFloorLine([rowOf(4, [], oraOut('400000', '0.9', '1', '1', '1', '444444')), rowOf(64, [], oraOut('100000', '1.100', '1', '1', '1', '90909'))]);
  t.match(faster, /^the raw GET of the same objects grows ×4\.89 by wall time from 4 to 64 partitions; the oracle's ×4\.00 is that × its ratio at 4 ÷ at 64 \(0\.900 ÷ 1\.100\)$/, 'a recount faster than the raw GET at the last count: no bound claimed');
});

t.test("the store's CPU: a column and a RESULT field only when bench/oracle.ts measured it", async (t) => {
  const withStore = (eps: string, cpu: string, store: string) => [`RESULT oracle events_per_s=${eps} ratio_vs_raw_get=0.5 bytes_per_event=0.3 rss_mib_per_million_events=1 cpu_ns_per_event=${cpu} cpu_user_ns_per_event=${cpu} raw_get_cpu_ns_per_event=200 store_cpu_ns_per_event=${store} raw_get_store_cpu_ns_per_event=80`];
  const rows = [rowOf(4, [], withStore('2000000', '500', '80')), rowOf(64, [], withStore('1000000', '640', '320'))];
  t.equal(rows[1]!.storeCpuNsPerEvent, 320);
  const lines = scaleTable(rows).split('\n');
  t.match(lines[0]!, /oracle RSS MiB\/M events\s+store CPU ns\/event\s+vs first$/);
  t.match(lines[2]!, /\s320\s+×4\.00$/, "the store's growth against the first row");
  t.match(scaleResultLine(rows), / store_cpu_ns_per_event=80,320$/);
  const without = [rowOf(4, [], oraOut('1', '1', '1'))];
  t.notMatch(scaleTable(without), /store CPU/, 'not measured: no column');
  t.notMatch(scaleResultLine(without), /store_cpu/);
});

t.test('the CLI: --help and a refused option, without the rig', async (t) => {
  const root = path.resolve(import.meta.dirname, '..', '..', '..');
  const help = spawnSync(process.execPath, [path.join(root, 'bench', 'index.ts'), 'scale', '--help'], { encoding: 'utf8' });
  t.equal(help.status, 0);
  t.match(help.stdout, /Usage: npm run bench -- scale/);
  const bad = spawnSync(process.execPath, [path.join(root, 'bench', 'index.ts'), 'scale', '--partitions', '8,4'], { encoding: 'utf8' });
  t.equal(bad.status, 254);
  t.match(bad.stderr, /not ascending/);
  const list = spawnSync(process.execPath, [path.join(root, 'bench', 'index.ts'), '--help'], { encoding: 'utf8' });
  t.match(list.stdout, /scale\s+The scale curve/);
});

t.test("a sub-benchmark's lines (stdout and stderr) are kept whole, with its exit code", async (t) => {
  const r = await runBench('scale.ts', ['--partitions', '8,4'], '[sub]');
  t.equal(r.code, 254);
  t.ok(r.lines.some((l) => l === '--partitions: not ascending (8 then 4)'), 'the error line, whole');
  t.ok(r.lines.some((l) => l.startsWith('Usage: npm run bench -- scale')), 'the usage after it');
});
