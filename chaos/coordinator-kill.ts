/**
 * Coordinator kill: SIGKILL the coordinator; heal by starting it again. Recovery also
 * requires that the worker processes survived it: their PIDs must be the same after the
 * next completed checkpoint as before the kill.
 */
import { killService } from '../rig/faults.ts';
import { FaultNotLanded, type FaultPackage } from './fault.ts';

export const coordinatorKill: FaultPackage = {
  kind: 'coordinator-kill',
  spec: {
    label: 'Coordinator SIGKILL, then restarted (worker PIDs checked unchanged)',
    summary: "SIGKILL the coordinator, restart it, check the workers' PIDs did not change.",
    colour: '#9467bd',
    targets: { roles: ['coordinator'], what: 'the coordinator', defaultRoles: ['coordinator'] },
    fields: { required: [], optional: [] },
    evidence: "the coordinator PID before, gone after the SIGKILL; the restarted PID, and the workers' PIDs unchanged after the next checkpoint",
  },
  async inject(_fault, ctx) {
    const procs = await ctx.engine.processes();
    const coord = procs.find((p) => p.role === 'coordinator');
    if (!coord) throw new FaultNotLanded('no coordinator process');
    const workersBefore = procs.filter((p) => p.role === 'worker').map((p) => ({ host: p.host, pid: p.pid }));
    let ev;
    try {
      ev = await killService(ctx.remote(coord.host), coord.service);
    } catch (err) {
      throw new FaultNotLanded((err as Error).message);
    }
    ctx.log(`killed coordinator pid ${ev.pid}`);
    return {
      evidence: { host: coord.host, pid: ev.pid, signal: 'SIGKILL', pidGone: ev.gone, workerPids: workersBefore },
      async heal() {
        const p = await ctx.engine.restart(coord.host, 'coordinator');
        return { host: coord.host, restartedPid: p.pid };
      },
      async verifyRecovery() {
        const after = (await ctx.engine.processes()).filter((p) => p.role === 'worker');
        const changed = workersBefore.filter((w) => after.find((a) => a.host === w.host)?.pid !== w.pid);
        return changed.length ? `worker PIDs changed across the coordinator restart: ${changed.map((c) => `${c.host} was ${c.pid}`).join(', ')}` : null;
      },
    };
  },
};
