/**
 * The campaign's phases without a rig: the gate's conditions in order (a failed one leaves
 * the later ones "not reached", the gate fault's outcome recorded), the idle-checkpoint wait,
 * and the run context the phases share (phase marks, the fault record, abort, soak and settle
 * skipped when the gate failed or the drain did not converge).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import type { ChaosController } from '../../../../chaos/controller.ts';
import { RunContext, type RunInputs } from '../../../../campaigns/runner/context.ts';
import { drain, runGate, settle, soak, waitCheckpoints } from '../../../../campaigns/runner/phases.ts';
import { Progress } from '../../../../campaigns/runner/progress.ts';
import type { EngineHealth } from '../../../../engine/engine.ts';
import type { PlannedFault } from '../../../../lib/evidence.ts';
import { RunStore } from '../../../../lib/run-store.ts';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'cq-phases-'));
t.teardown(() => rmSync(tmp, { recursive: true, force: true }));

const health = (n: number, running = true): EngineHealth => ({ running, epoch: 2, completedCheckpoints: n, lastCompletedCheckpointId: n, lastCompletedAt: '2026-12-04T00:00:00.000Z' });
const engine = (workers: string[], lines: { host: string; line: string }[]) => ({
  sinkFamily: 's3_2pc_sink',
  sinkOpenLines: async () => lines,
  processes: async () => workers.map((host) => ({ host, role: 'worker' as const, pid: 1 })),
});
const controller = (landed: boolean, recovered: boolean) => ({
  calls: [] as PlannedFault[],
  async runOne(f: PlannedFault) {
    this.calls.push(f);
    return { fault: f, landed, healed: landed, recovered, ...(recovered ? { recoveryS: 4.2 } : { reason: 'no checkpoint' }) };
  },
});
const quiet = () => {};

t.test('gate: every condition shown, the gate fault landed and recovered', async (t) => {
  const c = controller(true, true);
  const g = await runGate({ gate: { deadlineS: 5, fault: 'worker-kill' } } as never, engine(['w1', 'w2'], [{ host: 'w1', line: 'open: family=s3_2pc_sink a' }, { host: 'w2', line: 'open: family=s3_2pc_sink b' }]) as never, c, () => 10, () => 3, () => health(2), new AbortController().signal, quiet);
  t.equal(g.passed, true);
  t.same(g.conditions.map((x) => x.passed), [true, true, true, true, true, true]);
  t.match(g.conditions[3]!.evidence, /w1: open: family=s3_2pc_sink a \| w2: open/);
  t.equal(c.calls[0]!.id, 'g001', 'the gate fault is g001');
  t.match(g.conditions[5]!.evidence, /4\.2 s after the heal/);
});

t.test('gate: a worker without the sink line fails that condition and leaves the rest not reached', async (t) => {
  const c = controller(true, true);
  const g = await runGate({ gate: { deadlineS: 2, fault: 'worker-kill' } } as never, engine(['w1', 'w2'], [{ host: 'w1', line: 'open: family=s3_2pc_sink a' }]) as never, c, () => 10, () => 3, () => health(2), new AbortController().signal, quiet);
  t.equal(g.passed, false);
  t.same(g.conditions.map((x) => [x.name.slice(0, 12), x.passed]), [['input flowin', true], ['job running ', true], ['objects comm', true], ['s3_2pc_sink ', false], ['a fault land', false], ['a completed ', false]]);
  t.match(g.conditions[3]!.evidence, /not shown within 2 s/);
  t.equal(g.conditions[4]!.evidence, 'not reached: an earlier condition failed');
  t.equal(c.calls.length, 0, 'no gate fault without the conditions');
});

t.test('gate: a fault that lands without recovery fails the last condition', async (t) => {
  const g = await runGate({ gate: { deadlineS: 5, fault: 'worker-kill' } } as never, engine(['w1'], [{ host: 'w1', line: 'family=s3_2pc_sink' }]) as never, controller(true, false), () => 10, () => 3, () => health(2), new AbortController().signal, quiet);
  t.equal(g.passed, false);
  t.same(g.conditions.slice(4).map((x) => x.passed), [true, false]);
  t.match(g.conditions[5]!.evidence, /no recovery: no checkpoint/);
});

t.test('waitCheckpoints: n more than at the start, or null past the deadline', async (t) => {
  let n = 5;
  const grows = { health: async () => health(n++) };
  t.equal(await waitCheckpoints(grows, 2, 10_000, new AbortController().signal), 7);
  const flat = { health: async () => health(5) };
  t.equal(await waitCheckpoints(flat, 1, 1200, new AbortController().signal), null);
  let calls = 0;
  const down = { health: async () => (calls++ < 2 ? Promise.reject(new Error('coordinator down')) : health(10 + calls)) };
  t.equal(typeof (await waitCheckpoints(down, 1, 10_000, new AbortController().signal)), 'number', 'a failing health is polled again');
});

function context(dir: string, signal?: AbortSignal, drainS = 5): RunContext {
  const store = new RunStore(path.join(tmp, dir), { fresh: true });
  const inputs = {
    runId: dir,
    campaign: { workload: { soakS: 60, checkpointIntervalS: 1 }, gate: { deadlineS: 5 }, deadlines: { drainS, recountS: 5 } },
    engine: { health: async () => health(1), disarmFaultPoints: async () => {} },
    rig: { hosts: [] },
    remote: () => {
      throw new Error('no host');
    },
    plan: [{ id: 'f001', kind: 'worker-kill', atS: 1 }],
    store,
    progress: new Progress({ isTTY: false, write: () => true } as never),
    log: quiet,
  } as unknown as RunInputs;
  return new RunContext(inputs, () => ({ healActive: async () => {} }) as unknown as ChaosController, signal);
}

t.test('context: phase marks, the fault record, abort from outside', async (t) => {
  const outside = new AbortController();
  const ctx = context('ctx1', outside.signal);
  t.teardown(() => ctx.close());
  ctx.enterPhase('gate', Date.parse('2026-12-04T00:00:00Z'));
  ctx.enterPhase('soak', Date.parse('2026-12-04T00:01:00Z'));
  const marks = readFileSync(ctx.run.store.path('phases'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  t.same(marks.map((m) => `${m.phase}:${m.edge}`), ['gate:start', 'gate:end', 'soak:start'], 'deploy is not a marked phase');
  ctx.record({ faultId: 'f001', kind: 'worker-kill', phase: 'landed' } as never);
  t.equal(ctx.chaos.length, 1);
  t.equal(ctx.run.store.lines('chaos').values[0]!.faultId, 'f001');
  t.doesNotThrow(() => ctx.throwIfAborted());
  outside.abort('operator');
  t.equal(ctx.aborted, true);
  t.throws(() => ctx.throwIfAborted(), /operator/);
});

t.test('soak is skipped after a failed gate; settle is skipped after a drain that did not converge', async (t) => {
  const ctx = context('ctx2');
  t.teardown(() => ctx.close());
  ctx.out.gate = { passed: false, conditions: [] };
  await soak(ctx);
  t.equal(ctx.out.soakStartMs, undefined, 'no soak');
  ctx.sampler = { last: { counters: { duplicates: 3 } } } as never;
  await settle(ctx);
  t.equal(ctx.phase, 'deploy', 'settle was not entered');
  t.same(ctx.out.oracleCounters, { duplicates: 3 }, 'the oracle counters are still taken from the last sample');
});

t.test('failWith: the error is kept and aborts the run', async (t) => {
  const ctx = context('ctx3');
  t.teardown(() => ctx.close());
  ctx.failWith(new Error('broker unreachable'));
  t.equal(ctx.aborted, true);
  t.equal(ctx.abortReason, 'error: broker unreachable');
  t.match((ctx.out.fatal as Error).message, /broker unreachable/);
});

/** A drain over a fake producer and sampler: the committed count climbs by `step` a sample. */
function drainWith(ctx: RunContext, target: number, step: number, stuckAt?: number) {
  let events = 0;
  let n = 0;
  ctx.producer = { total: target, stop: async () => {}, produced: () => [target] } as never;
  ctx.sampler = {
    stop: async () => {},
    stuckError: new Error('listing timed out'),
    get last() {
      return { events };
    },
    sample: async () => {
      n++;
      events = Math.min(target, events + step);
      return { events, stuck: stuckAt !== undefined && n >= stuckAt };
    },
  } as never;
}

t.test('drain: converges when everything produced is committed, and writes produced.json', async (t) => {
  const ctx = context('drain1');
  t.teardown(() => ctx.close());
  drainWith(ctx, 30, 10);
  await drain(ctx);
  t.equal(ctx.out.drainConverged, true);
  t.same(ctx.run.store.get('produced'), { perPartition: [30] });
  t.equal(ctx.phase, 'drain');
});

t.test('drain: a stuck sample ends it unconverged with the reason; a deadline ends it unconverged', async (t) => {
  const stuck = context('drain2');
  t.teardown(() => stuck.close());
  drainWith(stuck, 30, 1, 2);
  await drain(stuck);
  t.equal(stuck.out.drainConverged, false);
  t.equal(stuck.out.stuck, 'listing timed out');
  const slow = context('drain3', undefined, 1);
  t.teardown(() => slow.close());
  drainWith(slow, 1_000_000, 1);
  await drain(slow);
  t.equal(slow.out.drainConverged, false, 'not converged past the deadline');
  t.equal(slow.out.stuck, undefined);
});
