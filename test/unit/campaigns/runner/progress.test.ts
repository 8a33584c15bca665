/** The operator's progress line: a failed heal is shown, not folded into the healed count; the ETA, the soak left and the next fault. */
import t from 'tap';
import { Progress, etaS, formatProgressLine, nextFault, progressTiming, settleBoundS, shortDuration, soakLeftS, type ProgressTiming } from '../../../../campaigns/runner/progress.ts';
import { zeroCounters, type PlannedFault } from '../../../../lib/evidence.ts';

function capture() {
  const lines: string[] = [];
  const out = { isTTY: false, columns: 200, write: (s: string) => (lines.push(s), true) } as unknown as NodeJS.WriteStream;
  return { lines, progress: new Progress(out) };
}

t.test('heal failures appear in the progress line', async (t) => {
  const { lines, progress } = capture();
  progress.update({ phase: 'soak', produced: 10, committed: 5, checkpoints: 2, landed: 3, healed: 2, healFailed: 1, faultsPlanned: 4, counters: zeroCounters() });
  t.equal(lines.length, 1);
  t.match(lines[0], /faults 3\/4 landed 2 healed 1 HEAL FAILED \|/);
});

t.test('no heal failure: the line does not mention one', async (t) => {
  const { lines, progress } = capture();
  progress.update({ phase: 'soak', produced: 10, committed: 5, checkpoints: 2, landed: 3, healed: 3, healFailed: 0, faultsPlanned: 4, counters: zeroCounters() });
  t.notMatch(lines[0], /HEAL FAILED/);
});

// The ETA, the soak left and the next fault, from a fake state at a fixed time.
const T0 = Date.parse('2026-12-03T10:00:00Z');
const plan: PlannedFault[] = [
  { id: 'f001', kind: 'worker-kill', atS: 10, target: 'worker-1' },
  { id: 'f002', kind: 'protocol-point', atS: 25, point: 'sink.after-commit' },
  { id: 'f003', kind: 'partition', atS: 100, durationS: 10 },
];
// soak 300 s, gate 60 s, drain 45 s, recount 30 s, checkpoints every 6 s (settle: max(30, 24) = 30 s).
const campaign = { workload: { soakS: 300, checkpointIntervalS: 6 }, gate: { deadlineS: 60 }, deadlines: { drainS: 45, recountS: 30 } };
const state = (phase: string, timing: ProgressTiming) => ({ phase, produced: 10, committed: 5, checkpoints: 2, landed: 1, healed: 1, healFailed: 0, faultsPlanned: 3, counters: zeroCounters(), timing });

t.test('durations for a countdown: compact, rounded up', async (t) => {
  t.equal(shortDuration(0), '0s');
  t.equal(shortDuration(9.2), '10s');
  t.equal(shortDuration(75), '1m15s');
  t.equal(shortDuration(3725), '1h02m05s');
  t.equal(shortDuration(-3), '0s');
  t.equal(settleBoundS(6), 30);
  t.equal(settleBoundS(20), 80);
});

t.test('during the soak: time left, ETA (soak left + drain + settle + recount) and the next fault with its point', async (t) => {
  // 30 s into the soak: f001 and f002 are behind, f003 is 70 s ahead.
  const timing = progressTiming(campaign, plan, T0, T0);
  const now = T0 + 30_000;
  t.equal(soakLeftS('soak', timing, now), 270);
  t.equal(etaS('soak', timing, now), 270 + 45 + 30 + 30);
  t.same(nextFault('soak', timing, now), { id: 'f003', kind: 'partition', inS: 70, atS: 100 });
  const line = formatProgressLine(state('soak', timing), '01:40', now);
  t.equal(line, '[01:40] soak (4m30s left, ETA ≤6m15s) | produced 10 committed 5 | checkpoints 2 | faults 1/3 landed 1 healed, next f003 partition in 1m10s | counters 0');
  // 20 s in: the protocol point is next, named.
  t.match(formatProgressLine(state('soak', timing), '01:30', T0 + 20_000), /next f002 protocol-point sink\.after-commit in 5s \|/);
  // Past the last fault's time.
  t.match(formatProgressLine(state('soak', timing), '03:00', T0 + 150_000), /faults 1\/3 landed 1 healed, no fault left to land \|/);
});

t.test('before the soak: the gate deadline left counts, and the first fault is given by its offset into the soak', async (t) => {
  // The gate began 20 s ago: 40 s of its deadline left.
  const timing = progressTiming(campaign, plan, T0 - 20_000, undefined);
  t.equal(etaS('gate', timing, T0), 40 + 300 + 45 + 30 + 30);
  t.equal(soakLeftS('gate', timing, T0), undefined);
  t.equal(formatProgressLine(state('gate', timing), '00:50', T0), '[00:50] gate (ETA ≤7m25s) | produced 10 committed 5 | checkpoints 2 | faults 1/3 landed 1 healed, first f001 worker-kill at soak+10s | counters 0');
  // The gate over its deadline: it counts as nothing left, not negative.
  t.equal(etaS('gate', progressTiming(campaign, plan, T0 - 90_000, undefined), T0), 300 + 45 + 30 + 30);
});

t.test('after the soak: each phase counts what is left of its own deadline and the later ones; no next fault', async (t) => {
  const at = (phase: string, sinceS: number) => etaS(phase, progressTiming(campaign, plan, T0 - sinceS * 1000, T0 - 400_000), T0);
  t.equal(at('drain', 5), 40 + 30 + 30);
  t.equal(at('settle', 10), 20 + 30);
  t.equal(at('wrap-up', 10), 30);
  t.equal(at('recount', 12), 18);
  t.equal(at('report', 1), undefined);
  const timing = progressTiming(campaign, plan, T0 - 5000, T0 - 400_000);
  t.equal(nextFault('drain', timing, T0), undefined);
  const line = formatProgressLine(state('drain', timing), '07:00', T0);
  t.match(line, /^\[07:00\] drain \(ETA ≤1m40s\) \| /);
  t.match(line, /landed 1 healed \| counters 0$/, 'no next fault after the soak');
  t.equal(formatProgressLine(state('report', timing), '08:00', T0).split(' | ')[0], '[08:00] report', 'no ETA while the report is written');
});

t.test('without timing (an older caller), the line is the plain one', async (t) => {
  const { timing: _t, ...s } = state('soak', progressTiming(campaign, plan, T0, T0));
  t.equal(formatProgressLine(s, '00:10', T0), '[00:10] soak | produced 10 committed 5 | checkpoints 2 | faults 1/3 landed 1 healed | counters 0');
});

t.test('the live line carries the timing (Progress.update)', async (t) => {
  const { lines, progress } = capture();
  progress.update(state('soak', progressTiming(campaign, plan, Date.now(), Date.now())));
  t.match(lines[0], /soak \(\d+m\d+s left, ETA ≤\d+m\d+s\) \|.*next f001 worker-kill in \d+s/);
});
