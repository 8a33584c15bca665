/**
 * Clock step: the wall clock of the engine's processes on one host jumps by `offsetS`
 * seconds (back when negative), as an NTP step or a VM restore would make it; the heal puts
 * it right again, which is a second step the other way. Engines that use the wall clock for
 * intervals, timeouts, leases or the order of their own records misbehave here; a correct
 * one measures durations on a monotonic clock and orders by its own ids.
 *
 * The step is real for the processes it targets and nothing else (rig/clock.ts: libfaketime
 * with a per-host offset file; the machine's clock is shared by every namespace, so it is
 * never touched). It needs the engine started under the controlled clock, which the runner
 * asks for when the plan has clock steps.
 *
 * Landing evidence: every engine process on the host runs under the host's controlled clock
 * (/proc/<pid>/maps and environ), and a probe under the same clock reads the offset. Heal
 * evidence: the probe reads 0 again.
 */
import { clockFile, probeClockOffset, processUnderControlledClock, setClockOffset } from '../rig/clock.ts';
import { undoClockStep } from '../rig/dead-man.ts';
import { FaultNotLanded, targetOrFirst, type FaultPackage } from './fault.ts';

export const clockStep: FaultPackage = {
  kind: 'clock-step',
  spec: {
    label: "Engine processes' wall clock stepped on one host, then stepped back",
    summary: "the engine processes' wall clock on a host jumps by offsetS (libfaketime), and back at the heal.",
    colour: '#aec7e8',
    targets: { roles: ['worker', 'coordinator'], what: 'workers or the coordinator', defaultRoles: ['coordinator'] },
    fields: { required: ['durationS', 'offsetS'], optional: [] },
    evidence: "each engine PID mapping libfaketime and reading the host's offset file, a probe reading the offset; 0 at the heal",
  },
  async inject(fault, ctx) {
    const host = targetOrFirst(fault, ctx.rig, 'coordinator');
    const offsetS = fault.offsetS;
    if (offsetS === undefined || offsetS === 0) throw new FaultNotLanded('a clock step needs a non-zero offsetS');
    const remote = ctx.remote(host);
    const procs = (await ctx.engine.processes()).filter((p) => p.host === host && p.pid !== null);
    if (procs.length === 0) throw new FaultNotLanded(`no running engine process on ${host}`, { host });
    for (const p of procs) {
      if (!(await processUnderControlledClock(remote, p.pid!))) {
        throw new FaultNotLanded(`${host}: the engine's ${p.role} (pid ${p.pid}) does not run under the host's controlled clock, so its clock cannot be stepped`, { host, pid: p.pid });
      }
    }
    await setClockOffset(remote, offsetS);
    const seen = await probeClockOffset(remote);
    if (Math.abs(seen.offsetS - offsetS) > 2) {
      await setClockOffset(remote, 0).catch(() => {});
      throw new FaultNotLanded(`${host}: the controlled clock reads ${seen.offsetS} s off, not ${offsetS} s`, { host, seen });
    }
    ctx.log(`stepped the engine clock on ${host} by ${offsetS} s (probe: ${seen.offsetS} s)`);
    return {
      evidence: { host, offsetS, probeOffsetS: seen.offsetS, spec: seen.spec, pids: procs.map((p) => ({ role: p.role, pid: p.pid })) },
      deadMan: undoClockStep(host, clockFile(remote.host)),
      async heal() {
        await setClockOffset(remote, 0);
        const back = await probeClockOffset(remote);
        if (Math.abs(back.offsetS) > 2) throw new Error(`${host}: the controlled clock still reads ${back.offsetS} s off after the step back`);
        return { host, offsetS: 0, probeOffsetS: back.offsetS };
      },
    };
  },
};
