/**
 * Coordinator kill: SIGKILL the coordinator; heal by starting it again. Recovery also
 * requires that the worker processes survived it: their PIDs must be the same after the
 * next completed checkpoint as before the kill.
 */
import { signalService, waitPidGone } from '../rig/process.ts';
import { FaultNotLanded, type FaultPackage } from './fault.ts';

export const coordinatorKill: FaultPackage = {
  kind: 'coordinator-kill',
  label: 'Coordinator SIGKILL (recovery verified by stable worker PIDs)',
  async inject(_fault, ctx) {
    const procs = await ctx.engine.processes();
    const coord = procs.find((p) => p.role === 'coordinator');
    if (!coord) throw new FaultNotLanded('no coordinator process');
    const workersBefore = procs.filter((p) => p.role === 'worker').map((p) => ({ host: p.host, pid: p.pid }));
    const remote = ctx.remote(coord.host);
    const pid = await signalService(remote, coord.service, 'KILL');
    if (pid === null) throw new FaultNotLanded('the coordinator was not running');
    await waitPidGone(remote, pid);
    ctx.log(`killed coordinator pid ${pid}`);
    return {
      evidence: { host: coord.host, pid, signal: 'SIGKILL', pidGone: true, workerPids: workersBefore },
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
