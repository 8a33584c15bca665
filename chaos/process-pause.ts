/**
 * Process pause: SIGSTOP an engine process (a worker, or the coordinator) for longer than
 * the fencing timeout, then SIGCONT. This is the zombie: a process that stalls (a long GC,
 * a frozen VM, a stopped container) while the job moves on without it, and then wakes up
 * believing nothing happened. A correct engine lets it commit nothing of the epoch that was
 * taken from it.
 *
 * Landing evidence: the process's state is T (stopped) after the signal, read from
 * /proc/<pid>/stat. Healing evidence: the same PID is running again (not T). The process is
 * not restarted: if it stops itself on waking (fencing, a fatal error), the engine's own
 * recovery is what the next completed checkpoint measures, and a dead process is restarted
 * so that the campaign goes on.
 */
import { undoPause } from '../rig/dead-man.ts';
import { pauseService, resumeService } from '../rig/faults.ts';
import { FaultNotLanded, targetOrFirst, type FaultPackage } from './fault.ts';

export const processPause: FaultPackage = {
  kind: 'process-pause',
  spec: {
    label: 'Engine process paused (SIGSTOP) past the fencing timeout, then resumed (a zombie)',
    summary: 'SIGSTOP a worker or the coordinator for longer than the fencing timeout, SIGCONT (the zombie).',
    colour: '#e377c2',
    targets: { roles: ['worker', 'coordinator'], what: 'workers or the coordinator', defaultRoles: ['worker'] },
    fields: { required: ['durationS'], optional: [] },
    evidence: '/proc/<pid>/stat state T after SIGSTOP; the same PID running after SIGCONT (or a restart if it died on waking)',
  },
  async inject(fault, ctx) {
    const host = targetOrFirst(fault, ctx.rig, 'worker');
    const proc = (await ctx.engine.processes()).find((p) => p.host === host);
    if (!proc || proc.pid === null) throw new FaultNotLanded(`no running engine process on ${host}`, { host });
    const remote = ctx.remote(host);
    let paused;
    try {
      paused = await pauseService(remote, proc.service);
    } catch (err) {
      await resumeService(remote, proc.service).catch(() => {});
      throw new FaultNotLanded((err as Error).message, { host });
    }
    ctx.log(`paused ${proc.role} ${host} pid ${paused.pid} (state ${paused.state})`);
    return {
      evidence: { host, role: proc.role, pid: paused.pid, signal: 'SIGSTOP', stateAfter: paused.state },
      deadMan: undoPause(host, paused.pid),
      async heal() {
        const resumed = await resumeService(remote, proc.service).catch(() => null);
        const now = (await ctx.engine.processes()).find((p) => p.host === host && p.role === proc.role);
        if (resumed && now?.pid === paused.pid) return { host, pid: resumed.pid, signal: 'SIGCONT', stateAfter: resumed.state, samePid: true };
        // It did not survive its own wake-up (or was gone): start it again so the campaign goes on.
        const p = await ctx.engine.restart(host, proc.role);
        return { host, pid: paused.pid, signal: 'SIGCONT', exitedOnWake: true, restartedPid: p.pid };
      },
    };
  },
};
