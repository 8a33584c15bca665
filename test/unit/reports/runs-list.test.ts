import t from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { writeFindings, type Finding } from '../../../oracle/findings.ts';
import { findRun, formatRunSummary, formatRunsTable, latestTarget, listRuns, pointLatest, repairLatest, type RunListing } from '../../../reports/runs-list.ts';
import { FIXTURE_RUNS, makeRunsRoot } from '../../helpers/runs-root.ts';

const repo = path.join(import.meta.dirname, '..', '..', '..');
const cli = path.join(repo, 'bin', 'clink-qual.ts');
// The CLI needs Node 24: the project's pinned one (tap itself may run on the machine's older Node).
const pinned = path.join(repo, 'node_modules', '.bin', 'node');
const node = existsSync(pinned) ? pinned : process.execPath;
const { pass, fail, aborted } = FIXTURE_RUNS;

const finding: Finding = {
  counter: 'duplicates',
  n: 1,
  total: 3,
  event: { p: 1, seq: 2050 },
  objects: [{ key: 'runs/q/subtask=1/epoch=2/chk=9.jsonl', line: 4, subtask: 1, epoch: 2, checkpoint: 9, firstSeen: null }],
  detail: 'event (1, 2050) committed twice',
};

/** The fixture runs, the PASS one moved a day later so that start time (not the id) orders them, the FAIL one with findings. */
function root(): string {
  const r = makeRunsRoot();
  for (const file of ['provenance.json', 'verdict.json']) {
    const p = path.join(r, pass.id, file);
    writeFileSync(p, readFileSync(p, 'utf8').replaceAll('"2026-08-21T10:', '"2026-08-22T10:'));
  }
  // A mutation first: the verdict raised no mutations (the harness's own tampering is in findings.jsonl too), so it is not the first finding.
  const harness: Finding = { counter: 'mutations', n: 1, total: 1, event: null, objects: [], detail: 'an object the harness overwrote' };
  writeFindings(path.join(r, fail.id, 'findings.jsonl'), [harness, finding, { ...finding, n: 2, event: { p: 2, seq: 7 }, detail: 'event (2, 7) committed twice' }]);
  return r;
}

function cliRun(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(node, [cli, ...args], { cwd: repo, encoding: 'utf8', env: { ...process.env, CLINK_QUAL_RUNS: '/nonexistent/runs' } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

t.test('listRuns reads every run from its evidence, newest start first, and nothing else', async (t) => {
  const r = root();
  t.teardown(() => rmSync(r, { recursive: true, force: true }));
  const runs = listRuns(r);
  t.same(runs.map((x) => x.id), [pass.id, aborted.id, fail.id], 'the PASS started a day later; the other two start together and the higher id comes first; scratch/ and the .md are no runs');
  const byId = new Map(runs.map((x) => [x.id, x] as [string, RunListing]));
  const p = byId.get(pass.id)!;
  t.match(p, { campaign: 'quick', engine: 'clink', mutant: null, seed: 'quick-1', revision: '625cc82d69af', dirty: false, verdict: 'PASS', exitCode: 0, produced: 102_600, report: 'report.md', timeline: 'timeline.svg', firstFinding: null, findings: null, endedFrom: 'verdict' });
  t.equal(p.durationS, 376, "verdict.json's endedAt minus provenance.json's startedAt");
  t.equal(p.startedAt, '2026-08-22T10:15:00.000Z');
  const f = byId.get(fail.id)!;
  t.equal(f.verdict, 'FAIL');
  t.equal(f.exitCode, 1);
  t.equal(f.durationS, 376, 'verdict endedAt 10:21:16 minus provenance startedAt 10:15:00');
  t.equal(f.counters?.duplicates, 3, "the recount's duplicates");
  t.equal(f.firstFinding, 'duplicates: event (1, 2050) committed twice', 'the first line of findings.jsonl of a counter the verdict raised');
  t.equal(f.findings, 3);
  t.equal(f.reasons[0], 'the recount found 3 duplicates');
  t.same(f.failureClasses, ['safety', 'liveness', 'coverage'], 'the kinds of failure among the reasons, classed from their text (a schema-2 verdict.json)');
  const a = byId.get(aborted.id)!;
  t.equal(a.verdict, null, 'no verdict.json: no verdict, not a guess');
  t.equal(a.counters, null);
  t.equal(a.endedFrom, 'last evidence');
  t.equal(a.durationS, 200, 'the aborted fixture stops 200 s after its start: its last sample or phase mark');
  t.equal(listRuns(path.join(r, 'does-not-exist')).length, 0, 'a missing runs folder has no runs');
});

t.test('the table: one line per run, verdicts, durations, the first finding or reason', async (t) => {
  const r = root();
  t.teardown(() => rmSync(r, { recursive: true, force: true }));
  const lines = formatRunsTable(listRuns(r), { width: 200 }).split('\n');
  t.match(lines[0]!, /^RUN\s+CAMPAIGN\s+ENGINE\s+SEED\s+REVISION\s+VERDICT\s+DURATION\s+FIRST FINDING$/);
  t.match(lines[1]!, new RegExp(`^${pass.id}\\s+quick\\s+clink\\s+quick-1\\s+625cc82d69af\\s+PASS\\s+`));
  t.match(lines[2]!, new RegExp(`^${aborted.id}\\s+.*NO VERDICT\\s+3m20s\\+\\s+—$`));
  t.match(lines[3]!, new RegExp(`^${fail.id}\\s+.*FAIL\\s+6m16s\\s+duplicates: event \\(1, 2050\\) committed twice$`));
  t.match(lines.at(-1)!, /^\+ no verdict\.json/);
  rmSync(path.join(r, fail.id, 'findings.jsonl'));
  t.match(formatRunsTable(listRuns(r), { width: 200 }), /FAIL\s+6m16s\s+\(reason\) the recount found 3 duplicates/, 'without findings.jsonl a FAIL shows its first reason, marked as one');
  t.equal(formatRunsTable([]), 'no runs');
  const summary = formatRunSummary(findRun(r, fail.id)!);
  t.match(summary, /verdict {4}FAIL \(safety, liveness, coverage\) \(exit 1\)/, "the verdict with the kinds of failure among its reasons");
  t.match(summary, /counters {3}duplicates 3/);
  t.match(summary, /  - fault f002 \(partition\) did not recover within 60 s/);
});

t.test('runs/latest: pointed, repaired, never over a real directory', async (t) => {
  const r = root();
  t.teardown(() => rmSync(r, { recursive: true, force: true }));
  t.equal(latestTarget(r), null);
  t.equal(repairLatest(r), `latest -> ${pass.id} (created)`);
  t.ok(lstatSync(path.join(r, 'latest')).isSymbolicLink());
  t.equal(readlinkSync(path.join(r, 'latest')), pass.id, 'relative: the runs folder can move');
  t.equal(repairLatest(r), null, 'already right: nothing done');
  t.equal(findRun(r, 'latest')?.id, pass.id);
  pointLatest(r, fail.id);
  t.equal(latestTarget(r), fail.id, 'the runner points it at the run it starts');
  t.equal(repairLatest(r), `latest -> ${pass.id} (was ${fail.id})`, 'runs puts it back on the newest');
  rmSync(path.join(r, pass.id), { recursive: true });
  t.equal(repairLatest(r), `latest -> ${aborted.id} (was ${pass.id})`, 'the newest run was deleted: the next newest');
  t.same(listRuns(r).map((x) => x.id), [aborted.id, fail.id], 'latest itself is not listed as a run');
  rmSync(path.join(r, 'latest'));
  mkdirSync(path.join(r, 'latest'));
  t.throws(() => pointLatest(r, fail.id), /not a symlink; left alone/);
  t.ok(lstatSync(path.join(r, 'latest')).isDirectory(), 'a real latest/ directory is left alone');
  t.equal(findRun(r, '../etc'), undefined, 'an id is one path segment');
});

t.test('clink-qual runs --json, runs show, exit codes', async (t) => {
  const r = root();
  t.teardown(() => rmSync(r, { recursive: true, force: true }));
  const list = cliRun(['runs', '--json', '--runs-dir', r]);
  t.equal(list.code, 0, list.stderr);
  const doc = JSON.parse(list.stdout) as { schemaVersion: number; runsDir: string; latest: string | null; runs: RunListing[] };
  t.equal(doc.schemaVersion, 1);
  t.equal(doc.runsDir, r);
  t.equal(doc.latest, null, 'a listing writes nothing: latest is not created');
  t.equal(existsSync(path.join(r, 'latest')), false);
  t.match(list.stderr, `runs: there is no latest, and the newest run is ${pass.id}; 'clink-qual runs --repair-latest' points it at the newest`, 'said on stderr, not in the JSON');
  t.same(doc.runs.map((x) => [x.id, x.verdict, x.durationS]), [[pass.id, 'PASS', 376], [aborted.id, null, 200], [fail.id, 'FAIL', 376]]);
  t.same(doc.runs[2]!.counters, { duplicates: 3, gaps: 0, foreign: 0, corrupted: 0, mutations: 0, pastProduced: 0 });
  t.equal(doc.runs[2]!.firstFinding, 'duplicates: event (1, 2050) committed twice');
  t.equal(doc.runs[0]!.recordedId, pass.id, "the run id the evidence records (the fixture's directory is named after it)");
  t.same(Object.keys(doc.runs[0]!).sort(), ['campaign', 'committedDistinct', 'counters', 'dir', 'dirty', 'durationS', 'endedAt', 'endedFrom', 'engine', 'exitCode', 'failureClasses', 'findings', 'firstFinding', 'id', 'mutant', 'produced', 'reasons', 'recordedId', 'report', 'revision', 'seed', 'startedAt', 'timeline', 'verdict', 'warnings'], 'the documented fields');
  t.equal(existsSync(path.join(r, 'index.html')), false, 'runs writes nothing');

  const repair = cliRun(['runs', '--json', '--repair-latest', '--runs-dir', r]);
  t.equal(repair.code, 0, repair.stderr);
  t.equal((JSON.parse(repair.stdout) as { latest: string | null }).latest, pass.id, '--repair-latest points latest at the newest before printing');
  t.match(repair.stderr, `runs: latest -> ${pass.id} (created)`, 'and says so on stderr');

  const table = cliRun(['runs', '--runs-dir', r]);
  t.equal(table.code, 0);
  t.equal(table.stderr, '', 'latest already right: nothing said');
  t.match(table.stdout, /NO VERDICT/);

  const show = cliRun(['runs', 'show', 'latest', '--json', '--runs-dir', r]);
  t.equal(show.code, 0);
  t.equal((JSON.parse(show.stdout) as RunListing).id, pass.id);
  const showFail = cliRun(['runs', 'show', fail.id, '--runs-dir', r]);
  t.equal(showFail.code, 0, 'show exits 0 whatever the verdict');
  t.match(showFail.stdout, `findings   3 in findings.jsonl; first: duplicates: event (1, 2050) committed twice`);
  t.match(showFail.stdout, 'verdict    FAIL (safety, liveness, coverage) (exit 1)', 'the kinds of failure beside the verdict');
  const byPath = cliRun(['runs', 'show', path.join(r, fail.id), '--json']);
  t.equal(byPath.code, 0, 'a run directory given by its path');
  t.equal((JSON.parse(byPath.stdout) as RunListing).verdict, 'FAIL');
  t.equal(cliRun(['runs', 'show', path.join(r, 'scratch')]).code, 254, 'a directory that is no run');
  const missing = cliRun(['runs', 'show', 'no-such-run', '--runs-dir', r]);
  t.equal(missing.code, 254);
  t.match(missing.stderr, `no run 'no-such-run' under ${r}`);
  t.equal(cliRun(['runs', 'show', '--runs-dir', r]).code, 254, 'ID is required');
  t.equal(cliRun(['runs', '--bogus']).code, 254);
  const empty = cliRun(['runs', '--json']);
  t.equal(empty.code, 0, 'no runs folder: an empty list');
  t.same((JSON.parse(empty.stdout) as { runs: unknown[] }).runs, []);
  for (const cmd of [['runs'], ['runs', 'show'], ['runs', 'html']]) {
    const h = cliRun([...cmd, '--help']);
    t.equal(h.code, 0);
    t.match(h.stdout, `Usage: clink-qual ${cmd.join(' ')}`);
    t.match(h.stdout, /Exit codes: 0 /, `${cmd.join(' ')} --help names its exit codes`);
  }
});
