import t from 'tap';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PhaseMark, Verdict } from '../../../lib/evidence.ts';
import { readRunEvidence, runLogTimes, type RunEvidence } from '../../../reports/evidence.ts';
import { renderReport } from '../../../reports/report.ts';
import { runTime, runTimeSection } from '../../../reports/run-time.ts';

const fixtures = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures');
const T = Date.parse('2026-12-05T11:00:00.000Z');
const iso = (s: number) => new Date(T + s * 1000).toISOString();

/** Hand-made evidence: run.log from −0.4 s to +1,300 s, the run started at 0, the gate at +140 s, a 900 s soak, then drain, settle, wrap-up, recount, verdict. */
function run(opts: { drop?: PhaseMark['phase'][]; verdict?: boolean; runLog?: boolean; dropEnds?: PhaseMark['phase'][] } = {}): RunEvidence {
  const marks: [PhaseMark['phase'], number, number][] = [
    ['gate', 140, 250],
    ['soak', 250, 1150],
    ['drain', 1150, 1152.5],
    ['settle', 1152.5, 1160.5],
    ['recount', 1161.2, 1162.2],
  ];
  const phases: PhaseMark[] = [];
  for (const [phase, a, b] of marks) {
    if (opts.drop?.includes(phase)) continue;
    phases.push({ t: iso(a), phase, edge: 'start' });
    if (!opts.dropEnds?.includes(phase)) phases.push({ t: iso(b), phase, edge: 'end' });
  }
  const ev: RunEvidence = { dirName: 'hand', chaos: [], samples: [], ledger: [], checkpoints: [], phases, resources: [], missing: [], unreadable: [], files: [] };
  if (opts.runLog !== false) ev.runLog = { first: { t: iso(-0.4), line: 'preflight: all 8 hosts answer' }, last: { t: iso(1161.2), line: 'recount: a separate process re-reads the settled bucket' } };
  if (opts.verdict !== false) ev.verdict = { startedAt: iso(0), endedAt: iso(1162.3) } as Verdict;
  return ev;
}

const secondsOf = (ev: RunEvidence) => Object.fromEntries(runTime(ev).spans.map((s) => [s.span.split(' (')[0], s.seconds]));
const near = (t: { ok(ok: boolean, message: string): unknown }, got: number | undefined, want: number, what: string) => t.ok(got !== undefined && Math.abs(got - want) < 1e-6, `${what}: ${got} ≈ ${want}`);

t.test('the wall time runs from run.log\'s first line to verdict.json\'s endedAt; the spans add up to the time outside the soak', async (t) => {
  const rt = runTime(run());
  t.equal(rt.first?.from, "run.log's first line", 'the preflight line is before startedAt');
  t.equal(rt.last?.from, "verdict.json's endedAt", 'endedAt is after the last line');
  near(t, rt.wallS, 1162.7, 'wall');
  near(t, rt.soakS, 900, 'soak');
  near(t, rt.outsideS, 262.7, 'outside');
  const s = secondsOf(run());
  near(t, s['Before the gate'], 140.4, 'before the gate');
  near(t, s['The gate'], 110, 'gate');
  near(t, s['The drain'], 2.5, 'drain');
  near(t, s['The settle'], 8, 'settle');
  near(t, s['Wrap-up'], 0.7, 'wrap-up: settle end to recount start');
  near(t, s['The recount'], 1, 'recount');
  near(t, s['After the recount'], 0.1, 'after the recount');
  near(t, rt.uncoveredS, 0, 'nothing left over');
  const md = runTimeSection(run()).join('\n');
  t.match(md, '### Time outside the soak');
  t.match(md, 'The run took 19 min 23 s, from its first record (run.log\'s first line, 2026-12-05T10:59:59.600Z: `preflight: all 8 hosts answer`) to its last (verdict.json\'s endedAt, 2026-12-05T11:19:22.300Z).');
  t.match(md, 'The soak lasted 15 min (phases.jsonl). The time outside the soak: 4 min 23 s.');
  t.match(md, '| Before the gate (preflight, deploy, engine start) | run.log\'s first line | the gate\'s start | 2 min 20 s |');
  t.match(md, '| Wrap-up (logs collected, pending uploads counted, input audited) | the settle\'s end | the recount\'s start | 0.7 s |');
  t.notMatch(md, 'Not in the spans above');
});

t.test('without run.log the run starts at startedAt; without a verdict it ends at run.log\'s last line', async (t) => {
  const noLog = runTime(run({ runLog: false }));
  t.equal(noLog.first?.from, "verdict.json's startedAt");
  near(t, noLog.wallS, 1162.3, 'wall from startedAt');
  near(t, secondsOf(run({ runLog: false }))['Before the gate'], 140, 'before the gate from startedAt');
  const noVerdict = runTime(run({ verdict: false }));
  t.equal(noVerdict.last?.from, "run.log's last line");
  near(t, noVerdict.wallS, 1161.6, 'wall to the last line');
  near(t, secondsOf(run({ verdict: false }))['After the recount'], -1, 'the last line was written before the recount ended');
  t.match(runTimeSection(run({ verdict: false })).join('\n'), '| After the recount (the verdict) | the recount\'s end | run.log\'s last line | −1 s |');
  const neither = runTime(run({ verdict: false, runLog: false }));
  t.equal(neither.wallS, undefined);
  t.equal(neither.outsideS, undefined);
  t.match(runTimeSection(run({ verdict: false, runLog: false })).join('\n'), "The run's wall time is not recorded: no run.log line and no startedAt gives its start.");
});

t.test('a missing phase is "not recorded", never a number; what no span covers is said', async (t) => {
  // No settle (a drain that did not converge): the wrap-up runs from the drain's end.
  const s = secondsOf(run({ drop: ['settle'] }));
  t.equal(s['The settle'], undefined);
  near(t, s['Wrap-up'], 8.7, "wrap-up from the drain's end");
  const noSettle = runTimeSection(run({ drop: ['settle'] })).join('\n');
  t.match(noSettle, '| The settle | not recorded | not recorded | not recorded |');
  t.match(noSettle, "| Wrap-up (logs collected, pending uploads counted, input audited) | the drain's end | the recount's start | 8.7 s |");
  t.notMatch(noSettle, 'Not in the spans above', 'the wrap-up covers the time the settle would have');
  // No drain marks: its 2.5 s is not in any span, and is given as such.
  const noDrain = run({ drop: ['drain'] });
  near(t, runTime(noDrain).uncoveredS, 2.5, 'the drain is left over');
  t.match(runTimeSection(noDrain).join('\n'), '| Not in the spans above |  |  | 2.5 s |');
  // A recount that never ended: neither it nor what follows has a length.
  const open = secondsOf(run({ dropEnds: ['recount'] }));
  t.equal(open['The recount'], undefined);
  t.equal(open['After the recount'], undefined);
});

t.test('an aborted run: a soak with no end has no length, the rest is said; no phases at all says so', async (t) => {
  const aborted = run({ drop: ['drain', 'settle', 'recount'], dropEnds: ['soak'], verdict: false });
  const rt = runTime(aborted);
  t.equal(rt.soakS, undefined);
  t.equal(rt.outsideS, undefined);
  near(t, secondsOf(aborted)['The gate'], 110, 'the gate still has its length');
  const md = runTimeSection(aborted).join('\n');
  t.match(md, "The soak's length is not recorded (phases.jsonl has the soak's start and no end). The time outside the soak is therefore not stated.");
  t.match(md, '| The drain | not recorded | not recorded | not recorded |');
  const bare = { ...run(), phases: [] };
  t.same(runTimeSection(bare).slice(2, 5), [
    "The run took 19 min 23 s, from its first record (run.log's first line, 2026-12-05T10:59:59.600Z: `preflight: all 8 hosts answer`) to its last (verdict.json's endedAt, 2026-12-05T11:19:22.300Z).",
    '',
    'Where it went is not available: `phases.jsonl` records no phase (the run predates phase marks, or it stopped before the gate).',
  ]);
});

t.test("run.log's times: the first and last stamped lines; a line without a stamp continues a message", async (t) => {
  t.same(runLogTimes('2026-12-05T11:01:00.097Z preflight: ok\n  a continued line\n2026-12-05T11:20:25.187Z recount: a separate process\nno stamp at the end\n'), {
    first: { t: '2026-12-05T11:01:00.097Z', line: 'preflight: ok' },
    last: { t: '2026-12-05T11:20:25.187Z', line: 'recount: a separate process' },
  });
  t.equal(runLogTimes(''), undefined);
  t.equal(runLogTimes('no stamp\n2026-13-45T99:99:99Z not a time\n'), undefined, 'a stamp that is not a time is no stamp');
});

t.test('the report: every fixture with phases has the subsection, read from its run.log, phases and verdict', async (t) => {
  for (const name of ['run-pass', 'run-fail', 'run-aborted']) {
    const dir = path.join(fixtures, name);
    const ev = readRunEvidence(dir);
    t.ok(ev.phases.length, `${name} has phases`);
    const firstLine = readFileSync(path.join(dir, 'run.log'), 'utf8').split('\n')[0]!;
    t.equal(ev.runLog?.first.t, firstLine.slice(0, 24), `${name}: run.log read`);
    const md = renderReport(dir);
    const at = md.indexOf('\n### Time outside the soak\n');
    t.ok(at > md.indexOf('\n## Resources\n') && at < md.indexOf('\n## Claim boundaries\n'), `${name}: in the Resources section`);
    t.match(md, `from its first record (run.log's first line, ${firstLine.slice(0, 24)}`);
  }
  const pass = runTime(readRunEvidence(path.join(fixtures, 'run-pass')));
  near(t, pass.outsideS, pass.spans.reduce((a, s) => a + (s.seconds ?? 0), 0), 'run-pass: the spans add up to the time outside the soak');
  t.match(renderReport(path.join(fixtures, 'run-aborted')), "The soak's length is not recorded (phases.jsonl has the soak's start and no end).");
  // Without run.log, a stored run still renders: the start is the verdict's startedAt.
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'clink-qual-run-time-'));
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
  const copy = path.join(tmp, 'run-pass');
  cpSync(path.join(fixtures, 'run-pass'), copy, { recursive: true });
  rmSync(path.join(copy, 'run.log'));
  t.match(renderReport(copy), "from its first record (verdict.json's startedAt, 2026-08-21T10:15:00.000Z)");
  rmSync(path.join(copy, 'phases.jsonl'));
  t.match(renderReport(copy), 'Where it went is not available: `phases.jsonl` records no phase');
});
