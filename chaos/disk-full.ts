/**
 * Disk full: the engine's state filesystem on one host (rig/state-fs.ts: the coordinator's
 * checkpoint log, a worker's sink journal) runs out of space mid-run. Every write the engine
 * makes there fails with ENOSPC, possibly half-way through a record. A correct engine either
 * stops loudly or goes on correctly; it never resumes from a silently truncated history.
 *
 * On an inventory host the fault refuses (FaultNotLanded, nothing written) unless the state
 * directory sits on a filesystem of its own: its mount point is not / and not the one holding
 * /var or /home (rig/disk.ts ownFilesystemRefusal). `doctor --inventory --campaign` checks the
 * same before the run. The local rig's hosts each have a tmpfs there, and are not asked.
 *
 * Landing evidence: the filesystem has no space left and a write probe fails with ENOSPC.
 * Heal: the ballast is removed (evidence: the probe writes again), and any engine process on
 * the host that stopped itself meanwhile is started again, recorded as `restarted` — that is
 * the "stop loudly" branch, and its log says why it stopped.
 */
import { undoBallast } from '../rig/dead-man.ts';
import { BALLAST_PREFIX, fillFilesystem, freeFilesystem, ownFilesystemCheck } from '../rig/disk.ts';
import { hostStateDir } from '../rig/state-fs.ts';
import { FaultNotLanded, targetOrFirst, type FaultPackage } from './fault.ts';

export const diskFull: FaultPackage = {
  kind: 'disk-full',
  spec: {
    label: "Engine's state filesystem filled until writes failed (ENOSPC), then freed",
    summary: "the engine's state filesystem on a host is filled until writes fail with ENOSPC, then freed.",
    colour: '#1f77b4',
    targets: { roles: ['worker', 'coordinator'], what: 'workers or the coordinator', defaultRoles: ['worker'] },
    fields: { required: ['durationS'], optional: [] },
    evidence: 'the ballast bytes, 0 bytes available, a write probe failing with ENOSPC; the space back at the heal',
  },
  async inject(fault, ctx) {
    const host = targetOrFirst(fault, ctx.rig, 'worker');
    const spec = ctx.rig.hosts.find((h) => h.name === host);
    if (!spec) throw new FaultNotLanded(`no host named ${host} in the rig`);
    const dir = hostStateDir(spec);
    const remote = ctx.remote(host);
    // A real machine's disk is never filled: on an inventory host the state directory must sit on a
    // filesystem of its own (not the one holding /, /var or /home). The local rig's hosts each have a tmpfs there.
    if (ctx.rig.kind === 'inventory') {
      const refused = await ownFilesystemCheck(remote, dir);
      if (refused) throw new FaultNotLanded(`${host}: refused: ${refused}`, { host, dir, refused });
    }
    const before = (await ctx.engine.processes()).filter((p) => p.host === host);
    let filled;
    try {
      filled = await fillFilesystem(remote, dir, fault.id);
    } catch (err) {
      await freeFilesystem(remote, dir, fault.id).catch(() => {});
      throw new FaultNotLanded((err as Error).message, { host, dir });
    }
    ctx.log(`filled ${host}:${dir} (${filled.ballastBytes} bytes of ballast; probe: ${filled.probeError})`);
    return {
      evidence: { host, ...filled, enginePids: before.map((p) => ({ role: p.role, pid: p.pid })) },
      deadMan: undoBallast(host, dir, BALLAST_PREFIX, fault.id),
      async heal() {
        const freed = await freeFilesystem(remote, dir, fault.id);
        if (freed.probeError !== null) throw new Error(`${host}: ${dir} still refuses writes after the ballast was removed: ${freed.probeError}`);
        const restarted: { role: string; oldPid: number | null; pid: number | null }[] = [];
        for (const p of (await ctx.engine.processes()).filter((x) => x.host === host)) {
          if (p.pid !== null) continue;
          const was = before.find((b) => b.role === p.role)?.pid ?? null;
          const again = await ctx.engine.restart(host, p.role);
          restarted.push({ role: p.role, oldPid: was, pid: again.pid });
        }
        return { host, ...freed, restarted };
      },
    };
  },
};
