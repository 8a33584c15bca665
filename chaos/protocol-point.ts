/**
 * Protocol point: arm a named fault point through the engine plug; the engine process
 * that reaches it records the firing durably and SIGKILLs itself at that exact protocol
 * instant. Landing evidence is the fired record and the process gone; heal restarts it.
 *
 * Points reached only during a recovery (the plug's recoveryFaultPoints) fire only when
 * something causes a recovery; campaigns compose them with a worker kill
 * (campaigns/quick.yaml), and the controller lets that later step go once the point is
 * armed instead of once it fired.
 */
import type { RigState } from '../rig/types.ts';
import { poll } from '../lib/retry.ts';
import { PROTOCOL_POINT_VARIANTS } from '../lib/evidence.ts';
import { undoPause } from '../rig/dead-man.ts';
import { processState, resumePid } from '../rig/faults.ts';
import { pidAlive, waitPidGone } from '../rig/process.ts';
import type { FaultPointFiring } from '../engine/engine.ts';
import { FaultNotLanded, type FaultContext, type FaultPackage, type LandedFault } from './fault.ts';


/** How long an armed point may take to fire: a few checkpoint intervals. */
export function fireDeadlineMs(checkpointIntervalMs: number): number {
  return Math.max(30_000, checkpointIntervalMs * 4 + 10_000);
}

/**
 * How long an armed point may take to fire: a few checkpoints; a recovery-only point also
 * waits out the recovery that reaches it (the campaign's recovery deadline: an engine whose
 * failover takes 30 s or more, such as Flink's, re-commits only after it).
 */
export function pointDeadlineMs(point: string, ctx: Pick<FaultContext, 'checkpointIntervalMs' | 'recoveryDeadlineMs' | 'engine'>): number {
  const base = fireDeadlineMs(ctx.checkpointIntervalMs);
  return ctx.engine.recoveryFaultPoints?.includes(point) ? base + (ctx.recoveryDeadlineMs ?? 0) : base;
}

/**
 * The host a point is armed on: the plan's target, where the plan's 'coordinator' (its word
 * for the coordinator of coordinator.* points, campaigns/plan.ts) is the rig's coordinator
 * host, whatever an inventory names it (the local rig's is named coordinator).
 */
export function armedHost(target: string | undefined, rig: Pick<RigState, 'hosts'>): string | undefined {
  if (target !== 'coordinator' || rig.hosts.some((h) => h.name === target)) return target;
  return rig.hosts.find((h) => h.roles.includes('coordinator'))?.name ?? target;
}

export const protocolPoint: FaultPackage = {
  kind: 'protocol-point',
  spec: {
    label: 'Kill at a named protocol point (the process kills itself there)',
    summary: 'arm a named point; the process kills itself there.',
    colour: '#ff7f0e',
    targets: { roles: ['worker'], what: 'workers (for sink.* points)', defaultRoles: [] },
    fields: { required: [], optional: ['points', 'point', 'variant', 'durationS'] },
    // kill (the default): the process SIGKILLs itself at the point. pause: it SIGSTOPs itself
    // there and is held for durationS, then continued (SIGCONT): a zombie at an exact instant.
    variants: PROTOCOL_POINT_VARIANTS,
    evidence: "the engine's fired record (point, host, PID, checkpoint, epoch) and the process gone (kill) or stopped, state T (pause); the restarted PID at the heal, or for a pause the same PID continued",
  },
  async inject(fault, ctx, hooks) {
    const point = fault.point;
    if (!point) throw new FaultNotLanded('protocol-point fault without a point');
    if (!ctx.engine.faultPoints.includes(point)) throw new FaultNotLanded(`the engine has no fault point ${point}`);
    const firingKey = (f: FaultPointFiring) => `${f.host}/${f.pid}/${f.point}/${f.at}`;
    const before = new Set((await ctx.engine.firedFaultPoints()).map(firingKey));
    const armOn = armedHost(fault.target, ctx.rig);
    await ctx.engine.armFaultPoint(point, { times: 1, ...(armOn ? { host: armOn } : {}), ...(fault.variant === 'pause' ? { action: 'pause' as const } : {}) });
    ctx.log(`armed ${point}${armOn ? ` on ${armOn}` : ''}`);
    // A recovery-only point fires only when a later step causes a recovery: let it go now.
    if (ctx.engine.recoveryFaultPoints?.includes(point)) hooks?.ready();
    const firing = await poll(async () => (await ctx.engine.firedFaultPoints()).find((f) => f.point === point && !before.has(firingKey(f))), {
      deadlineMs: pointDeadlineMs(point, ctx),
      intervalMs: 500,
    });
    if (!firing) {
      await ctx.engine.disarmFaultPoints();
      throw new FaultNotLanded(`${point} did not fire within ${pointDeadlineMs(point, ctx) / 1000} s`, { point });
    }
    const remote = ctx.remote(firing.host);
    if (fault.variant === 'pause') return paused(point, firing, ctx);
    if (await pidAlive(remote, firing.pid)) await waitPidGone(remote, firing.pid);
    const { host, role } = firing;
    ctx.log(`${point} fired on ${host} (pid ${firing.pid}, checkpoint ${firing.checkpointId ?? '?'})`);
    return {
      evidence: { point, firedOn: host, role, pid: firing.pid, pidGone: true, at: firing.at, checkpointId: firing.checkpointId, epoch: firing.epoch },
      async heal() {
        const p = await ctx.engine.restart(host, role);
        return { host, role, restartedPid: p.pid };
      },
    };
  },
};

/**
 * A point that stopped its process (variant pause): the process must be seen stopped
 * (state T); it is held for durationS by the controller (a dead-man timer on its host
 * continues it if the controller dies), then continued, and goes on from the point. If it
 * did not survive its own wake-up, it is restarted so that the campaign goes on.
 */
async function paused(point: string, firing: FaultPointFiring, ctx: FaultContext): Promise<LandedFault> {
  const { host, role, pid } = firing;
  const remote = ctx.remote(host);
  // The fired record is written just before the process stops itself: give the stop a moment.
  const state = (await poll(async () => {
    const s = await processState(remote, pid);
    return s === 'T' || s === 'gone' ? s : undefined;
  }, { deadlineMs: 10_000, intervalMs: 100 })) ?? (await processState(remote, pid));
  if (state !== 'T') {
    await resumePid(remote, pid).catch(() => undefined);
    throw new FaultNotLanded(`${point} fired on ${host} (pid ${pid}) but the process is ${state === 'gone' ? 'gone' : `in state ${state}`}, not stopped (T)`, { point, host, pid, state });
  }
  ctx.log(`${point} fired on ${host}: pid ${pid} stopped itself there (checkpoint ${firing.checkpointId ?? '?'})`);
  return {
    evidence: { point, firedOn: host, role, pid, action: 'pause', stateAfter: 'T', at: firing.at, checkpointId: firing.checkpointId, epoch: firing.epoch },
    deadMan: undoPause(host, pid),
    async heal() {
      const s = await resumePid(remote, pid);
      if (s !== 'gone' && s !== 'T') return { host, role, pid, signal: 'SIGCONT', stateAfter: s, samePid: true };
      const p = await ctx.engine.restart(host, role);
      return { host, role, pid, signal: 'SIGCONT', exitedOnWake: true, restartedPid: p.pid };
    },
  };
}
