import t from 'tap';
import { catchesOf, firstFinding, isCaught, killTableExit, killTableJson, renderKillTable, type KillRow } from '../../../../campaigns/runner/kill-table.ts';
import { raisedCounters, zeroCounters, type Counters, type Sample } from '../../../../lib/evidence.ts';
import type { MutantInfo } from '../../../../engine/engine.ts';

const dupMutant: MutantInfo = { name: 'commit-at-prepare', mechanism: 'completes at | prepare', caughtBy: ['duplicates'] };
const offMutant: MutantInfo = { name: 'offsets-off-by-one', mechanism: 'seeks one off', caughtBy: ['gaps', 'duplicates'] };
const counters = (over: Partial<Counters> = {}): Counters => ({ ...zeroCounters(), ...over });
const sample = (elapsedS: number, over: Partial<Counters> = {}): string =>
  JSON.stringify({ t: 'x', elapsedS, objects: 1, events: 1, produced: 1, lag: 0, counters: counters(over), errors: 0 } satisfies Sample);

t.test('caught only when the run FAILs and the recount raised one of the mutant\'s counters', async (t) => {
  t.equal(isCaught(dupMutant, { verdict: 'FAIL', recount: counters({ duplicates: 3 }) }), true);
  t.equal(isCaught(dupMutant, { verdict: 'FAIL', recount: counters({ gaps: 3 }) }), false, 'a FAIL for another reason is not a catch');
  t.equal(isCaught(dupMutant, { verdict: 'PASS', recount: counters() }), false);
  t.equal(isCaught(dupMutant, { verdict: 'ABORTED', recount: counters({ duplicates: 1 }) }), false, 'an aborted run proves nothing');
  t.equal(isCaught(offMutant, { verdict: 'FAIL', recount: counters({ duplicates: 1 }) }), true, 'either counter of several');
});

t.test('raised counters list only those above zero', async (t) => {
  t.same(raisedCounters(counters({ gaps: 2, mutations: 1 })), ['gaps=2', 'mutations=1']);
  t.same(raisedCounters(counters()), []);
});

t.test('first finding: the first sample with one of the counters, a torn line skipped', async (t) => {
  const text = [sample(10), sample(20, { gaps: 1 }), sample(30, { duplicates: 4 }), '{"torn'].join('\n');
  t.same(firstFinding(text, ['duplicates']), { elapsedS: 30, counter: 'duplicates' });
  t.same(firstFinding(text, ['duplicates', 'gaps']), { elapsedS: 20, counter: 'gaps' });
  t.equal(firstFinding(text, ['corrupted']), null);
  t.equal(firstFinding('', ['gaps']), null);
});

const row = (over: Partial<KillRow>): KillRow => ({ mutant: dupMutant, verdict: 'FAIL', raised: ['duplicates=5'], firstFinding: { elapsedS: 42, counter: 'duplicates' }, ok: true, runId: 'r1', wallS: 370, ...over });

t.test('the table: control row, mutant rows, survivors named, exit status', async (t) => {
  const rows = [
    row({ mutant: null, verdict: 'PASS', raised: [], firstFinding: null, ok: true, runId: 'c' }),
    row({}),
    row({ mutant: offMutant, verdict: 'PASS', raised: [], firstFinding: null, ok: false, runId: 'r2' }),
  ];
  const md = renderKillTable({ campaign: 'campaigns/quick.yaml', engine: 'clink', rows, wallS: 1234 });
  t.match(md, /2 mutant\(s\) and a control run of the correct engine; wall time 20 min 34 s/);
  t.match(md, /\| \(none: the correct engine\) \| control \| PASS \| PASS \| none \| — \| passed \| c \|/);
  t.match(md, /\| commit-at-prepare \| completes at \\\| prepare \| FAIL with duplicates \| FAIL \| recount: duplicates=5 \| 42 s \(duplicates\) \| caught \| r1 \| whole \| 6 min 10 s \|/, 'a pipe in the mechanism cannot break the table');
  t.match(md, /\| offsets-off-by-one \| .* \| PASS \| none \| after the drain \(recount\) \| \*\*SURVIVED\*\* \|/);
  t.match(md, /1 mutant\(s\) survived \(offsets-off-by-one\)/);
  t.equal(killTableExit(rows), 1);
  t.equal(killTableExit(rows.slice(0, 2)), 0);
  t.notMatch(renderKillTable({ campaign: 'q', engine: 'e', rows: rows.slice(0, 2), wallS: 1 }), /survived/);
});

t.test("a mutant's soak that ended once it was caught: the soak column says how long of how long, and the JSON keeps it", async (t) => {
  const early = row({ runId: 'r-early', wallS: 41, soakEndedEarly: { endedAtS: 22.6, plannedS: 70 } });
  const md = renderKillTable({ campaign: 'q', engine: 'e', rows: [row({}), early], wallS: 1 });
  t.match(md, /\| r-early \| 23 s of 1 min 10 s \(ended once caught\) \| 41 s \|/);
  t.match(md, /\| r1 \| whole \| 6 min 10 s \|/, 'a soak that ran its length');
  const json = killTableJson({ campaign: 'q', engine: 'e', rows: [row({}), early], wallS: 1 });
  t.same(json.rows.map((r) => r.soakEndedEarly), [undefined, { endedAtS: 22.6, plannedS: 70 }]);
});

t.test('a control that does not pass fails the command and says so', async (t) => {
  const rows = [row({ mutant: null, verdict: 'FAIL', raised: ['gaps=1'], firstFinding: null, ok: false, runId: 'c' }), row({})];
  const md = renderKillTable({ campaign: 'q', engine: 'e', rows, wallS: 1 });
  t.match(md, /\*\*CONTROL FAILED\*\*/);
  t.match(md, /cannot be told apart from noise/);
  t.equal(killTableExit(rows), 1);
});

t.test('an aborted run stops the table: exit 2, not a survivor, the rest named as not run', async (t) => {
  const rows = [row({ mutant: null, verdict: 'PASS', raised: [], firstFinding: null, ok: true, runId: 'c' }), row({ verdict: 'ABORTED', raised: [], firstFinding: null, ok: false, runId: 'r-abort' })];
  const md = renderKillTable({ campaign: 'q', engine: 'e', rows, wallS: 1 });
  t.match(md, /\*\*ABORTED\*\*/);
  t.match(md, /ABORTED: the command was stopped during r-abort/);
  t.notMatch(md, /survived/);
  t.notMatch(md, /Every mutant run was caught/);
  t.equal(killTableExit(rows), 2);
});

t.test("the JSON kill table: each run by its mutant's name, what it must raise and whether it was caught", async (t) => {
  const rows = [row({ mutant: null, verdict: 'PASS', raised: [], firstFinding: null, ok: true, runId: 'c', wallS: 300 }), row({}), row({ mutant: offMutant, verdict: 'PASS', raised: [], firstFinding: null, ok: false, runId: 'r2' })];
  const j = killTableJson({ campaign: 'campaigns/mutants.yaml', engine: 'clink', rows, wallS: 1000 });
  t.strictSame(j, {
    campaign: 'campaigns/mutants.yaml',
    engine: 'clink',
    wallS: 1000,
    rows: [
      { mutant: null, caughtBy: [], verdict: 'PASS', raised: [], shownBy: [], firstFinding: null, ok: true, runId: 'c', wallS: 300 },
      { mutant: 'commit-at-prepare', caughtBy: ['duplicates'], verdict: 'FAIL', raised: ['duplicates=5'], shownBy: [{ by: 'recount', name: 'duplicates', value: 5 }], firstFinding: { elapsedS: 42, counter: 'duplicates' }, ok: true, runId: 'r1', wallS: 370 },
      { mutant: 'offsets-off-by-one', caughtBy: ['gaps', 'duplicates'], verdict: 'PASS', raised: [], shownBy: [], firstFinding: null, ok: false, runId: 'r2', wallS: 370 },
    ],
  });
  t.strictSame(JSON.parse(JSON.stringify(j)), j, 'plain JSON: it survives a round trip');
});

t.test("what caught a mutant: the recount's counters apart from the store-tamper judgement, which the recount did not raise", async (t) => {
  t.same(catchesOf(['duplicates=3160', 'acceptedForeign=2']), [
    { by: 'recount', name: 'duplicates', value: 3160 },
    { by: 'store-tamper judgement', name: 'acceptedForeign', value: 2 },
  ]);
  const trust: MutantInfo = { name: 'trust-existing-object', mechanism: 'takes any object', caughtBy: ['acceptedForeign'] };
  const rows = [row({}), row({ mutant: trust, raised: ['acceptedForeign=1'], firstFinding: null, runId: 'r3' })];
  const md = renderKillTable({ campaign: 'q', engine: 'e', rows, wallS: 1 });
  t.match(md, /\| what caught it \| first finding \|/);
  t.notMatch(md, /counters raised \(recount\)/, 'no column credits the recount with every catch');
  t.match(md, /\| trust-existing-object \| .* \| FAIL \| store-tamper judgement: accepted a foreign object as its own \| after the verdict \(store-tamper judgement\) \| caught \|/);
  t.match(md, /\| commit-at-prepare \| .* \| recount: duplicates=5 \| 42 s \(duplicates\) \|/);
  const j = killTableJson({ campaign: 'q', engine: 'e', rows, wallS: 1 });
  t.same(j.rows[1]!.raised, ['acceptedForeign=1'], 'raised keeps its name=value form for the readers that split it');
  t.same(j.rows[1]!.shownBy, [{ by: 'store-tamper judgement', name: 'acceptedForeign', value: 1 }]);
});
