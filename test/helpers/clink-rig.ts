/**
 * Helpers shared by the engine's rig tests (test/rig/engine-*.test.ts): the FaultContext a
 * chaos package gets in a test, the wait for a completed checkpoint, and restarting what
 * a fault left dead.
 */
import type { FaultContext } from '../../chaos/fault.ts';
import type { RigKit } from './rig-kit.ts';
import type { Engine, EngineRole } from '../../engine/engine.ts';
import { waitUntil } from '../../lib/retry.ts';

/** A FaultContext builder for tests: the same fields a campaign gives, its log to the test's comments. */
export function faultCtx(kit: RigKit, engine: Engine, o: { checkpointIntervalMs: number; prefix?: string }): (t: { comment(...a: unknown[]): void }) => FaultContext {
  return (t) => ({
    rig: kit.state,
    remote: kit.remote,
    engine,
    credentials: kit.credentials,
    checkpointIntervalMs: o.checkpointIntervalMs,
    ...(o.prefix !== undefined ? { prefix: o.prefix } : {}),
    log: (l) => t.comment(l),
  });
}

/** Waits until the job runs and a checkpoint with an id above `id` has completed; returns the last completed id. */
export async function waitCheckpointAfter(engine: Engine, id: number | null, timeoutMs = 90_000): Promise<number> {
  let last = id ?? 0;
  await waitUntil(
    async () => {
      const h = await engine.health();
      last = h.lastCompletedCheckpointId ?? 0;
      return h.running && last > (id ?? 0);
    },
    { what: `a completed checkpoint after ${id}`, deadlineMs: timeoutMs, intervalMs: 500 },
  );
  return last;
}

/** Restarts every engine process that is down; returns what it restarted. */
export async function restartDead(engine: Engine): Promise<{ host: string; role: EngineRole }[]> {
  const out: { host: string; role: EngineRole }[] = [];
  for (const p of await engine.processes()) {
    if (p.pid === null) {
      await engine.restart(p.host, p.role);
      out.push({ host: p.host, role: p.role });
    }
  }
  return out;
}
