import t from 'tap';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readRunEvidence } from '../../../reports/evidence.ts';
import { renderJunit } from '../../../reports/junit.ts';
import { renderReport, verdictHeadline, writeReports } from '../../../reports/report.ts';
import { renderTimelineSvg } from '../../../reports/timeline-svg.ts';
import { fmtDuration } from '../../../reports/format.ts';
import type { ChaosRecord, PlannedFault, Sample, Verdict } from '../../../lib/evidence.ts';
import { copyFixtureRun } from '../../helpers/fixture-run.ts';

const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures');
const fx = (name: string) => path.join(fixtures, name);
const read = (...p: string[]) => readFileSync(path.join(...p), 'utf8');
const jsonl = <T>(file: string): T[] =>
  read(file)
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as T);

/** The fixture's plan, and the first lone fault of a kind (the fixtures follow campaigns/quick.yaml, whose plan may change). */
const planOf = (name: string) => JSON.parse(read(fx(name), 'plan.json')) as PlannedFault[];
const firstOf = (name: string, kind: string) => planOf(name).find((f) => f.kind === kind && !f.composition)!;
const n = (x: number) => String(x).replace(/\B(?=(\d{3})+(?!\d))/g, ',');


/** Crude well-formedness: every opened tag is closed, in order. */
function balanced(xml: string): boolean {
  const stack: string[] = [];
  for (const m of xml.replace(/<\?xml[^>]*\?>/, '').matchAll(/<(\/?)([A-Za-z][\w:-]*)[^>]*?(\/?)>/g)) {
    const [, close, name, self] = m;
    if (self) continue;
    if (close) {
      if (stack.pop() !== name) return false;
    } else stack.push(name!);
  }
  return stack.length === 0;
}

const SECTIONS = [
  '## Provenance',
  '## How the claim was measured',
  '### The functional gate',
  '## Workload',
  '## What the engine survived',
  '### Protocol points',
  '### Compositions',
  '## Measured outcome',
  '## Claim boundaries',
  '## Caveats',
  '## Fault log',
  '## Raw evidence',
];

t.test('a PASS run: every section, verdict up front, figures from the evidence', async (t) => {
  const md = renderReport(fx('run-pass'));
  const v = JSON.parse(read(fx('run-pass'), 'verdict.json')) as Verdict;
  t.match(md, /^# quick: exactly-once from Kafka into S3-compatible storage — PASS\n/);
  t.match(md, /\*\*Verdict: PASS\*\* \(exit code 0\)/);
  let at = -1;
  for (const s of SECTIONS) {
    const i = md.indexOf(`\n${s}\n`);
    t.ok(i > at, `${s} present, in order`);
    at = i;
  }
  t.match(md, '![Committed and produced events over time, fault windows by kind, and completed checkpoints](timeline.svg)');
  t.match(md, `- ${n(v.produced)} input events produced`);
  t.match(md, `| Distinct events committed | ${n(v.committedDistinct)} |`);
  t.match(md, `${v.pendingUploads} multipart uploads were left pending`);
  t.match(md, 'MINIO_API_STALE_UPLOADS_EXPIRY`, set to 72h for this rig');
  t.match(md, 'AbortIncompleteMultipartUpload');
  t.match(md, /\| Worker SIGKILL, then restarted \| 4 \| 4 \| 4 \|/);
  t.match(md, /\| `sink\.after-commit` \| yes \| 1 of 1 \| yes \|/);
  t.match(md, /Every mandatory point was covered/);
  t.match(md, /\*\*store-down-during-worker-recovery\*\* is the decisive one: .* Scheduled 1 time; every step landed and recovered in 1; the worker kill landed while the store was still down in 1\./);
  t.match(md, /- \*\*Demonstrated:\*\* exactly-once .* at revision `625cc82d69af`, against minio RELEASE\.2025-09-07T16-13-09Z, on a local rig: 8 network namespaces on one kernel, with the operations host in the root namespace, all sharing 2 cores, 7\.8 GiB of memory and one disk\./);
  const samples = jsonl<Sample>(path.join(fx('run-pass'), 'samples.jsonl'));
  const errs = samples.reduce((k, s) => k + s.errors, 0);
  t.ok(errs > 1, 'the fixture has transient errors');
  t.match(md, `The oracle met ${errs} transient store errors in ${samples.filter((s) => s.errors > 0).length} samples (of ${samples.length})`);
  t.match(md, `| \`samples.jsonl\` | ${n(statSync(path.join(fx('run-pass'), 'samples.jsonl')).size)} |`);
  t.notMatch(md, fixtures, 'no absolute path in the report');
});

t.test('a drain that ended early says so in the measured outcome; one that waited its deadline says that', async (t) => {
  const dir = copyFixtureRun(t, 'run-fail');
  const vf = path.join(dir, 'verdict.json');
  const v = JSON.parse(readFileSync(vf, 'utf8')) as Verdict;
  writeFileSync(vf, JSON.stringify({ ...v, drainConverged: false }, null, 2));
  t.match(renderReport(dir), 'the drain did not converge before its deadline.');
  const why = 'ended early, the run already shown wrong by the oracle and nothing committed for 15.1 s over 3 or more completed checkpoints (25732 of 29336 committed)';
  writeFileSync(vf, JSON.stringify({ ...v, drainConverged: false, drainStalled: why }, null, 2));
  const md = renderReport(dir);
  t.match(md, `the drain did not converge: it ${why}.`);
  t.notMatch(md, 'the drain did not converge before its deadline');
});

t.test('the numbers follow the evidence: change them in a copy and the report changes', async (t) => {
  const dir = copyFixtureRun(t, 'run-pass');
  const before = renderReport(dir);
  const vf = path.join(dir, 'verdict.json');
  const v = JSON.parse(readFileSync(vf, 'utf8')) as Verdict;
  writeFileSync(vf, JSON.stringify({ ...v, produced: 1234567, pendingUploads: 41 }, null, 2));
  const rf = path.join(dir, 'recount.json');
  const r = JSON.parse(readFileSync(rf, 'utf8'));
  writeFileSync(rf, JSON.stringify({ ...r, distinctEvents: 1234560, objects: 999 }, null, 2));
  const pf = path.join(dir, 'provenance.json');
  const p = JSON.parse(readFileSync(pf, 'utf8'));
  p.engine.revision = 'deadbeef0001';
  p.storeSettings.MINIO_API_STALE_UPLOADS_EXPIRY = '96h';
  writeFileSync(pf, JSON.stringify(p, null, 2));
  const after = renderReport(dir);
  t.not(after, before);
  t.match(after, '- 1,234,567 input events produced');
  t.match(after, '| Distinct events committed | 1,234,560 |');
  t.match(after, '| Objects | 999 |');
  t.match(after, '41 multipart uploads were left pending');
  t.match(after, 'at revision `deadbeef0001`');
  t.match(after, 'set to 96h for this rig');
  t.notMatch(after, '102,600 input events produced');
  // A fault that did not recover is no longer counted as survived.
  const cf = path.join(dir, 'chaos.jsonl');
  const br = firstOf('run-pass', 'broker-restart');
  const chaos = jsonl<ChaosRecord>(cf).filter((c) => !(c.faultId === br.id && c.phase === 'recovered'));
  chaos.push({ t: '2026-08-21T10:17:00.000Z', faultId: br.id, kind: 'broker-restart', phase: 'not-recovered', detail: 'no checkpoint within 60 s' });
  writeFileSync(cf, chaos.map((c) => JSON.stringify(c)).join('\n') + '\n');
  const third = renderReport(dir);
  t.match(third, /\| Kafka broker stopped and started again \| 1 \| 1 \| 0 \|/);
  t.match(third, `- ${br.id} broker-restart on ${br.target}: not recovered — no checkpoint within 60 s`);
});

t.test("a PASS with the harness's own store-tamper mutations: both columns on the engine's basis, no disagreement row", async (t) => {
  const dir = copyFixtureRun(t, 'run-pass');
  const vf = path.join(dir, 'verdict.json');
  const v = JSON.parse(readFileSync(vf, 'utf8')) as Verdict;
  // As decideVerdict writes it: verdict.json's counters have the harness's mutations taken out; recount.json has them in.
  writeFileSync(vf, JSON.stringify({ ...v, tamper: { reactions: [{ faultId: 'f099', variant: 'overwrite', keys: ['k1'], reaction: 'not-met' }], harnessMutations: { oracle: 3, recount: 2 }, acceptedForeign: 0 } }, null, 2));
  const rf = path.join(dir, 'recount.json');
  const r = JSON.parse(readFileSync(rf, 'utf8'));
  writeFileSync(rf, JSON.stringify({ ...r, counters: { ...r.counters, mutations: 2 } }, null, 2));
  const md = renderReport(dir);
  t.match(md, /\*\*Verdict: PASS\*\*/);
  const outcome = md.slice(md.indexOf('## Measured outcome'), md.indexOf('\n## ', md.indexOf('## Measured outcome') + 3));
  const rows = outcome.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| Property') && !l.startsWith('|---'));
  t.ok(rows.length >= 8, 'the outcome table has its rows');
  t.notOk(rows.some((l) => l.includes('**no**')), 'no row of a PASS says the recount and the oracle disagree');
  t.match(outcome, /\| Committed objects changed or gone after being judged \| 0 \| 0 \| yes \|/);
  t.match(outcome, "taken out of both columns and shown apart here: 2 in the recount (2 counted in all), 3 seen by the oracle");
  t.match(outcome, 'The recount agrees with the oracle');
});

t.test('re-reporting stored evidence gives the same bytes', async (t) => {
  for (const name of ['run-pass', 'run-fail', 'run-aborted']) {
    t.equal(renderReport(fx(name)), read(fx(name), 'report.md'), `${name}: report.md as stored`);
    const ev = readRunEvidence(fx(name));
    t.equal(renderTimelineSvg(ev), read(fx(name), 'timeline.svg'), `${name}: timeline.svg as stored`);
    t.equal(renderJunit(ev), read(fx(name), 'junit.xml'), `${name}: junit.xml as stored`);
    const dir = copyFixtureRun(t, name);
    writeReports(dir);
    const first = ['report.md', 'timeline.svg', 'junit.xml'].map((f) => readFileSync(path.join(dir, f), 'utf8'));
    writeReports(dir);
    const second = ['report.md', 'timeline.svg', 'junit.xml'].map((f) => readFileSync(path.join(dir, f), 'utf8'));
    t.same(second, first, `${name}: writing twice changes nothing (outputs are not evidence)`);
    t.equal(first[0], read(fx(name), 'report.md'), `${name}: a copy elsewhere reports the same`);
  }
});

t.test('a FAIL run says so up front, with the reasons, and does not count what did not land or recover', async (t) => {
  const md = renderReport(fx('run-fail'));
  const v = JSON.parse(read(fx('run-fail'), 'verdict.json')) as Verdict;
  const head = md.slice(0, md.indexOf('## Provenance'));
  t.match(head, /— FAIL\n/);
  t.match(head, '**Verdict: FAIL (safety).** The engine was shown wrong (it also failed for liveness and coverage): the verdict is FAIL (exit code 1).');
  for (const r of v.reasons) t.match(head, `- ${r} (`);
  t.match(head, /- the recount found 3 duplicates \(safety\)/);
  t.match(head, /- mandatory protocol point sink\.after-commit not covered \(coverage\)/);
  t.match(head, /did not recover within 60 s \(liveness\)/);
  for (const w of v.warnings) t.match(head, `- ${w}`);
  t.match(md, /Not counted as survived \(2\):/);
  const ac = planOf('run-fail').find((f) => f.point === 'sink.after-commit')!;
  const pa = firstOf('run-fail', 'partition');
  t.match(md, `- ${ac.id} protocol-point at sink.after-commit: not landed`);
  t.match(md, `- ${pa.id} partition on ${pa.target}: not recovered`);
  t.match(md, /\| `sink\.after-commit` \| yes \| 0 of 1 \| \*\*no\*\* \|/);
  t.match(md, 'Mandatory points not covered: `sink.after-commit`.');
  t.match(md, /\| Duplicates \(an event id committed twice\) \| 3 \| 3 \| yes \|/);
  t.match(md, '- **Demonstrated:** nothing.');
});

t.test('the headline of a FAIL names the kind of failure: safety, liveness only, coverage only', async (t) => {
  const why = 'the verdict is FAIL (exit code 1)';
  t.equal(verdictHeadline('FAIL', ['safety'], why), '**Verdict: FAIL (safety).** The engine was shown wrong: the verdict is FAIL (exit code 1).');
  t.match(verdictHeadline('FAIL', ['liveness'], why), /^\*\*Verdict: FAIL \(liveness only\)\.\*\* Nothing was shown wrong, but the run did not recover or settle within its deadlines,/);
  t.match(verdictHeadline('FAIL', ['coverage'], why), /^\*\*Verdict: FAIL \(coverage only\)\.\*\* Nothing was shown either way:/);
  t.match(verdictHeadline('FAIL', ['liveness', 'coverage'], why), /^\*\*Verdict: FAIL \(liveness and coverage\)\.\*\*/);
  t.equal(verdictHeadline('GATE_FAILED', ['coverage'], 'x'), '**Verdict: GATE_FAILED.** This run does not support the claim: x.', 'other verdicts keep their own word');
  // A FAIL for coverage alone, rendered from a run directory: one worker-kill and a mandatory point never reached.
  const dir = copyFixtureRun(t, 'run-fail');
  const vf = path.join(dir, 'verdict.json');
  const v = JSON.parse(readFileSync(vf, 'utf8')) as Verdict;
  writeFileSync(vf, JSON.stringify({ ...v, reasons: ['mandatory protocol point not covered: sink.after-commit'], classifiedReasons: [{ reason: 'mandatory protocol point not covered: sink.after-commit', class: 'coverage' }] }, null, 2));
  const md = renderReport(dir);
  t.match(md, '**Verdict: FAIL (coverage only).** Nothing was shown either way');
  t.match(md, '- mandatory protocol point not covered: sink.after-commit (coverage)');
  t.notMatch(md.slice(0, md.indexOf('## Provenance')), 'The engine was shown wrong');
});

t.test('a FAIL leads with what failed; a mutant run says so in its title', async (t) => {
  const md = renderReport(fx('run-fail'));
  const lead = md.split('\n').find((l) => l.startsWith('This run FAILED'));
  t.ok(lead, 'the lead paragraph opens with the failure');
  t.match(lead!, /^This run FAILED: the engine was shown wrong \(the recount found 3 duplicates; 3 more reasons above\)\./);
  t.match(lead!, /18 faults landed and were recovered from, which does not make up for what failed\./);
  t.notMatch(renderReport(fx('run-pass')), /This run FAILED|does not make up/, 'a PASS keeps its lead');
  t.notMatch(md.split('\n')[0]!, /mutant/, 'the correct engine: no mutant in the title');
  const dir = copyFixtureRun(t, 'run-fail');
  const pf = path.join(dir, 'provenance.json');
  const p = JSON.parse(readFileSync(pf, 'utf8'));
  p.engine.mutant = 'commit-at-prepare';
  writeFileSync(pf, JSON.stringify(p, null, 2));
  t.match(renderReport(dir).split('\n')[0]!, /^# quick \(mutant run: sink mutant `commit-at-prepare`, broken on purpose\): exactly-once .* — FAIL$/);
});

t.test('an aborted run: missing evidence named, nothing certified', async (t) => {
  const md = renderReport(fx('run-aborted'));
  t.match(md, /— ABORTED\n/);
  t.match(md, "the run left no verdict.json, so it is treated as ABORTED");
  t.match(md, 'Evidence missing from the run directory: `recount.json`, `verdict.json`.');
  t.match(md, 'Not available: `recount.json` is not in the run directory.');
  t.match(md, '- **The run was aborted**');
  t.match(md, /not attempted/);
  for (const s of SECTIONS) t.match(md, `\n${s}\n`, `${s} present even so`);
  // Even an empty directory gives a report.
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'clink-qual-empty-'));
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
  const empty = renderReport(tmp);
  t.match(empty, /ABORTED/);
  t.match(empty, 'Not available: `provenance.json`');
  t.ok(balanced(renderTimelineSvg(readRunEvidence(tmp))));
});

t.test('timeline.svg: well-formed, one band per landed fault, one tick per checkpoint, both lines', async (t) => {
  for (const name of ['run-pass', 'run-fail', 'run-aborted']) {
    const svg = read(fx(name), 'timeline.svg');
    t.ok(balanced(svg), `${name}: balanced tags`);
    t.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    const landed = new Set(jsonl<ChaosRecord>(path.join(fx(name), 'chaos.jsonl')).filter((c) => c.phase === 'landed').map((c) => c.faultId));
    const bands = [...svg.matchAll(/<rect class="fault-band" data-fault="(f\d+)"/g)].map((m) => m[1]);
    t.equal(bands.length, landed.size, `${name}: ${landed.size} bands`);
    t.same(new Set(bands), landed);
    const cps = read(fx(name), 'checkpoints.jsonl').split('\n').filter(Boolean).length;
    t.equal((svg.match(/<line class="checkpoint"/g) ?? []).length, cps, `${name}: ${cps} checkpoint ticks`);
    t.match(svg, /<polyline class="committed"/);
    t.match(svg, /<polyline class="produced"/);
    t.match(svg, /worker-kill \(\d+\)/, 'legend by kind');
  }
});

t.test('junit.xml: one case per gate condition, fault, counter, and the recount', async (t) => {
  for (const name of ['run-pass', 'run-fail']) {
    const xml = read(fx(name), 'junit.xml');
    t.ok(balanced(xml), `${name}: balanced`);
    const gate = JSON.parse(read(fx(name), 'gate.json')).conditions.length;
    const faults = JSON.parse(read(fx(name), 'plan.json')).length;
    t.equal((xml.match(/<testcase /g) ?? []).length, gate + faults + 6 + 1, `${name}: case count`);
  }
  const cases = JSON.parse(read(fx('run-pass'), 'gate.json')).conditions.length + planOf('run-pass').length + 6 + 1;
  t.match(read(fx('run-pass'), 'junit.xml'), `<testsuites name="clink-qual quick-20260821-101500" tests="${cases}" failures="0"`);
  const fail = read(fx('run-fail'), 'junit.xml');
  t.match(fail, `<testsuites name="clink-qual quick-20260821-113000" tests="${cases}" failures="3"`);
  t.match(fail, /<testcase name="duplicates" classname="quick.counters" time="[\d.]+">\n\s+<failure message="duplicates = 3"\/>/);
});

t.test('junit.xml: class names without the run id, a time on every case, an aborted run as errors and skips, a failed gate skips the rest', async (t) => {
  const pass = read(fx('run-pass'), 'junit.xml');
  const fail = read(fx('run-fail'), 'junit.xml');
  const classes = (xml: string) => [...xml.matchAll(/classname="([^"]+)"/g)].map((m) => m[1]).sort();
  t.same(classes(pass), classes(fail), 'the same class names in two runs of the same campaign');
  t.notMatch(pass, /classname="[^"]*\d{8}/, 'no run id in a class name');
  const cases = [...pass.matchAll(/<testcase [^>]*>/g)].map((m) => m[0]);
  t.ok(cases.length > 0 && cases.every((c) => /time="\d+(\.\d+)?"/.test(c)), 'every case has a time');
  const recountS = JSON.parse(read(fx('run-pass'), 'recount.json')).durationS;
  t.match(pass, `<testcase name="duplicates" classname="quick.counters" time="${recountS}"`, "a counter's time is the recount's");
  // The aborted fixture (no verdict.json): nothing is a failure; what did not run is skipped, what was not shown is an error.
  const ab = read(fx('run-aborted'), 'junit.xml');
  t.notMatch(ab, /<failure /);
  t.match(ab, /<error message="not shown, the run left no verdict.json \(interrupted\): /);
  t.match(ab, /<skipped message="not attempted: /);
  t.match(ab, /<testsuites [^>]*failures="0" errors="[1-9]\d*"/);
  // A GATE_FAILED verdict: the gate's cases fail, every other case is skipped.
  const dir = copyFixtureRun(t, 'run-fail');
  const vf = path.join(dir, 'verdict.json');
  writeFileSync(vf, JSON.stringify({ ...JSON.parse(readFileSync(vf, 'utf8')), verdict: 'GATE_FAILED' }));
  const gf = path.join(dir, 'gate.json');
  const g = JSON.parse(readFileSync(gf, 'utf8'));
  g.passed = false;
  g.conditions[0].passed = false;
  writeFileSync(gf, JSON.stringify(g));
  const xml = renderJunit(readRunEvidence(dir));
  t.equal((xml.match(/<failure /g) ?? []).length, 1, 'only the gate condition fails');
  t.equal((xml.match(/<skipped message="the gate failed: nothing was soaked"/g) ?? []).length, (xml.match(/<testcase /g) ?? []).length - g.conditions.length);
});

t.test('a failed heal is reported as heal failed, never as survived, with an UNKNOWN verdict', async (t) => {
  const dir = copyFixtureRun(t, 'run-pass');
  const cf = path.join(dir, 'chaos.jsonl');
  const br = firstOf('run-pass', 'broker-restart');
  const chaos = jsonl<ChaosRecord>(cf).filter((c) => !(c.faultId === br.id && (c.phase === 'recovered' || c.phase === 'healed')));
  chaos.push({ t: '2026-08-21T10:17:00.000Z', faultId: br.id, kind: 'broker-restart', phase: 'heal-failed', detail: 'heal failed: ssh timed out' });
  writeFileSync(cf, chaos.map((c) => JSON.stringify(c)).join('\n') + '\n');
  const vf = path.join(dir, 'verdict.json');
  const v = JSON.parse(readFileSync(vf, 'utf8')) as Verdict;
  writeFileSync(vf, JSON.stringify({ ...v, verdict: 'UNKNOWN', exitCode: 2, reasons: [`fault ${br.id} could not be healed (heal-failed); the run is not certified`] }, null, 2));
  const md = renderReport(dir);
  t.match(md, `- ${br.id} broker-restart on ${br.target}: **heal failed** (the fault may have stayed in force; the run cannot PASS) — heal failed: ssh timed out`);
  t.match(md, /\| Kafka broker stopped and started again \| 1 \| 1 \| 0 \|/);
  t.match(md, 'UNKNOWN');
  t.notMatch(md, '**Verdict: PASS.**');
});

t.test("another engine behind the plug: its version, its sink's mechanism, how each point was injected, and how pending uploads were counted", async (t) => {
  const dir = copyFixtureRun(t, 'run-pass');
  const clink = renderReport(dir);
  t.match(clink, 'it buffers a checkpoint interval of records, stages them as multipart parts at the barrier', "no mechanism recorded: the bundled engine's");
  t.match(clink, "counted from the engine's own journal of started uploads");
  t.notMatch(clink, '| Injected at |', 'no injection recorded: no column');
  const pf = path.join(dir, 'provenance.json');
  const p = JSON.parse(readFileSync(pf, 'utf8'));
  p.engine.name = 'flink';
  p.engine.version = '2.2.0';
  p.engine.sinkMechanism = 'its FileSink completes each multipart upload once the checkpoint is complete.';
  p.engine.faultPointInjection = Object.fromEntries(p.engine.faultPoints.map((pt: string) => [pt, `advice at ${pt.toUpperCase()}`]));
  delete p.engine.faultPointInjection['sink.after-commit'];
  p.engine.faultPointsNotApplicable = { 'sink.after-commit': 'no method boundary after the commit' };
  writeFileSync(pf, JSON.stringify(p, null, 2));
  writeFileSync(path.join(dir, 'pending-uploads.json'), JSON.stringify({ pending: 3, method: 'ListMultipartUploads under the run prefix', keys: ['a', 'b', 'c'] }));
  const md = renderReport(dir);
  t.match(md, /\| Engine \| flink 2\.2\.0 \(pinned and checked below\), driven by the harness and its engine plug at revision `/);
  t.match(md, 'Whether an event lands once depends only on the engine: its FileSink completes each multipart upload once the checkpoint is complete.');
  t.notMatch(md, 'stages them as multipart parts at the barrier');
  t.match(md, /\| Point \| Mandatory \| Kills landed and recovered \| Covered \| Injected at \|/);
  t.match(md, /\| `sink\.before-prepare` \| yes \| \d+ of \d+ \| yes \| advice at SINK\.BEFORE-PREPARE \|/);
  t.match(md, /\| `sink\.after-commit` \|[^\n]*\| not applicable: no method boundary after the commit \|/);
  t.match(md, 'Points this engine cannot reach, reported as not applicable and never counted as covered: `sink.after-commit` (no method boundary after the commit).');
  t.match(md, 'counted by the engine plug: ListMultipartUploads under the run prefix.');
  t.notMatch(md, 'Clink checks', "another engine's run never gets Clink's commit check");
});

t.test("the kill after the commit names the engine's own commit check, from provenance", async (t) => {
  const dir = copyFixtureRun(t, 'run-pass');
  const clink = renderReport(dir);
  t.match(clink, /The kill after the commit \(\d+ times?\)/, 'the fixture run survived a kill after the commit');
  t.match(clink, "instead of guessing (Clink checks the object's ETag, size and its own token in the metadata).", 'evidence from before the field: the bundled engine keeps its sentence');
  const pf = path.join(dir, 'provenance.json');
  const p = JSON.parse(readFileSync(pf, 'utf8'));
  p.engine.name = 'other';
  writeFileSync(pf, JSON.stringify(p, null, 2));
  t.match(renderReport(dir), 'instead of guessing.', 'an engine that does not describe its check: nothing is claimed for it');
  p.engine.commitCheck = 'it compares the object\'s length with the upload\'s';
  writeFileSync(pf, JSON.stringify(p, null, 2));
  t.match(renderReport(dir), "instead of guessing (it compares the object's length with the upload's).");
});

t.test('the input audit: clean or not, and how much a tailed audit had left to read after the input stopped', async (t) => {
  const dir = copyFixtureRun(t, 'run-pass');
  const audit = { records: 102600, clean: true, duplicates: 0, holes: 0, mismatched: 0, misplaced: 0, findings: [] as string[] };
  writeFileSync(path.join(dir, 'input-audit.json'), JSON.stringify(audit));
  let md = renderReport(dir);
  t.match(md, 'the topic read back in full held 102,600 records, with no duplicate');
  t.match(md, "so no finding (if any) comes from the input: each is the engine's.");
  t.notMatch(md, 'tailed the topic', 'an audit read after the run says nothing of a tail');
  // With F-1's signature in the collected logs, a clean input no longer makes every finding the engine's.
  const log = path.join(dir, 'logs/worker-1/worker.log');
  const before = readFileSync(log, 'utf8');
  writeFileSync(log, before + 'Recovering commit failed for object k. Object does not exist and MultiPart Upload u is not valid.\n');
  t.match(renderReport(dir), "so no finding (if any) comes from the input; the collected logs show the store's own loss of data (see Findings), so not every finding is the engine's.");
  writeFileSync(log, before);
  writeFileSync(path.join(dir, 'input-audit.json'), JSON.stringify({ ...audit, tail: { leftAtFinish: 1234, finishMs: 1800, reopened: 2 } }));
  md = renderReport(dir);
  t.match(md, 'when the run ended, 1,234 records were left to read, read in 1.8 s (its stream was re-opened 2 times, each time from the next unread offset).');
  writeFileSync(path.join(dir, 'input-audit.json'), JSON.stringify({ ...audit, clean: false, holes: 3, findings: ['partition 1: 3 sequence(s) missing below 90'] }));
  md = renderReport(dir);
  t.match(md, 'The input audit found anomalies in the topic itself');
  t.match(md, '3 missing');
});

t.test("the fault log gives each fault's planned and landed times from the soak's start", async (t) => {
  const md = renderReport(fx('run-pass'));
  t.match(md, '| Fault | Planned | Landed | Kind | Target / point | Composition | Outcome | Recovery | Landed evidence |');
  const chaos = jsonl<ChaosRecord>(path.join(fx('run-pass'), 'chaos.jsonl'));
  const soak = Date.parse(jsonl<{ t: string; phase: string; edge: string }>(path.join(fx('run-pass'), 'phases.jsonl')).find((p) => p.phase === 'soak' && p.edge === 'start')!.t);
  const clock = (s: number) => `${String(Math.floor(Math.round(s) / 60)).padStart(2, '0')}:${String(Math.round(s) % 60).padStart(2, '0')}`;
  // A protocol point lands when a process reaches it, seconds after the plan's time.
  const late = planOf('run-pass').filter((f) => {
    const l = chaos.find((c) => c.faultId === f.id && c.phase === 'landed');
    return l && Math.round((Date.parse(l.t) - soak) / 1000) !== Math.round(f.atS);
  });
  t.ok(late.length > 0, 'the fixture has faults that landed after their planned time');
  for (const f of late) {
    const landedS = (Date.parse(chaos.find((c) => c.faultId === f.id && c.phase === 'landed')!.t) - soak) / 1000;
    t.match(md, `| ${f.id} | ${clock(f.atS)} | ${clock(landedS)} | ${f.kind} |`, `${f.id}: planned and landed both shown`);
  }
});

t.test("a composition's own recovery is a row of the survived table; an old chaos log without it says so", async (t) => {
  const md = renderReport(fx('run-pass'));
  const comp = jsonl<ChaosRecord>(path.join(fx('run-pass'), 'chaos.jsonl')).find((c) => c.phase === 'composition-recovered')!;
  const name = comp.composition!.replace(/#\d+$/, '');
  t.match(md, new RegExp(`\\| Composition ${name} \\([a-z+ -]+\\), as a whole \\| 1 \\| 1 \\| 1 \\| ${comp.recoveryS} s / ${comp.recoveryS} s \\|`));
  t.match(md, "A composition's row times the composition as a whole, from its last heal");
  t.notMatch(md, 'predates them');
  const dir = copyFixtureRun(t, 'run-pass');
  const cf = path.join(dir, 'chaos.jsonl');
  writeFileSync(cf, jsonl<ChaosRecord>(cf).filter((c) => !c.phase.startsWith('composition-')).map((c) => JSON.stringify(c)).join('\n') + '\n');
  const old = renderReport(dir);
  t.match(old, new RegExp(`\\| Composition ${name} \\([a-z+ -]+\\), as a whole \\| 1 \\| 1 \\| 1 \\| not recorded \\|`));
  t.match(old, 'their steps were timed from the composition\'s last heal, not their own');
});

/** Rewrites a fixture copy's JSON evidence file in place. */
function editJson(dir: string, file: string, edit: (j: any) => void): void {
  const f = path.join(dir, file);
  const j = JSON.parse(readFileSync(f, 'utf8'));
  edit(j);
  writeFileSync(f, JSON.stringify(j, null, 2));
}

const claimOf = (md: string) => /\*\*Claim under test\.\*\* (.*)\n/.exec(md)![1]!;

t.test('the claim names only the fault classes that were scheduled, landed and recovered', async (t) => {
  const pass = claimOf(renderReport(fx('run-pass')));
  t.notMatch(pass, '(staged multipart commits)', "no fixed description of Clink's sink");
  t.match(pass, 'when the object store is unavailable');
  t.match(pass, 'when the object store is down during a recovery', 'the fixture ran the decisive composition, and it recovered');
  t.notMatch(pass, 'frozen', 'process pauses were not scheduled');
  t.notMatch(pass, 'clock', 'clock steps were not scheduled');

  const dir = copyFixtureRun(t, 'run-pass');
  const outages = new Set(planOf('run-pass').filter((f) => f.kind === 'store-outage').map((f) => f.id));
  t.ok(outages.size > 0, 'the fixture plans store outages');
  const chaos = path.join(dir, 'chaos.jsonl');
  const kept = jsonl<ChaosRecord>(chaos).map((r) => (outages.has(r.faultId) && r.phase !== 'planned' ? { ...r, phase: r.phase === 'landed' ? 'not-landed' : r.phase } : r)).filter((r) => !(outages.has(r.faultId) && r.phase !== 'planned' && r.phase !== 'not-landed'));
  writeFileSync(chaos, kept.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const md = renderReport(dir);
  const claim = claimOf(md);
  t.notMatch(claim, 'object store', 'no store outage landed: neither the outage nor the outage during a recovery is claimed');
  t.match(claim, 'when its worker processes are killed', 'what did land is still claimed');
  t.notMatch(md, /including \d+ store outages? during a worker's recovery/, 'nor demonstrated');
  t.match(md, 'this run scheduled no store outage that landed', 'the caveat on the self-hosted store says so');
});

t.test('claim boundaries from provenance: the rig, the engine as deployed, the store defects that apply, the Unknown classes', async (t) => {
  const pass = renderReport(fx('run-pass'));
  t.match(pass, "- **The engine as deployed:** Clink's coordinator deals the topic's partitions over the workers");
  t.match(pass, '- **Known defects of this store:** none of the harness\'s registry applies to minio RELEASE.2025-09-07T16-13-09Z.');
  t.match(pass, '- **Unknown:** the fault classes QUAL-03 names as Unknown that this run did not show (disk corruption, object-store data corruption and clock steps)');
  t.notMatch(pass, 'NoSuchUpload', "no sentence states what the store answers: nothing in the evidence says");
  t.match(pass, 'Those kills are not the only repeated commits: Clink declares that every restore redeploys all subtasks');

  t.match(pass, 'plus the operations host, which no fault targets (2 cores, 7.8 GiB of memory, shared by every host of this rig) |', 'the provenance table names what the rig shares');
  t.match(pass, "Protocol-point faults are armed by name inside the engine's own code", 'the fixture schedules protocol points');
  t.notMatch(pass, 'inside the sink and coordinator code', "no fixed sentence about Clink's code");

  const fail = renderReport(fx('run-fail'));
  t.match(fail, 'plus the operations host, which no fault targets |', 'older provenance: nothing said of cores');
  t.match(fail, 'It ran on a local rig: 8 network namespaces on one kernel, with the operations host in the root namespace, all sharing one disk (core count not recorded).', 'provenance from before the field');
  t.match(fail, 'the engine plug recorded no profile of the job it deployed');
  t.notMatch(fail, 'Those kills are not the only repeated commits', 'no declaration, no sentence');

  const dir = copyFixtureRun(t, 'run-pass');
  editJson(dir, 'provenance.json', (p) => {
    p.components.find((c: { name: string }) => c.name === 'minio').version = 'v0.0.0-20260212201848-7aac2a2c5b7c';
    p.store.version = 'v0.0.0-20260212201848-7aac2a2c5b7c';
    p.rig.kind = 'inventory';
    p.engine.profile = 'The job is one chained vertex (a test profile).';
  });
  const plan = planOf('run-pass');
  const at = plan[plan.length - 1]!.atS + 1;
  plan.push({ id: 'f900', kind: 'clock-step', atS: at, target: 'worker-1', offsetS: 300, durationS: 5 }, { id: 'f901', kind: 'disk-full', atS: at, target: 'worker-2', durationS: 5 });
  writeFileSync(path.join(dir, 'plan.json'), JSON.stringify(plan, null, 2));
  const last = jsonl<ChaosRecord>(path.join(dir, 'chaos.jsonl')).at(-1)!.t;
  const recs = ['f900', 'f901'].flatMap((id, i) =>
    (['planned', 'landed', 'healed', 'recovered'] as const).map((phase) => ({ t: last, faultId: id, kind: i === 0 ? 'clock-step' : 'disk-full', target: `worker-${i + 1}`, phase, ...(phase === 'landed' ? { evidence: { note: 'test' } } : {}), ...(phase === 'recovered' ? { recoveryS: 3 } : {}) })),
  );
  writeFileSync(path.join(dir, 'chaos.jsonl'), readFileSync(path.join(dir, 'chaos.jsonl'), 'utf8') + recs.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const md = renderReport(dir);
  t.match(md, '- **Known defects of this store** (minio v0.0.0-20260212201848-7aac2a2c5b7c), which a run against it may meet: F-1: a CompleteMultipartUpload whose client goes away');
  t.match(md, '(`docs/findings/minio-complete-cancel.md`)');
  t.match(md, 'on 8 inventory hosts plus the operations host (2 cores, 7.8 GiB of memory).', 'an inventory rig is counted in hosts, not namespaces');
  t.notMatch(md, 'separate machines, with their own cores', 'an inventory rig is separate machines already');
  t.match(md, '- **The engine as deployed:** The job is one chained vertex (a test profile).');
  t.match(md, 'that this run did not show (disk corruption and object-store data corruption)', 'a landed clock step takes clock steps out of Unknown');
  t.match(md, 'No longer Unknown here: clock steps (1 clock-step fault landed in this run).');
  t.match(md, 'Look-alikes that do not count: a full disk, which this run scheduled, is not disk corruption.');
  t.match(claimOf(md), "when an engine host's wall clock steps");
});


t.test("the store the run ran against is provenance.json's store: named in provenance and boundaries; F-1 only for the pinned MinIO", async (t) => {
  const pass = renderReport(fx('run-pass'));
  t.match(pass, "| Store | minio RELEASE.2025-09-07T16-13-09Z on the store host (the campaign's `store`) |");
  t.match(renderReport(fx('run-fail')), "| Store | minio RELEASE.2025-09-07T16-13-09Z (the store component: this run's provenance.json names no store) |", 'an older run: its store component');

  const weed = 'v0.0.0-20261109003541-7506e5f91cd6';
  const dir = copyFixtureRun(t, 'run-pass');
  editJson(dir, 'provenance.json', (p) => {
    // Both stores are installed (the manifest lists both); the pinned MinIO's version would carry F-1 if it were taken for the store.
    p.components.find((c: { name: string }) => c.name === 'minio').version = 'v0.0.0-20260212201848-7aac2a2c5b7c';
    p.components.push({ name: 'seaweedfs', version: weed, sha256: 'e'.repeat(64) });
    p.store = { name: 'seaweedfs', version: weed };
    delete p.storeSettings;
  });
  const md = renderReport(dir);
  t.match(md, `| Store | seaweedfs ${weed} on the store host (the campaign's \`store\`) |`);
  t.match(md, `against seaweedfs ${weed}, on `, 'the Demonstrated line names the store');
  t.match(md, `- **Known defects of this store:** none of the harness's registry applies to seaweedfs ${weed}.`);
  t.notMatch(md, 'F-1', 'F-1 is MinIO\'s');
  t.notMatch(md, 'MINIO_API_STALE_UPLOADS_EXPIRY', "no MinIO sweeper on SeaweedFS");
  t.match(md, 'The rig set no lifecycle rule on the SeaweedFS bucket; whether SeaweedFS removes stale uploads on its own was not measured (`docs/stores.md`).');

  editJson(dir, 'provenance.json', (p) => {
    p.store = { name: 'minio', version: 'v0.0.0-20260212201848-7aac2a2c5b7c' };
  });
  const minio = renderReport(dir);
  t.match(minio, '- **Known defects of this store** (minio v0.0.0-20260212201848-7aac2a2c5b7c), which a run against it may meet: F-1:', 'the pinned MinIO, named by the store field, carries F-1');
  t.notMatch(minio, 'SeaweedFS bucket');
});

t.test('pending uploads: a count that failed at the wrap-up is said to be no count; failed key listings make it a lower bound', async (t) => {
  const dir = copyFixtureRun(t, 'run-pass');
  const v = JSON.parse(read(dir, 'verdict.json'));
  writeFileSync(path.join(dir, 'pending-uploads.json'), JSON.stringify({ pending: 0, error: "worker-2: cannot read the sink's upload journal /var/lib/x/journal.jsonl: cat: Is a directory" }));
  const failed = renderReport(dir);
  t.match(failed, "- Multipart uploads left pending after the run were **not counted**: worker-2: cannot read the sink's upload journal /var/lib/x/journal.jsonl: cat: Is a directory.");
  t.match(failed, `The run's figure of ${v.pendingUploads} is no measurement.`);
  t.notMatch(failed, /multipart uploads? (was|were) left pending after the run, counted/);
  writeFileSync(path.join(dir, 'pending-uploads.json'), JSON.stringify({ pending: v.pendingUploads, started: 10, checkedKeys: 8, errors: 2 }));
  const partial = renderReport(dir);
  t.match(partial, `- At least ${v.pendingUploads} multipart upload`);
  t.match(partial, "counted from the engine's own journal of started uploads, each key listed exactly (the listing of 2 keys failed, so this is a lower bound).");
});

t.test('hidden objects the recount left unjudged are a caveat, only when there were some', async (t) => {
  t.notMatch(renderReport(fx('run-pass')), 'hidden name', 'none recorded: no caveat');
  const dir = copyFixtureRun(t, 'run-pass');
  editJson(dir, 'recount.json', (r) => {
    r.hiddenObjects = 3;
  });
  t.match(renderReport(dir), "- 3 objects under the run's prefix had a hidden name (its last path segment starts with `_` or `.`");
});

t.test('the job profile deployed: named in the Engine row and the claim boundaries when provenance records it', async (t) => {
  const pass = renderReport(fx('run-pass'));
  t.notMatch(pass, 'job profile', 'a plug with one job: no profile named');
  const dir = copyFixtureRun(t, 'run-pass');
  editJson(dir, 'provenance.json', (p) => {
    p.engine.jobProfile = 'wide';
    p.engine.profile = 'The job ("wide" profile) is keyed (a test profile).';
  });
  const md = renderReport(dir);
  t.match(md, /\| Engine \| [^\n]*; sink mutant: none; job profile: `wide` \(described under Claim boundaries\) \|/);
  t.match(md, '- **The engine as deployed (job profile `wide`):** The job ("wide" profile) is keyed (a test profile). Another job shape, state backend or failover strategy (the plug\'s other job profiles included) is not covered by this run.');
});


t.test('a lost-unsynced-writes fault that cut no byte is a crash, not lost writes: it takes nothing out of Unknown', async (t) => {
  const dir = copyFixtureRun(t, 'run-pass');
  const plan = planOf('run-pass');
  const at = plan[plan.length - 1]!.atS + 1;
  plan.push({ id: 'f910', kind: 'lost-unsynced-writes', atS: at, target: 'coordinator' }, { id: 'f911', kind: 'lost-unsynced-writes', atS: at + 1, target: 'worker-1' });
  writeFileSync(path.join(dir, 'plan.json'), JSON.stringify(plan, null, 2));
  const last = jsonl<ChaosRecord>(path.join(dir, 'chaos.jsonl')).at(-1)!.t;
  const cuts = (before: number, after: number) => ({ lostBytes: before - after, cuts: [{ file: '/d/checkpoints.log', what: 'the log', bytesBefore: before, bytesAfter: after, lostBytes: before - after, inFlight: false }] });
  const write = (evidence: Record<string, Record<string, unknown>>) => {
    const recs = Object.entries(evidence).flatMap(([id, ev]) =>
      (['planned', 'landed', 'healed', 'recovered'] as const).map((phase) => ({ t: last, faultId: id, kind: 'lost-unsynced-writes', target: 'coordinator', phase, ...(phase === 'landed' ? { evidence: ev } : {}), ...(phase === 'recovered' ? { recoveryS: 3 } : {}) })),
    );
    writeFileSync(path.join(dir, 'chaos.jsonl'), readFileSync(path.join(fx('run-pass'), 'chaos.jsonl'), 'utf8') + recs.map((r) => JSON.stringify(r)).join('\n') + '\n');
  };
  write({ f910: cuts(100, 100), f911: cuts(200, 200) });
  const none = renderReport(dir);
  t.match(none, 'that this run did not show (disk corruption', 'no byte lost: disk corruption stays Unknown');
  t.match(none, 'Look-alikes that do not count: all 2 lost-unsynced-writes faults that found every durable file at its last synced length');
  write({ f910: cuts(100, 100), f911: cuts(200, 150) });
  const one = renderReport(dir);
  t.match(one, 'No longer Unknown here: disk corruption (1 lost-unsynced-writes fault that cut unsynced bytes landed in this run)');
  t.match(one, '1 of the 2 lost-unsynced-writes faults that found every durable file at its last synced length');
  t.match(one, /\| f911 \|[^\n]*\| lost-unsynced-writes \|[^\n]*\| lostBytes=50, /, "the fault log's row shows the bytes its cut lost");
  t.match(one, /\| f910 \|[^\n]*\| lost-unsynced-writes \|[^\n]*\| lostBytes=0, /);
  // The recorded figure decides, not the lengths: a landing that recorded 0 lost bytes is a look-alike.
  write({ f910: cuts(100, 100), f911: { ...cuts(200, 150), lostBytes: 0 } });
  t.match(renderReport(dir), 'all 2 lost-unsynced-writes faults that found every durable file at its last synced length');
  // Evidence recorded before lostBytes existed: derived from the lengths, as before.
  write({ f910: { cuts: cuts(100, 100).cuts }, f911: { cuts: cuts(200, 150).cuts } });
  t.match(renderReport(dir), '1 of the 2 lost-unsynced-writes faults that found every durable file at its last synced length');
});

t.test("the store's drive layout, when provenance.json records it, is named in the Store row and the boundaries", async (t) => {
  const dir = copyFixtureRun(t, 'run-pass');
  const pf = path.join(dir, 'provenance.json');
  const p = JSON.parse(readFileSync(pf, 'utf8'));
  t.notOk('drives' in p.store, 'the fixture records no layout (a run from before layouts)');
  const before = renderReport(dir);
  t.match(before, `| Store | minio ${p.store.version} on the store host`, 'no layout words without a recorded layout');
  p.store.drives = 4;
  writeFileSync(pf, JSON.stringify(p, null, 2));
  const four = renderReport(dir);
  t.match(four, `| Store | minio ${p.store.version}, erasure-coded on 4 drives on the store host (the campaign's \`store\`) |`);
  t.match(four, `against minio ${p.store.version}, erasure-coded on 4 drives, on `, 'the Demonstrated boundary');
  t.match(four, `none of the harness's registry applies to minio ${p.store.version}, erasure-coded on 4 drives.`);
  p.store.drives = 1;
  writeFileSync(pf, JSON.stringify(p, null, 2));
  t.match(renderReport(dir), `| Store | minio ${p.store.version}, single drive on the store host`);
});

t.test("a mutant's soak that ended early: the lead, What the engine survived and the fault log say when, why and which faults were not started; phases.jsonl alone says the same", async (t) => {
  const dir = copyFixtureRun(t, 'run-fail');
  const last = planOf('run-fail').at(-1)!;
  const chaosFile = path.join(dir, 'chaos.jsonl');
  const kept = jsonl<ChaosRecord>(chaosFile).filter((r) => r.faultId !== last.id);
  const notStarted: ChaosRecord = { t: kept.at(-1)!.t, faultId: last.id, kind: last.kind, phase: 'not-landed', detail: 'not started: the soak ended early', evidence: { notStarted: true } };
  writeFileSync(chaosFile, [...kept, notStarted].map((r) => JSON.stringify(r)).join('\n') + '\n');
  const early = { endedAtS: 31.4, plannedS: 70, caughtAtS: 24.2, counter: 'duplicates', value: 3160, sampleT: '2026-12-06T00:00:25.000Z', notStarted: [last.id] };
  const vf = path.join(dir, 'verdict.json');
  const v = JSON.parse(readFileSync(vf, 'utf8')) as Verdict;
  writeFileSync(vf, JSON.stringify({ ...v, soakEndedEarly: early }, null, 2));
  const md = renderReport(dir);
  t.match(md, `under faults for ${fmtDuration(31.4)} of a planned ${fmtDuration(70)} of soak`);
  t.match(md, 'The soak ended early because the mutant was already caught (duplicates = 3,160)');
  t.match(md, `The soak ended early, ${fmtDuration(31.4)} into its planned ${fmtDuration(70)}: this run is a mutant's, and the oracle's sample at 2026-12-06T00:00:25.000Z showed duplicates = 3,160, a counter this mutant must raise`);
  t.match(md, `The catch was seen ${fmtDuration(24.2)} into the soak`);
  t.match(md, `The 1 fault planned after that moment (${last.id}) was not started: it is listed as not landed and is not counted as survived.`);
  const row = md.split('\n').find((l) => l.startsWith(`| ${last.id} |`))!;
  t.match(row, '| not started (the soak ended early) |', 'the fault log names it not started');

  // Without verdict.json's record, the soak's end mark in phases.jsonl says the same.
  writeFileSync(vf, JSON.stringify(v, null, 2));
  const pf = path.join(dir, 'phases.jsonl');
  const marks = jsonl<Record<string, unknown>>(pf).map((m) => (m['phase'] === 'soak' && m['edge'] === 'end' ? { ...m, endedEarly: early } : m));
  writeFileSync(pf, marks.map((m) => JSON.stringify(m)).join('\n') + '\n');
  t.match(renderReport(dir), `The soak ended early, ${fmtDuration(31.4)} into its planned ${fmtDuration(70)}`);

  const plain = renderReport(fx('run-fail'));
  t.notMatch(plain, 'The soak ended early', 'a soak that ran its length says nothing of an early end');
  t.notMatch(plain, 'not started (the soak ended early)');
});
