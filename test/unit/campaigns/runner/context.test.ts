/**
 * The run context's health poll: each completed checkpoint goes to checkpoints.jsonl once,
 * with the engine's stamp as it is and the harness time the poll saw it (seenAt), which the
 * timeline draws from when a clock step moved the engine's clock; and its cadence (faster during
 * the gate, the run's otherwise).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import type { ChaosController } from '../../../../chaos/controller.ts';
import { GATE_HEALTH_POLL_MS, HEALTH_POLL_MS, RunContext, type RunInputs } from '../../../../campaigns/runner/context.ts';
import { Progress } from '../../../../campaigns/runner/progress.ts';
import { RunStore } from '../../../../lib/run-store.ts';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'cq-context-'));
t.teardown(() => rmSync(tmp, { recursive: true, force: true }));

/** A run context over an engine with this `health` and a fresh store (returned beside it), closed at the test's end. */
function contextFor(t: { teardown(fn: () => unknown): void }, runId: string, health: () => Promise<unknown>): { ctx: RunContext; store: RunStore } {
  const store = new RunStore(path.join(tmp, runId), { fresh: true });
  const inputs = {
    runId,
    campaign: { workload: { soakS: 60, checkpointIntervalS: 1 }, gate: { deadlineS: 5, fault: 'worker-kill' }, deadlines: { drainS: 5, recountS: 5 } },
    engine: { health },
    rig: { hosts: [] },
    remote: () => {
      throw new Error('no host');
    },
    plan: [],
    store,
    progress: new Progress({ isTTY: false, write: () => true } as never),
    log: () => {},
  } as unknown as RunInputs;
  const ctx = new RunContext(inputs, () => ({ healActive: async () => {} }) as unknown as ChaosController);
  t.teardown(() => ctx.close());
  return { ctx, store };
}

t.test("pollHealth: new checkpoints into checkpoints.jsonl once each, with the engine's stamp and the harness's seenAt", async (t) => {
  // The engine's clock is 120 s behind (a clock step).
  const stamp = (id: number) => ({ id, epoch: 1, at: new Date(Date.now() - 120_000).toISOString() });
  let cps = [stamp(1)];
  const { ctx, store } = contextFor(t, 'poll', async () => ({ running: true, epoch: 1, completedCheckpoints: cps.length, lastCompletedCheckpointId: cps.at(-1)!.id, lastCompletedAt: cps.at(-1)!.at, checkpoints: cps }));
  const before = Date.now();
  await ctx.pollHealth();
  cps = [...cps, stamp(2)];
  await ctx.pollHealth();
  const after = Date.now();
  const lines = store.lines('checkpoints').values;
  t.same(lines.map((c) => c.id), [1, 2], 'each checkpoint once');
  for (const c of lines) {
    t.ok(Date.parse(c.at) < before - 100_000, "the engine's stamp kept as it is");
    const seen = Date.parse(c.seenAt!);
    t.ok(seen >= before && seen <= after, 'seenAt is the harness time of the poll that listed it');
  }
});

t.test('the health poll: started at the run cadence, faster on request only while it runs, restarted rather than doubled', async (t) => {
  let calls = 0;
  const { ctx } = contextFor(t, 'cadence', async () => (calls++, { running: true, epoch: 1, completedCheckpoints: 0, lastCompletedCheckpointId: null, lastCompletedAt: null }));
  t.same([HEALTH_POLL_MS, GATE_HEALTH_POLL_MS], [2000, 500]);
  await ctx.pollHealthEvery(GATE_HEALTH_POLL_MS);
  t.equal(ctx.healthPollMs, undefined, 'not started: a faster cadence starts nothing');
  t.equal(calls, 0);
  ctx.startHealthPolling();
  t.equal(ctx.healthPollMs, HEALTH_POLL_MS);
  await ctx.pollHealthEvery(GATE_HEALTH_POLL_MS);
  t.equal(ctx.healthPollMs, GATE_HEALTH_POLL_MS);
  t.equal(calls, 1, 'one poll at once');
  await new Promise((r) => setTimeout(r, 1100));
  t.ok(calls >= 2 && calls <= 4, `polled every 500 ms (${calls} polls in 1.1 s), by one timer`);
  await ctx.pollHealthEvery(HEALTH_POLL_MS);
  const back = calls;
  await new Promise((r) => setTimeout(r, 1100));
  t.equal(calls, back, 'back at 2 s: no poll within 1.1 s');
  ctx.stopHealthPolling();
  t.equal(ctx.healthPollMs, undefined);
});

t.test('the health poll skips a tick while the last poll is still out', async (t) => {
  let calls = 0;
  let out = 0;
  let most = 0;
  const { ctx } = contextFor(t, 'slow', async () => {
    calls++;
    most = Math.max(most, ++out);
    await new Promise((r) => setTimeout(r, 350)); // an SSH answer slower than the 100 ms cadence
    out--;
    return { running: true, epoch: 1, completedCheckpoints: 0, lastCompletedCheckpointId: null, lastCompletedAt: null };
  });
  ctx.startHealthPolling(100);
  await new Promise((r) => setTimeout(r, 1100));
  ctx.stopHealthPolling();
  t.equal(most, 1, 'never two polls out at once');
  t.ok(calls >= 2 && calls <= 4, `${calls} polls of 350 ms in 1.1 s, not 10`);
});
