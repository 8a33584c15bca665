import t from 'tap';
import { SEED, SEED_REHEARSAL, judgementCell, rowMeets, seedComparisonSection, seedRows, seedSummary } from '../../../reports/seed-comparison.ts';
import type { RunEvidence } from '../../../reports/evidence.ts';
import type { FaultOutcome } from '../../../reports/faults.ts';
import type { FaultKind } from '../../../lib/evidence.ts';

const T0 = Date.parse('2026-12-04T09:00:00Z');
const at = (s: number) => new Date(T0 + s * 1000).toISOString();

/** A fault of the soak that landed at `s`, healed `d` seconds later and recovered. */
const fault = (id: string, kind: FaultKind, s: number, d: number, composition?: string): FaultOutcome => ({
  id,
  kind,
  status: 'survived',
  planned: { id, kind, atS: s, ...(composition ? { composition } : {}) },
  landedAt: at(s),
  healedAt: at(s + d),
  ...(composition ? { composition } : {}),
});

/**
 * A run of `campaign` with a soak of `soakS` from T0 (start to verdict `runS`), `objects`
 * objects, `events` events, and samples every 19 s, two of which met errors: `errorsAt` gives
 * the sample times (s) and their error counts.
 */
function run(campaign: string, soakS: number, runS: number, objects: number, errorsAt: [number, number][] = []): RunEvidence {
  const samples = Array.from({ length: Math.floor(soakS / 19) }, (_, i) => ({ t: at((i + 1) * 19), errors: 0 }));
  for (const [s, n] of errorsAt) samples.push({ t: at(s), errors: n });
  samples.sort((a, b) => Date.parse(a.t) - Date.parse(b.t));
  return {
    dirName: 'x',
    campaign: { name: campaign, workload: { checkpointIntervalS: 8, soakS, partitions: 4 } },
    provenance: { campaign, startedAt: at(0), engine: { commitCadence: 'each subtask commits at most one object per completed checkpoint' } },
    verdict: { startedAt: at(0), endedAt: at(runS), pendingUploads: 19 },
    chaos: [{}],
    samples,
    ledger: [],
    checkpoints: Array.from({ length: 965 }, (_, i) => ({ id: i + 1, epoch: 1, at: at(i) })),
    phases: [
      { t: at(0), phase: 'soak', edge: 'start' },
      { t: at(soakS), phase: 'soak', edge: 'end' },
    ],
    resources: [],
    recount: { objects },
    missing: [],
    unreadable: [],
    files: [],
  } as unknown as RunEvidence;
}

/** The qual03 run's battery: every count at least the seed's, the decisive composition 4 times (its outages from 6000 s on). */
const outcomes = [
  ...Array.from({ length: 12 }, (_, i) => fault(`w${i}`, 'worker-kill', 100 + i * 300, 1)),
  ...Array.from({ length: 8 }, (_, i) => fault(`s${i}`, 'store-outage', 200 + i * 600, 30)),
  ...Array.from({ length: 3 }, (_, i) => ({ ...fault(`c${i}`, 'coordinator-kill', 150 + i * 900, 1), landedEvidence: { workerPids: [1, 2, 3] } })),
  ...Array.from({ length: 10 }, (_, i) => fault(`p${i}`, 'protocol-point', 170 + i * 400, 1)),
  ...Array.from({ length: 4 }, (_, i) => fault(`n${i}`, 'partition', 180 + i * 1200, 10)),
  ...Array.from({ length: 2 }, (_, i) => fault(`l${i}`, 'packet-loss', 190 + i * 2000, 10)),
  ...Array.from({ length: 3 }, (_, i) => fault(`b${i}`, 'broker-restart', 195 + i * 1500, 5)),
  ...Array.from({ length: 4 }, (_, i) => [fault(`ds${i}`, 'store-outage', 6000 + i * 300, 30, `down#${i + 1}`), fault(`dk${i}`, 'worker-kill', 6010 + i * 300, 1, `down#${i + 1}`)]).flat(),
];

t.test('QUAL-03 at 2 h 12 min: objects per hour, not in total, and settings are set, not met', async (t) => {
  const ev = run('qual03', 7920, 8165, 3842);
  const rows = seedRows(ev, outcomes, 8_261_128, 8_261_128);
  const basis = { seedS: SEED.durationS, runS: 7920 };
  const objects = rows.find((r) => r.figure === 'Objects committed')!;
  t.ok(objects.perHour, 'the durations differ: objects are compared per hour');
  t.equal(rowMeets(objects), true, 'in total 3,842 would exceed 3,688');
  t.equal(rowMeets(objects, basis), false, 'per hour 1,746 falls short of 1,844');
  t.equal(judgementCell(objects, basis), '**short**');
  for (const f of ['Events produced', 'Checkpoint interval', 'Oracle samples', 'Soak duration']) t.equal(judgementCell(rows.find((r) => r.figure === f)!, basis), 'set', `${f} is a setting`);
  t.equal(judgementCell(rows.find((r) => r.figure === 'Worker SIGKILLs survived')!, basis), 'meets', 'fault counts are counts: 16 against 6');
  const md = seedComparisonSection(ev, outcomes, 8_261_128, 8_261_128).join('\n');
  t.match(md, "This run is compared with QUAL-03's two-hour run (2 h of soak). The durations differ (2 h 12 min here), so the figures that grow with time are compared per hour of soak.");
  t.match(md, '| Objects committed | 3,688 (1,844 per hour) | 3,842 (1,746 per hour) | **short** |');
  t.match(md, '| Soak duration | 2 h | 2 h 12 min | set |');
  t.notMatch(md, '| meets or exceeds |', 'no column that calls a setting met');
  t.match(md, '10 of the 11 outcomes compared meet or exceed QUAL-03; 1 falls short: objects committed (per hour); the transient sample errors fell where QUAL-03\'s did; 4 rows are settings of the campaign and 2 more rows are evidence only.');
  t.notMatch(md, 'Every one of', 'the summary says what the table says');
  t.match(md, 'The engine plug declares that each subtask commits at most one object per completed checkpoint. This run committed 3,842 objects over 965 completed checkpoints');
  t.notMatch(md, 'each of the 4 subtasks commits one object', "no fixed sentence about Clink's commits");
});

t.test('flink-qual03 on SeaweedFS is compared with the two-hour run, and the comparison names the other store', async (t) => {
  const ev = run('flink-qual03-seaweedfs', 7920, 8165, 3842);
  const md = seedComparisonSection(ev, outcomes, 8_261_128, 8_261_128).join('\n');
  t.match(md, "This run is compared with QUAL-03's two-hour run (2 h of soak).");
  t.notMatch(md, "QUAL-03's store was", 'no store in provenance: nothing said of it');
  const onSeaweed = { ...ev, provenance: { ...ev.provenance!, store: { name: 'seaweedfs', version: 'v0.0.0-x' } } } as RunEvidence;
  t.match(seedComparisonSection(onSeaweed, outcomes, 8_261_128, 8_261_128).join('\n'), "QUAL-03's store was MinIO (a pinned release); this run's was seaweedfs v0.0.0-x (provenance.json), so the rows compare the engine under the same battery on another store.");
  const onMinio = { ...ev, provenance: { ...ev.provenance!, store: { name: 'minio', version: 'RELEASE.x' } } } as RunEvidence;
  t.notMatch(seedComparisonSection(onMinio, outcomes, 8_261_128, 8_261_128).join('\n'), "QUAL-03's store was", 'the same store: no sentence');
  t.same(seedComparisonSection(run('flink-quick', 600, 700, 100), outcomes, 1, 1), [], 'a campaign that does not reproduce QUAL-03 has no section');
});

t.test('a run as long as the seed compares counts', async (t) => {
  const ev = run('qual03', 7200, 7400, 3700);
  const rows = seedRows(ev, outcomes, 7_500_000, 7_500_000);
  t.notOk(rows.find((r) => r.figure === 'Objects committed')!.perHour);
  const md = seedComparisonSection(ev, outcomes, 7_500_000, 7_500_000).join('\n');
  t.match(md, '| Objects committed | 3,688 | 3,700 | meets |');
  t.notMatch(md, 'per hour');
});

t.test('transient sample errors: compared by when they happened, against the seed\'s 3 during outages', async (t) => {
  // Store outages land at 200 + i*600 for 30 s: samples at 209 and 228 fall inside the first; one at 1010 is outside every window.
  const inside = run('qual03', 7920, 8165, 3842, [
    [209, 7],
    [228, 7],
  ]);
  const rowOf = (ev: RunEvidence) => seedRows(ev, outcomes, 1, 1).find((r) => r.figure.startsWith('Transient'))!;
  t.equal(judgementCell(rowOf(inside)), "like QUAL-03's (all during injected outages): all inside store-outage windows");
  const mixed = run('qual03', 7920, 8165, 3842, [
    [209, 7],
    [228, 7],
    [1010, 2],
  ]);
  const r = rowOf(mixed);
  t.equal(r.run, 16);
  t.equal(r.runNote, '14 of 16 inside a store-outage window and 2 outside any fault window');
  t.equal(judgementCell(r), "unlike QUAL-03's (all during injected outages): 2 outside any store-outage window");
  t.notMatch(judgementCell(r), 'not compared');
  t.match(seedSummary(seedRows(mixed, outcomes, 1, 1)), 'the transient sample errors fell not only where QUAL-03');
});

t.test("the rehearsal is compared with QUAL-03's 45-minute rehearsal, per hour of the whole run", async (t) => {
  const ev = run('qual03-smoke', 2400, 2493, 1093);
  const md = seedComparisonSection(ev, outcomes, 2_509_176, 2_509_176).join('\n');
  t.match(md, "This run is compared with QUAL-03's 45-minute rehearsal (45 min, start to finish). The durations differ (41 min 33 s here), so the figures that grow with time are compared per hour.");
  t.match(md, `| Events produced | 2,917,500 (3,890,000 per hour) | 2,509,176 (3,623,359 per hour) | set |`);
  t.match(md, '| Distinct events committed (fresh full re-read) | 2,917,500 (3,890,000 per hour) | 2,509,176 (3,623,359 per hour) | **short** |');
  t.match(md, `| Objects committed | not stated for ${SEED_REHEARSAL.name} | 1,093`, 'the rehearsal states no objects: evidence only');
  t.match(md, '| Duration, start to verdict | 45 min | 41 min 33 s | set |');
  t.match(md, "| Worker SIGKILLs survived | 6 (the two-hour run's battery, which the rehearsal repeated) | 16 | meets |");
  t.match(md, `| Multipart uploads left pending | not stated for ${SEED_REHEARSAL.name} | 19 |`);
  t.notMatch(md, '7,477,200', "the two-hour run's events are not the rehearsal's");
});
