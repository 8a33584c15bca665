/**
 * The campaign's phases without a rig: the gate's conditions in order (a failed one leaves
 * the later ones "not reached", the gate fault's outcome recorded), the idle-checkpoint wait,
 * and the run context the phases share (phase marks, the fault record, abort, soak and settle
 * skipped when the gate failed or the drain did not converge). Checkpoints asked for now
 * (Engine.triggerCheckpoint): in the gate, the drain and the settle, never in the soak, and a
 * request that throws leaves the phase waiting for the periodic checkpoint.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import type { ChaosController } from '../../../../chaos/controller.ts';
import { GATE_HEALTH_POLL_MS, HEALTH_POLL_MS, RunContext, type RunInputs } from '../../../../campaigns/runner/context.ts';
import { CheckpointAsker, drain, GATE_POLL_MS, GATE_SAMPLE_NOW_MS, gate, runGate, settle, soak, waitCheckpoints } from '../../../../campaigns/runner/phases.ts';
import { Progress } from '../../../../campaigns/runner/progress.ts';
import type { EngineHealth } from '../../../../engine/engine.ts';
import { zeroCounters, type PlannedFault } from '../../../../lib/evidence.ts';
import { RunStore } from '../../../../lib/run-store.ts';
import { sleep } from '../../../../lib/sleep.ts';
import { CLINK_MUTANTS } from '../../../../engine/clink/mutants/index.ts';

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

t.test('gate: while no committed object is seen, an oracle sample is asked for every GATE_SAMPLE_NOW_MS', async (t) => {
  let objects = 0;
  const asked: number[] = [];
  const t0 = Date.now();
  const g = await runGate(
    { gate: { deadlineS: 10, fault: 'worker-kill' } } as never,
    engine(['w1'], [{ host: 'w1', line: 'open: family=s3_2pc_sink a' }]) as never,
    controller(true, true),
    () => 10,
    () => objects,
    () => health(2),
    new AbortController().signal,
    quiet,
    {
      sampleNow: () => {
        asked.push(Date.now() - t0);
        if (asked.length === 3) objects = 4; // the third sample sees them
      },
    },
  );
  t.equal(g.passed, true);
  t.equal(asked.length, 3, 'asked until the objects were seen, then no more');
  t.ok(asked.every((ms, i) => i === 0 || ms - asked[i - 1]! >= GATE_SAMPLE_NOW_MS - 50), `about a second apart: ${asked.join(', ')} ms`);
  t.match(g.conditions[2]!.evidence, /4 committed objects read by the oracle/);
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

function context(
  dir: string,
  signal?: AbortSignal,
  drainS = 5,
  over: { soakS?: number; engine?: object; controller?: (ctx: RunContext) => object; log?: (l: string) => void; mutant?: string; plan?: PlannedFault[] } = {},
): RunContext {
  const store = new RunStore(path.join(tmp, dir), { fresh: true });
  const inputs = {
    runId: dir,
    campaign: { workload: { soakS: over.soakS ?? 60, checkpointIntervalS: 1 }, gate: { deadlineS: 5, fault: 'worker-kill' }, deadlines: { drainS, recountS: 5 } },
    engine: over.engine ?? { health: async () => health(1), disarmFaultPoints: async () => {} },
    rig: { hosts: [] },
    remote: () => {
      throw new Error('no host');
    },
    plan: over.plan ?? [{ id: 'f001', kind: 'worker-kill', atS: 1 }],
    ...(over.mutant ? { mutant: over.mutant } : {}),
    store,
    progress: new Progress({ isTTY: false, write: () => true } as never),
    log: over.log ?? quiet,
  } as unknown as RunInputs;
  return new RunContext(inputs, (ctx) => (over.controller?.(ctx) ?? { healActive: async () => {} }) as unknown as ChaosController, signal);
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

/** A drain whose committed count is frozen at `events` while the engine keeps completing checkpoints. */
function frozenDrain(ctx: RunContext, target: number, events: number, counters: ReturnType<typeof zeroCounters>) {
  let checkpoints = 10;
  ctx.producer = { total: target, stop: async () => {}, produced: () => [target] } as never;
  ctx.sampler = {
    stop: async () => {},
    get last() {
      return { events };
    },
    sample: async () => ({ objects: 7, events, counters, checkpoints: (checkpoints += 2), stuck: false }),
  } as never;
}

t.test('drain: a run already shown wrong, frozen over 2.5 checkpoint intervals and 3 checkpoints, ends early; a clean one waits the deadline', async (t) => {
  const lines: string[] = [];
  const unsafe = context('drain-stall1', undefined, 20, { log: (l) => lines.push(l) });
  t.teardown(() => unsafe.close());
  frozenDrain(unsafe, 100, 60, { ...zeroCounters(), gaps: 40 });
  const started = Date.now();
  await drain(unsafe);
  const tookS = (Date.now() - started) / 1000;
  t.equal(unsafe.out.drainConverged, false, 'still not converged');
  t.ok(tookS >= 2.5 && tookS < 10, `ended after ${tookS} s, not at the 20 s deadline`);
  t.match(unsafe.out.drainStalled, /^ended early, the run already shown wrong by the oracle and nothing committed for \d+\.\d s over 3 or more completed checkpoints \(60 of 100 committed\)$/);
  t.match(lines.join('\n'), /drain did NOT converge: ended early/);

  const clean = context('drain-stall2', undefined, 4);
  t.teardown(() => clean.close());
  frozenDrain(clean, 100, 60, zeroCounters());
  const cleanStart = Date.now();
  await drain(clean);
  t.equal(clean.out.drainConverged, false);
  t.equal(clean.out.drainStalled, undefined, 'every counter zero: no early end');
  t.ok(Date.now() - cleanStart >= 4000, 'it waited the whole deadline');
});

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

const sleepMs = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A fake engine whose checkpoints complete only when asked for (or, with `periodicMs`, also on their own). */
function askedEngine(opts: { throws?: boolean; periodicMs?: number; onAsk?: () => void } = {}) {
  const e = {
    completed: 0,
    asks: [] as number[],
    stopped: false,
    sinkFamily: 's3_2pc_sink',
    sinkOpenLines: async () => [{ host: 'w1', line: 'family=s3_2pc_sink' }],
    processes: async () => [{ host: 'w1', role: 'worker' as const, service: 'clink-worker', pid: 1 }],
    disarmFaultPoints: async () => {},
    stop: async () => {
      e.stopped = true;
    },
    health: async () => health(e.completed),
    async triggerCheckpoint() {
      e.asks.push(Date.now());
      opts.onAsk?.();
      if (opts.throws) throw new Error('ssh: connection refused');
      setTimeout(() => e.completed++, 50);
    },
  };
  if (opts.periodicMs) {
    const timer = setInterval(() => e.completed++, opts.periodicMs);
    t.teardown(() => clearInterval(timer));
  }
  return e;
}

t.test('CheckpointAsker: asks, re-asks on its interval, and after a failure asks no more', async (t) => {
  const lines: string[] = [];
  const e = askedEngine();
  const a = new CheckpointAsker(e, 'x', (l) => lines.push(l));
  await a.ask();
  await a.askEvery(10_000);
  t.equal(e.asks.length, 1, 'not again within the interval');
  await sleepMs(30);
  await a.askEvery(20);
  t.equal(e.asks.length, 2, 'again past it');
  t.equal(lines.filter((l) => /asking the engine for a checkpoint now/.test(l)).length, 1, 'one line for the asking');
  const bad = askedEngine({ throws: true });
  const b = new CheckpointAsker(bad, 'x', (l) => lines.push(l));
  await b.ask();
  t.equal(b.active, false);
  await b.ask();
  await b.askEvery(0);
  t.equal(bad.asks.length, 1, 'no more requests after one failed');
  t.match(lines.join('\n'), /x: asking the engine for a checkpoint failed \(ssh: connection refused\); waiting for its periodic checkpoint instead/);
  const hangs = { triggerCheckpoint: () => new Promise<void>(() => {}) };
  const c = new CheckpointAsker(hangs, 'x', (l) => lines.push(l), 100);
  await c.ask();
  t.equal(c.active, false, 'a request not answered in time is given up');
  t.match(lines.at(-1), /no answer within 100 ms/);
  const none = new CheckpointAsker({}, 'x', (l) => lines.push(l));
  t.equal(none.active, false, 'an engine without triggerCheckpoint is never asked');
  await t.resolves(none.ask());
});

t.test('gate: the job\'s first completed checkpoint is asked for, and a checkpoint after the gate fault\'s heal', async (t) => {
  const e = askedEngine();
  let healedAt = 0;
  let asksBeforeHeal = -1;
  const lines: string[] = [];
  const ctx = context('gate-ask', undefined, 5, {
    engine: e,
    log: (l) => lines.push(l),
    controller: (ctx) => ({
      healActive: async () => {},
      async runOne(f: PlannedFault) {
        ctx.record({ faultId: f.id, kind: f.kind, phase: 'landed' } as never);
        await sleepMs(400); // held: nothing asked for a recovery before the heal
        asksBeforeHeal = e.asks.length;
        const before = e.completed;
        ctx.record({ faultId: f.id, kind: f.kind, phase: 'healed' } as never);
        healedAt = Date.now();
        // The controller's wait for the next completed checkpoint after the heal (3 s here; the periodic one never comes).
        const end = Date.now() + 3000;
        while (e.completed === before && Date.now() < end) await sleepMs(50);
        const recovered = e.completed > before;
        return { fault: f, landed: true, healed: true, recovered, ...(recovered ? { recoveryS: (Date.now() - healedAt) / 1000 } : { reason: 'no checkpoint' }) };
      },
    }),
  });
  t.teardown(() => ctx.close());
  ctx.producer = { total: 10 } as never;
  ctx.sampler = { last: { objects: 3 } } as never;
  // The background health poll, as the run has it (every 100 ms here).
  const poll = setInterval(() => void e.health().then((h) => (ctx.health = h)), 100);
  t.teardown(() => clearInterval(poll));
  ctx.health = health(0);
  await gate(ctx);
  t.equal(ctx.out.gate!.passed, true, 'the gate passed: every condition on checkpoints that completed');
  t.match(ctx.out.gate!.conditions[1]!.evidence, /1 completed checkpoints/, 'the first one, asked for (none completes on its own here)');
  t.equal(asksBeforeHeal, 1, 'one ask for the first checkpoint, none while the fault was held');
  t.ok(e.asks.some((at) => at >= healedAt), 'asked again after the heal');
  t.match(ctx.out.gate!.conditions[5]!.evidence, /after the heal/);
  const n = e.asks.length;
  await sleepMs(1500);
  t.equal(e.asks.length, n, 'nothing asked once the gate is over');
  t.match(lines.join('\n'), /gate: asking the engine for a checkpoint now/);
});

t.test('gate phase: the health poll runs at the gate\'s cadence during the gate, at the run\'s after it', async (t) => {
  let during: number | undefined;
  const ctx = context('gate-cadence', undefined, 5, {
    engine: { ...engine(['w1'], [{ host: 'w1', line: 'open: family=s3_2pc_sink a' }]), health: async () => health(2) },
    controller: (c) => ({
      async runOne(f: PlannedFault) {
        during = c.healthPollMs;
        return { fault: f, landed: true, healed: true, recovered: true, recoveryS: 1 };
      },
    }),
  });
  t.teardown(() => ctx.close());
  const started = Date.now();
  // The input flows 100 ms in: the gate sees it on its next probe, 250 ms apart (1 s before).
  ctx.producer = {
    get total() {
      return Date.now() - started >= 100 ? 10 : 0;
    },
  } as never;
  ctx.sampler = { last: { objects: 3 } } as never;
  ctx.startHealthPolling();
  await gate(ctx);
  t.equal(ctx.out.gate!.passed, true);
  t.equal(during, GATE_HEALTH_POLL_MS, 'every 500 ms while the gate fault ran');
  t.equal(ctx.healthPollMs, HEALTH_POLL_MS, 'every 2 s again for the soak');
  const tookMs = Date.now() - started;
  t.ok(tookMs >= 100 && tookMs < 900, `input seen on the next 250 ms probe: the gate took ${tookMs} ms, not a 1 s probe's`);
  t.equal(GATE_POLL_MS, 250);
});

t.test('gate: a request that throws falls back to the periodic checkpoint', async (t) => {
  const e = askedEngine({ throws: true, periodicMs: 700 });
  const lines: string[] = [];
  let h = health(0);
  const poll = setInterval(() => void e.health().then((x) => (h = x)), 100);
  t.teardown(() => clearInterval(poll));
  const g = await runGate({ gate: { deadlineS: 5, fault: 'worker-kill' } } as never, e, controller(true, true), () => 10, () => 3, () => h, new AbortController().signal, (l) => lines.push(l), { healed: () => true });
  t.equal(g.passed, true, 'the periodic checkpoint shows the job running');
  t.equal(e.asks.length, 1, 'asked once, then no more');
  t.match(lines.join('\n'), /gate: asking the engine for a checkpoint failed \(ssh: connection refused\); waiting for its periodic checkpoint instead/);
});

t.test('soak: never asks for a checkpoint', async (t) => {
  const e = askedEngine({ onAsk: () => t.fail('asked during the soak') });
  let ran = false;
  const ctx = context('soak-ask', undefined, 5, {
    soakS: 1,
    engine: e,
    controller: () => ({
      healActive: async () => {},
      run: async () => {
        ran = true;
        await sleepMs(300);
        return [];
      },
    }),
  });
  t.teardown(() => ctx.close());
  ctx.out.gate = { passed: true, conditions: [] };
  ctx.sampler = { stuck: false } as never;
  await soak(ctx);
  t.ok(ran, 'the soak ran its faults');
  t.equal(e.asks.length, 0, 'and asked for nothing');
});

t.test('drain: asks once the input stopped and every fault is healed and disarmed, and again while it waits', async (t) => {
  const order: string[] = [];
  const e = askedEngine({ onAsk: () => order.push('ask') });
  e.disarmFaultPoints = async () => void order.push('disarm');
  const ctx = context('drain-ask', undefined, 10, { engine: e, controller: () => ({ healActive: async () => void order.push('heal') }) });
  t.teardown(() => ctx.close());
  drainWith(ctx, 30, 10); // converges at the third sample, 4 s in
  const producer = ctx.producer as unknown as { stop: () => Promise<void> };
  producer.stop = async () => void order.push('producer stopped');
  await drain(ctx);
  t.equal(ctx.out.drainConverged, true);
  t.same(order.slice(0, 4), ['producer stopped', 'heal', 'disarm', 'ask'], 'the first ask after the input stopped, the heals and the disarm');
  t.ok(e.asks.length >= 2, `asked again while not converged (${e.asks.length} asks)`);
});

t.test('drain: a request that throws leaves the drain as it was', async (t) => {
  const e = askedEngine({ throws: true });
  const lines: string[] = [];
  const ctx = context('drain-ask-bad', undefined, 10, { engine: e, log: (l) => lines.push(l) });
  t.teardown(() => ctx.close());
  drainWith(ctx, 30, 10);
  await drain(ctx);
  t.equal(ctx.out.drainConverged, true);
  t.equal(e.asks.length, 1, 'one failed request, no more');
  t.match(lines.join('\n'), /drain: asking the engine for a checkpoint failed/);
});

t.test('settle: each idle checkpoint is asked for; the two still complete after the settle began', async (t) => {
  const e = askedEngine();
  const ctx = context('settle-ask', undefined, 5, { engine: e });
  t.teardown(() => ctx.close());
  ctx.out.drainConverged = true;
  ctx.sampler = { sample: async () => ({ events: 30, stuck: false }), last: { counters: zeroCounters() } } as never;
  const started = Date.now();
  await settle(ctx);
  t.equal(e.completed, 2, 'two checkpoints completed, each asked for (none completes on its own here)');
  t.equal(e.asks.length, 2, 'one ask each');
  t.ok(Date.now() - started < 10_000, 'well within the settle\'s 30 s');
  t.equal(ctx.out.settleWarning, undefined);
  t.ok(e.stopped, 'then the engine stopped');
});

t.test('settle: a request that throws falls back to the periodic checkpoints', async (t) => {
  const e = askedEngine({ throws: true, periodicMs: 400 });
  const lines: string[] = [];
  const ctx = context('settle-ask-bad', undefined, 5, { engine: e, log: (l) => lines.push(l) });
  t.teardown(() => ctx.close());
  ctx.out.drainConverged = true;
  ctx.sampler = { sample: async () => ({ events: 30, stuck: false }), last: { counters: zeroCounters() } } as never;
  await settle(ctx);
  t.equal(ctx.out.settleWarning, undefined, 'two idle checkpoints seen all the same');
  t.equal(e.asks.length, 1, 'one failed request, no more');
  t.match(lines.join('\n'), /settle: asking the engine for a checkpoint failed/);
});

t.test('waitCheckpoints with an asker: asks for the first, then for the next each time the count moves', async (t) => {
  const e = askedEngine();
  const asker = new CheckpointAsker(e, 'settle', quiet);
  t.equal(await waitCheckpoints(e, 3, 10_000, new AbortController().signal, asker), 3);
  t.equal(e.asks.length, 3);
  const never = askedEngine();
  never.triggerCheckpoint = async () => void never.asks.push(Date.now()); // dropped: nothing completes
  t.equal(await waitCheckpoints(never, 1, 2600, new AbortController().signal, new CheckpointAsker(never, 'settle', quiet)), null, 'the deadline as before');
  t.ok(never.asks.length >= 2 && never.asks.length <= 4, `asked again about every second while nothing completed (${never.asks.length})`);
});

/**
 * A soak over a fake walk: f001 lands at once and ends its episode (healed, recovered) after
 * `episodeMs`; f002, planned at +20 s, waits for its time unless stopWalk() is called, which
 * records it not started (in a soak shorter than 20 s, f002 is planned at its last second).
 * The oracle's latest sample shows `counters` from `caughtAfterMs`.
 */
function caughtSoak(dir: string, o: { mutant: string; soakS: number; counters: Partial<ReturnType<typeof zeroCounters>>; caughtAfterMs: number; episodeMs: number }) {
  const laterS = Math.min(20, o.soakS - 1);
  const plan: PlannedFault[] = [{ id: 'f001', kind: 'worker-kill', atS: 0 }, { id: 'f002', kind: 'worker-kill', atS: laterS }];
  const stops: number[] = [];
  const ctx = context(dir, undefined, 5, {
    soakS: o.soakS,
    mutant: o.mutant,
    plan,
    engine: { mutants: CLINK_MUTANTS, health: async () => health(1), disarmFaultPoints: async () => {} },
    controller: (c) => {
      const wake = new AbortController();
      let notStarted: string[] = [];
      return {
        healActive: async () => {},
        get notStartedIds() {
          return notStarted;
        },
        stopWalk(cutoffS: number) {
          stops.push(cutoffS);
          wake.abort();
        },
        run: async () => {
          c.record({ faultId: 'f001', kind: 'worker-kill', phase: 'landed' });
          await sleepMs(o.episodeMs);
          c.record({ faultId: 'f001', kind: 'worker-kill', phase: 'healed' });
          c.record({ faultId: 'f001', kind: 'worker-kill', phase: 'recovered', recoveryS: 0.1 });
          await sleep(laterS * 1000 - o.episodeMs, AbortSignal.any([wake.signal, c.signal]));
          if (wake.signal.aborted) {
            c.record({ faultId: 'f002', kind: 'worker-kill', phase: 'not-landed', detail: 'not started', evidence: { notStarted: true } });
            notStarted = ['f002'];
          }
          return [];
        },
      };
    },
  });
  const started = Date.now();
  ctx.out.gate = { passed: true, conditions: [] };
  ctx.sampler = {
    stuck: false,
    get last() {
      const ms = Date.now() - started;
      return { t: new Date(started + Math.floor(ms / 100) * 100).toISOString(), counters: { ...zeroCounters(), ...(ms >= o.caughtAfterMs ? o.counters : {}) } };
    },
  } as never;
  return { ctx, stops, started };
}

t.test('soak: a mutant caught by a count while a fault is in flight ends once that fault has recovered; the later fault is not started, and the soak\'s end mark says why', async (t) => {
  const { ctx, stops, started } = caughtSoak('soak-caught1', { mutant: 'commit-at-prepare', soakS: 30, counters: { duplicates: 3160 }, caughtAfterMs: 200, episodeMs: 1200 });
  t.teardown(() => ctx.close());
  await soak(ctx);
  const tookMs = Date.now() - started;
  t.ok(tookMs >= 1200 && tookMs < 5000, `ended after ${tookMs} ms: after f001 recovered, long before the 30 s soak`);
  t.equal(stops.length, 1, 'the walk was told to stop once');
  t.ok(stops[0]! >= 0.2 && stops[0]! < 1.2, 'at the moment the catch was seen, while f001 was in flight');
  const e = ctx.out.soakEndedEarly!;
  t.match(e, { plannedS: 30, counter: 'duplicates', value: 3160, notStarted: ['f002'] });
  t.ok(e.endedAtS >= 1.2 && e.endedAtS < 5, `ended at ${e.endedAtS} s`);
  ctx.enterPhase('drain');
  const marks = readFileSync(ctx.run.store.path('phases'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  const end = marks.find((m) => m.phase === 'soak' && m.edge === 'end');
  t.same(end.endedEarly, e, 'phases.jsonl: the soak\'s end mark carries when and why');
});

t.test('soak: a counter the mutant need not raise, or the correct engine, runs the whole soak', async (t) => {
  const wrong = caughtSoak('soak-caught2', { mutant: 'commit-at-prepare', soakS: 2, counters: { gaps: 40, mutations: 3 }, caughtAfterMs: 0, episodeMs: 100 });
  t.teardown(() => wrong.ctx.close());
  await soak(wrong.ctx);
  t.ok(Date.now() - wrong.started >= 2000, 'gaps and mutations do not catch commit-at-prepare: the whole 2 s');
  t.equal(wrong.ctx.out.soakEndedEarly, undefined);
  t.same(wrong.stops, []);

  const control = caughtSoak('soak-caught3', { mutant: 'none', soakS: 2, counters: { duplicates: 5 }, caughtAfterMs: 0, episodeMs: 100 });
  t.teardown(() => control.ctx.close());
  await soak(control.ctx);
  t.ok(Date.now() - control.started >= 2000, 'the correct engine: the whole soak whatever the oracle shows');
  t.equal(control.ctx.out.soakEndedEarly, undefined);
  t.same(control.stops, []);
});
