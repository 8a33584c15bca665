/**
 * How the verdict reads store-tamper faults: the harness's own mutations on the keys it
 * tampered with are reported apart and not counted; the same mutation on another key, or
 * outside the window, counts; an engine that accepted a foreign object fails the run.
 */
import t from 'tap';
import { acceptedForeign, attributeTamper, tamperWindows } from '../../../../campaigns/runner/tamper.ts';
import { decideVerdict, type VerdictInput } from '../../../../campaigns/runner/verdict.ts';
import { zeroCounters, type ChaosRecord, type LedgerEntry } from '../../../../lib/evidence.ts';

const K = 'runs/r/subtask=1/epoch=2/chk=12.jsonl';
const OTHER = 'runs/r/subtask=0/epoch=2/chk=12.jsonl';

function chaos(reaction: string): ChaosRecord[] {
  return [
    { t: '2026-12-03T07:00:00.000Z', faultId: 'f004', kind: 'store-tamper', phase: 'planned' } as ChaosRecord,
    {
      t: '2026-12-03T07:00:01.000Z',
      faultId: 'f004',
      kind: 'store-tamper',
      phase: 'landed',
      evidence: { variant: 'foreign-put', keys: [K], at: '2026-12-03T07:00:00.500Z', before: { etag: 'orig-1' }, after: { etag: 'foreign', size: 9 } },
    } as ChaosRecord,
    {
      t: '2026-12-03T07:00:30.000Z',
      faultId: 'f004',
      kind: 'store-tamper',
      phase: 'healed',
      evidence: { key: K, restoredEtag: 'orig-1', restoredAt: '2026-12-03T07:00:29.000Z', reaction },
    } as ChaosRecord,
  ];
}

const entry = (key: string, etag: string, firstSeen: string, change?: LedgerEntry['change'], at?: string): LedgerEntry => ({
  key,
  etag,
  size: 9,
  lines: 2,
  firstSeen,
  ...(change ? { change, at } : {}),
});

t.test('windows from chaos records', async (t) => {
  const w = tamperWindows(chaos('integrity-stop'));
  t.equal(w.length, 1);
  t.same(w[0], { faultId: 'f004', variant: 'foreign-put', keys: [K], from: '2026-12-03T07:00:00.500Z', healedAt: '2026-12-03T07:00:29.000Z', originalEtag: 'orig-1', reaction: 'integrity-stop' });
  t.same(acceptedForeign(w), []);
  t.equal(acceptedForeign(tamperWindows(chaos('accepted'))).length, 1);
});

t.test('attribution: inside the window, and the restore seen later, are the harness\'s', async (t) => {
  const w = tamperWindows(chaos('integrity-stop'));
  const ledger = [
    entry(K, 'orig-1', '2026-12-03T06:59:50.000Z'),
    entry(K, 'foreign', '2026-12-03T06:59:50.000Z', 'changed', '2026-12-03T07:00:05.000Z'),
    entry(K, 'orig-1', '2026-12-03T06:59:50.000Z', 'changed', '2026-12-03T07:00:35.000Z'), // the restore, seen by the next pass
    entry(K, 'third', '2026-12-03T06:59:50.000Z', 'changed', '2026-12-03T07:01:00.000Z'), // after the heal, not the original: the engine's
    entry(OTHER, 'o', '2026-12-03T06:59:50.000Z'),
    entry(OTHER, 'o2', '2026-12-03T06:59:50.000Z', 'changed', '2026-12-03T07:00:05.000Z'), // another key: the engine's
  ];
  const a = attributeTamper(w, ledger);
  t.equal(a.oracleMutations, 2);
  t.equal(a.recountMutations, 0, 'first judged before the tamper');
  t.equal(a.findings.length, 2);
});

t.test('a key first judged while tampered: the recount\'s mutation on it is the harness\'s', async (t) => {
  const w = tamperWindows(chaos('integrity-stop'));
  const a = attributeTamper(w, [entry(K, 'foreign', '2026-12-03T07:00:02.000Z'), entry(K, 'orig-1', '2026-12-03T07:00:02.000Z', 'changed', '2026-12-03T07:00:31.000Z')]);
  t.equal(a.recountMutations, 1);
  t.equal(a.oracleMutations, 1);
  const before = attributeTamper(w, [entry(K, 'orig-1', '2026-12-03T07:00:02.000Z')]);
  t.equal(before.recountMutations, 0, 'judged in the window but with the original ETag (a tamper not yet visible): nothing to excuse');
});

function input(over: Partial<VerdictInput>): VerdictInput {
  return {
    runId: 'r',
    startedAt: 'a',
    endedAt: 'b',
    aborted: false,
    gate: { passed: true, conditions: [] },
    chaos: [],
    mandatoryPoints: [],
    oracle: zeroCounters(),
    recount: { t: 'x', objects: 1, lines: 1, distinctEvents: 10, bytes: 1, counters: zeroCounters(), perPartition: [], durationS: 1 },
    produced: 10,
    drainConverged: true,
    pendingUploads: 0,
    ...over,
  };
}

t.test('verdict: harness mutations do not fail the run; the engine\'s do; an accepted foreign object does', async (t) => {
  const ledger = [entry(K, 'orig-1', '2026-12-03T06:59:50.000Z'), entry(K, 'foreign', '2026-12-03T06:59:50.000Z', 'changed', '2026-12-03T07:00:05.000Z')];
  const oracle = { ...zeroCounters(), mutations: 1 };
  const pass = decideVerdict(input({ chaos: chaos('integrity-stop'), ledger, oracle }));
  t.equal(pass.verdict, 'PASS', pass.reasons.join('; '));
  t.equal(pass.oracle.mutations, 0, 'not counted against the engine');
  t.same(pass.tamper?.harnessMutations, { oracle: 1, recount: 0 });
  t.same(pass.tamper?.reactions, [{ faultId: 'f004', variant: 'foreign-put', keys: [K], reaction: 'integrity-stop' }]);
  t.ok(pass.warnings.some((w) => w.startsWith('harness, not engine:')), 'reported apart');

  const engineMut = decideVerdict(input({ chaos: chaos('integrity-stop'), ledger, oracle: { ...zeroCounters(), mutations: 2 } }));
  t.equal(engineMut.verdict, 'FAIL', 'a second mutation is the engine\'s');
  t.same(engineMut.reasons, ['oracle: mutations = 1', 'the recount disagrees with the oracle (oracle vs recount: mutations 1 vs 0)']);

  const accepted = decideVerdict(input({ chaos: chaos('accepted'), ledger, oracle }));
  t.equal(accepted.verdict, 'FAIL');
  t.equal(accepted.tamper?.acceptedForeign, 1);
  t.match(accepted.reasons.join('\n'), /engine accepted a foreign object: store-tamper f004/);

  const none = decideVerdict(input({}));
  t.equal(none.tamper, undefined, 'no store-tamper: no tamper section');
});

t.test('kill table: a mutant caught by acceptedForeign', async (t) => {
  const { isCaught } = await import('../../../../campaigns/runner/kill-table.ts');
  const m = { name: 'trust-existing-object', mechanism: 'm', caughtBy: ['acceptedForeign' as const] };
  const base = { verdict: 'FAIL' as const, recount: zeroCounters() };
  t.ok(isCaught(m, { ...base, tamper: { reactions: [], harnessMutations: { oracle: 0, recount: 0 }, acceptedForeign: 1 } }));
  t.notOk(isCaught(m, { ...base, tamper: { reactions: [], harnessMutations: { oracle: 0, recount: 0 }, acceptedForeign: 0 } }), 'FAIL for another reason is not a catch');
  t.notOk(isCaught(m, base));
});
