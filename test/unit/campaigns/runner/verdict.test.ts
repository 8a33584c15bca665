import t from 'tap';
import { decideVerdict, uncoveredPoints, type VerdictInput } from '../../../../campaigns/runner/verdict.ts';
import { normalizeVerdictName, VERDICT_SCHEMA_VERSION, zeroCounters, type ChaosRecord, type Recount } from '../../../../lib/evidence.ts';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readRunEvidence } from '../../../../reports/evidence.ts';
import { readRunListing } from '../../../../reports/runs-list.ts';

const recount = (over: Partial<Recount> = {}): Recount => ({
  t: '2026-12-02T00:00:00Z', objects: 10, lines: 1000, distinctEvents: 1000, bytes: 1, counters: zeroCounters(), perPartition: [], durationS: 1, ...over,
});
const rec = (faultId: string, phase: ChaosRecord['phase'], point?: string): ChaosRecord => ({ t: 'x', faultId, kind: point ? 'protocol-point' : 'worker-kill', phase, ...(point ? { point } : {}) });
const base = (over: Partial<VerdictInput> = {}): VerdictInput => ({
  runId: 'r', startedAt: 'a', endedAt: 'b', aborted: false,
  gate: { passed: true, conditions: [{ name: 'input flowing', passed: true, evidence: 'x' }] },
  chaos: [rec('f1', 'landed', 'p1'), rec('f1', 'recovered', 'p1')],
  mandatoryPoints: ['p1'], oracle: zeroCounters(), recount: recount(), produced: 1000, drainConverged: true, pendingUploads: 3, ...over,
});

t.test('a clean run passes with exit 0', async (t) => {
  const v = decideVerdict(base());
  t.equal(v.verdict, 'PASS');
  t.equal(v.exitCode, 0);
  t.same(v.reasons, []);
  t.equal(v.recountAgrees, true);
});

t.test('any counter above zero fails, named with its value', async (t) => {
  const c = { ...zeroCounters(), duplicates: 2 };
  const v = decideVerdict(base({ oracle: c, recount: recount({ counters: c }) }));
  t.equal(v.verdict, 'FAIL');
  t.equal(v.exitCode, 1);
  t.ok(v.reasons.includes('recount: duplicates = 2'));
  t.ok(v.reasons.includes('oracle: duplicates = 2'));
});

t.test('a recount that disagrees with the oracle fails', async (t) => {
  const v = decideVerdict(base({ oracle: { ...zeroCounters(), gaps: 1 } }));
  t.equal(v.verdict, 'FAIL');
  t.ok(v.reasons.includes('the recount disagrees with the oracle (oracle vs recount: gaps 1 vs 0)'), v.reasons.join('; '));
});

t.test('a disagreement after a drain that did not converge says why it is expected', async (t) => {
  const v = decideVerdict(base({ recount: recount({ counters: { ...zeroCounters(), gaps: 40 } }), drainConverged: false }));
  t.equal(v.verdict, 'FAIL');
  const r = v.reasons.find((x) => x.startsWith('the recount disagrees'));
  t.match(r!, /gaps 0 vs 40\), as expected when the drain did not converge: the live oracle counts a gap only below/);
  t.ok(v.reasons.includes('the drain did not converge before its deadline'), 'the drain is still a reason of its own');
});

t.test('a drain that ended early (drain-stall.ts) says so in its reason, still a liveness one, beside the safety ones', async (t) => {
  const why = 'ended early, the run already shown wrong by the oracle and nothing committed for 15.1 s over 3 or more completed checkpoints (25732 of 29336 committed)';
  const v = decideVerdict(base({ oracle: { ...zeroCounters(), gaps: 3604 }, recount: recount({ counters: { ...zeroCounters(), gaps: 3604 } }), drainConverged: false, drainStalled: why }));
  t.equal(v.verdict, 'FAIL');
  t.ok(v.reasons.includes(`the drain did not converge: ${why}`), v.reasons.join('; '));
  t.notOk(v.reasons.includes('the drain did not converge before its deadline'), 'not the deadline: it did not wait for it');
  t.equal(v.drainStalled, why, 'verdict.json says why, for the report');
  t.notOk('drainStalled' in decideVerdict(base({ drainConverged: false })), 'absent when the drain waited its deadline');
  const classes = Object.fromEntries((v.classifiedReasons ?? []).map((r) => [r.reason, r.class]));
  t.equal(classes[`the drain did not converge: ${why}`], 'liveness');
  t.equal(classes['oracle: gaps = 3604'], 'safety', 'the oracle still shows it wrong');
});

t.test('an uncovered mandatory point, a missing recovery, a drain that did not converge: each listed', async (t) => {
  const v = decideVerdict(base({ mandatoryPoints: ['p1', 'p2'], chaos: [rec('f1', 'landed', 'p1'), rec('f1', 'recovered', 'p1'), rec('f2', 'landed'), rec('f2', 'not-recovered')], drainConverged: false }));
  t.equal(v.verdict, 'FAIL');
  t.ok(v.reasons.includes('mandatory protocol point not covered: p2'));
  t.ok(v.reasons.includes('fault f2 had no recovery within its deadline'));
  t.ok(v.reasons.includes('the drain did not converge before its deadline'));
});

t.test('a fired point that did not recover does not count as covered', async (t) => {
  t.same(uncoveredPoints([rec('f1', 'landed', 'p1'), rec('f1', 'not-recovered', 'p1')], ['p1']), ['p1']);
});

t.test('fewer distinct events than produced fails even with zero counters', async (t) => {
  const v = decideVerdict(base({ recount: recount({ distinctEvents: 990 }) }));
  t.equal(v.verdict, 'FAIL');
  t.match(v.reasons.join('\n'), /990 distinct events committed of 1000 produced/);
});

t.test('gate failure and abort', async (t) => {
  const g = decideVerdict(base({ gate: { passed: false, conditions: [{ name: 'sink confirmed', passed: false, evidence: 'no open line' }] } }));
  t.equal(g.verdict, 'GATE_FAILED');
  t.equal(g.exitCode, 1);
  t.match(g.reasons[0], /sink confirmed/);
  const a = decideVerdict(base({ aborted: true, abortReason: 'SIGINT' }));
  t.equal(a.verdict, 'ABORTED');
  t.equal(a.exitCode, 2);
});

t.test('a fault that did not land is a warning, not survived', async (t) => {
  const v = decideVerdict(base({ chaos: [...base().chaos, rec('f3', 'not-landed')] }));
  t.equal(v.verdict, 'PASS');
  t.same(v.warnings, ['fault f3 did not land and is not counted as survived']);
});

t.test('no idle checkpoint after the drain is a warning, not a failure', async (t) => {
  const v = decideVerdict(base({ settleWarning: 'no idle checkpoint completed within 30 s after the drain' }));
  t.equal(v.verdict, 'PASS');
  t.ok(v.warnings.includes('settle: no idle checkpoint completed within 30 s after the drain'));
  t.same(decideVerdict(base()).warnings, []);
});

t.test('a failed heal makes an otherwise clean run UNKNOWN (exit 2), and does not hide a FAIL', async (t) => {
  const chaos = [...base().chaos, rec('f2', 'landed'), rec('f2', 'heal-failed')];
  const v = decideVerdict(base({ chaos }));
  t.equal(v.verdict, 'UNKNOWN');
  t.equal(v.exitCode, 2);
  t.match(v.reasons.join('\n'), /fault f2 could not be healed/);
  const c = { ...zeroCounters(), duplicates: 1 };
  const f = decideVerdict(base({ chaos, oracle: c, recount: recount({ counters: c }) }));
  t.equal(f.verdict, 'FAIL');
  t.equal(f.exitCode, 1);
  t.match(f.reasons.join('\n'), /fault f2 could not be healed/);
});

t.test('verdict.json schema 3 (2: what it is about, and GATE_FAILED; 3: classified reasons); old files still read', async (t) => {
  const subject = { campaign: 'quick', seed: 'quick-1', engine: { name: 'clink', mutant: 'none' }, revision: { revision: 'abc123def456', dirty: false } };
  const v = decideVerdict(base({ subject }));
  t.equal(v.schemaVersion, VERDICT_SCHEMA_VERSION);
  t.equal(v.schemaVersion, 3);
  t.same([v.campaign, v.seed, v.engine, v.revision], [subject.campaign, subject.seed, subject.engine, subject.revision]);
  t.equal(decideVerdict(base()).campaign, undefined, 'no subject given: none written');
  t.equal(normalizeVerdictName('GATE FAILED'), 'GATE_FAILED', "a schema-1 file's gate failure");
  t.equal(normalizeVerdictName('FAIL'), 'FAIL');
  // An old verdict.json (schema 1, 'GATE FAILED') in a run directory reads as GATE_FAILED.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cq-verdict-v1-'));
  cpSync(path.join(import.meta.dirname, '../../../fixtures/run-fail'), dir, { recursive: true });
  const vf = path.join(dir, 'verdict.json');
  const old = JSON.parse(readFileSync(vf, 'utf8'));
  delete old.schemaVersion;
  writeFileSync(vf, JSON.stringify({ ...old, verdict: 'GATE FAILED' }));
  t.equal(readRunEvidence(dir).verdict?.verdict, 'GATE_FAILED');
  t.equal(readRunListing(dir).verdict, 'GATE_FAILED');
});

t.test('a mutant soak that ended early: FAIL with its counters stays FAIL (never UNKNOWN for the faults not started), its early end and each fault not started are warnings in words', async (t) => {
  const c = { ...zeroCounters(), duplicates: 3160 };
  const early = { endedAtS: 31.4, plannedS: 70, caughtAtS: 24.2, counter: 'duplicates' as const, value: 12, sampleT: '2026-12-06T00:00:25.000Z', notStarted: ['f3'] };
  const notStarted: ChaosRecord = { ...rec('f3', 'not-landed'), detail: 'not started: the soak ended early', evidence: { notStarted: true } };
  const v = decideVerdict(base({ oracle: c, recount: recount({ counters: c }), chaos: [...base().chaos, notStarted, rec('f4', 'not-landed')], soakEndedEarly: early, drainConverged: false, drainStalled: 'ended early' }));
  t.equal(v.verdict, 'FAIL');
  t.equal(v.exitCode, 1);
  t.ok(v.reasons.includes('recount: duplicates = 3160'), 'the counter is still the reason');
  t.same(v.soakEndedEarly, early, 'verdict.json records when and why');
  t.same(v.warnings, [
    "soak: ended early at 31.4 s of its planned 70 s, the mutant already caught: the oracle's sample at 2026-12-06T00:00:25.000Z showed duplicates = 12 (seen 24.2 s into the soak), and every fault planned up to then had ended; 1 planned fault was not started (f3)",
    'fault f3 was not started (the soak ended early: the mutant was already caught) and is not counted as survived',
    'fault f4 did not land and is not counted as survived',
  ]);
  t.equal(decideVerdict(base()).soakEndedEarly, undefined, 'absent on a run whose soak ran its length');
});
