/** Worker kill: SIGKILL a worker's engine process; heal by starting it again. */
import { signalService, waitPidGone } from '../rig/process.ts';
import { FaultNotLanded, targetOrFirst, type FaultPackage } from './fault.ts';

export const workerKill: FaultPackage = {
  kind: 'worker-kill',
  label: 'Worker SIGKILL (with restart)',
  async inject(fault, ctx) {
    const host = targetOrFirst(fault, ctx.rig, 'worker');
    const proc = (await ctx.engine.processes()).find((p) => p.host === host && p.role === 'worker');
    if (!proc) throw new FaultNotLanded(`no engine worker process on ${host}`);
    const remote = ctx.remote(host);
    const pid = await signalService(remote, proc.service, 'KILL');
    if (pid === null) throw new FaultNotLanded(`the worker on ${host} was not running`, { host });
    await waitPidGone(remote, pid);
    ctx.log(`killed worker ${host} pid ${pid}`);
    return {
      evidence: { host, pid, signal: 'SIGKILL', pidGone: true },
      async heal() {
        const p = await ctx.engine.restart(host, 'worker');
        return { host, restartedPid: p.pid };
      },
    };
  },
};
