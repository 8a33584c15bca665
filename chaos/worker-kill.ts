/** Worker kill: SIGKILL a worker's engine process; heal by starting it again. */
import { killService } from '../rig/faults.ts';
import { FaultNotLanded, targetOrFirst, type FaultPackage } from './fault.ts';

export const workerKill: FaultPackage = {
  kind: 'worker-kill',
  spec: {
    label: 'Worker SIGKILL, then restarted',
    summary: 'SIGKILL a worker process, restart it.',
    colour: '#d62728',
    targets: { roles: ['worker'], what: 'workers', defaultRoles: ['worker'] },
    fields: { required: [], optional: [] },
    evidence: 'the worker PID before, gone after the SIGKILL; the restarted PID at the heal',
  },
  async inject(fault, ctx) {
    const host = targetOrFirst(fault, ctx.rig, 'worker');
    const proc = (await ctx.engine.processes()).find((p) => p.host === host && p.role === 'worker');
    if (!proc) throw new FaultNotLanded(`no engine worker process on ${host}`);
    let ev;
    try {
      ev = await killService(ctx.remote(host), proc.service);
    } catch (err) {
      throw new FaultNotLanded((err as Error).message, { host });
    }
    ctx.log(`killed worker ${host} pid ${ev.pid}`);
    return {
      evidence: { host, pid: ev.pid, signal: 'SIGKILL', pidGone: ev.gone },
      async heal() {
        const p = await ctx.engine.restart(host, 'worker');
        return { host, restartedPid: p.pid };
      },
    };
  },
};
