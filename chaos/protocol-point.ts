/**
 * Protocol point: arm a named fault point through the engine plug; the engine process
 * that reaches it records the firing durably and SIGKILLs itself at that exact protocol
 * instant. Landing evidence is the fired record (and the process gone); heal restarts it.
 *
 * Points reached only during a recovery (`*.recover.*`) need a recovery to happen: the
 * package then kills another worker to trigger one, and restarts both on heal.
 */
import { pidAlive, signalService, waitPidGone } from '../rig/process.ts';
import type { EngineRole, FaultPointFiring } from '../engine/engine.ts';
import { FaultNotLanded, hostsWithRole, type FaultPackage } from './fault.ts';

/** How long an armed point may take to fire: a few checkpoint intervals. */
export function fireDeadlineMs(checkpointIntervalMs: number): number {
  return Math.max(30_000, checkpointIntervalMs * 4 + 10_000);
}

export const protocolPoint: FaultPackage = {
  kind: 'protocol-point',
  label: 'Kill at a named 2PC protocol point - fired and recovered',
  async inject(fault, ctx) {
    const point = fault.point;
    if (!point) throw new FaultNotLanded('protocol-point fault without a point');
    if (!ctx.engine.faultPoints.includes(point)) throw new FaultNotLanded(`the engine has no fault point ${point}`);
    const before = (await ctx.engine.firedFaultPoints()).length;
    await ctx.engine.armFaultPoint(point, { times: 1, ...(fault.target ? { host: fault.target } : {}) });
    ctx.log(`armed ${point}${fault.target ? ` on ${fault.target}` : ''}`);
    const toRestart: { host: string; role: EngineRole }[] = [];
    let trigger: Record<string, unknown> | undefined;
    if (point.includes('.recover.')) {
      // Trigger a recovery: kill a worker other than the one armed (if the plug chose one, any worker works).
      const workers = hostsWithRole(ctx.rig, 'worker');
      const victim = workers.find((w) => w !== fault.target) ?? workers[0]!;
      const proc = (await ctx.engine.processes()).find((p) => p.host === victim && p.role === 'worker');
      if (proc) {
        const pid = await signalService(ctx.remote(victim), proc.service, 'KILL');
        if (pid !== null) {
          await waitPidGone(ctx.remote(victim), pid);
          toRestart.push({ host: victim, role: 'worker' });
          trigger = { recoveryTriggeredBy: `SIGKILL worker ${victim} pid ${pid}` };
          ctx.log(`killed worker ${victim} to trigger the recovery that reaches ${point}`);
        }
      }
    }
    const deadline = Date.now() + fireDeadlineMs(ctx.checkpointIntervalMs);
    let firing: FaultPointFiring | undefined;
    while (Date.now() < deadline) {
      const fired = await ctx.engine.firedFaultPoints();
      firing = fired.slice(before).find((f) => f.point === point);
      if (firing) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    const restartAll = async () => {
      const out: Record<string, unknown>[] = [];
      for (const r of toRestart) {
        const p = await ctx.engine.restart(r.host, r.role);
        out.push({ host: r.host, role: r.role, restartedPid: p.pid });
      }
      toRestart.length = 0;
      return out;
    };
    if (!firing) {
      await ctx.engine.disarmFaultPoints();
      await restartAll();
      throw new FaultNotLanded(`${point} did not fire within the deadline`, { point, ...trigger });
    }
    const gone = !(await pidAlive(ctx.remote(firing.host), firing.pid));
    if (!gone) await waitPidGone(ctx.remote(firing.host), firing.pid);
    toRestart.push({ host: firing.host, role: firing.role });
    ctx.log(`${point} fired on ${firing.host} (pid ${firing.pid}, checkpoint ${firing.checkpointId ?? '?'})`);
    return {
      evidence: { point, firedOn: firing.host, role: firing.role, pid: firing.pid, pidGone: true, at: firing.at, checkpointId: firing.checkpointId, epoch: firing.epoch, ...trigger },
      async heal() {
        return { restarted: await restartAll() };
      },
    };
  },
};
