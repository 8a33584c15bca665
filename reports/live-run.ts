/**
 * A run that is still going, from its own files: the phase it is in, the progress figures
 * (events produced and committed, faults landed of the plan, checkpoints) and when the soak
 * should end. Whether the run is live is the caller's to say (the rig lock names the
 * command holding the rig); nothing here reads anything but the run directory.
 */
import { phaseSpans, soakStart, type RunEvidence } from './evidence.ts';
import type { RigLockHolder } from '../rig/lock.ts';

/** Whether the rig lock's live holder is running this run: no verdict yet, and the run began after the lock was taken (or the lock names it). */
export function isLiveRun(ev: RunEvidence, holder: RigLockHolder | undefined): boolean {
  if (!holder || ev.verdict) return false;
  if (holder.runId) return holder.runId === ev.dirName || holder.runId === ev.provenance?.runId;
  const began = Date.parse(ev.provenance?.startedAt ?? ev.phases[0]?.t ?? '');
  return Number.isFinite(began) && began >= Date.parse(holder.startedAt) - 1000;
}

/** Lines describing a live run's progress at nowMs. */
export function liveProgress(ev: RunEvidence, holder: RigLockHolder, nowMs: number): string[] {
  const spans = phaseSpans(ev);
  const open = [...spans].reverse().find((s) => s.endMs === undefined);
  const phase = open ? `${open.phase} (for ${Math.round((nowMs - open.startMs) / 1000)} s)` : spans.length ? `between phases (last: ${spans[spans.length - 1]!.phase})` : 'starting (no phase mark yet)';
  const last = ev.samples[ev.samples.length - 1];
  const landed = new Set(ev.chaos.filter((c) => c.phase === 'landed').map((c) => c.faultId)).size;
  const lines = [`LIVE       held by ${holder.command} (pid ${holder.pid}, since ${holder.startedAt}); no verdict yet`, `phase      ${phase}`];
  if (last) lines.push(`progress   ${last.produced.toLocaleString('en-US')} events produced, ${last.events.toLocaleString('en-US')} committed, ${last.objects.toLocaleString('en-US')} objects (sample at ${last.t})`);
  if (ev.plan) lines.push(`faults     ${landed} of ${ev.plan.length} planned landed`);
  if (ev.checkpoints.length) lines.push(`checkpoints ${ev.checkpoints.length} completed`);
  const soak = soakStart(ev);
  const soakS = ev.campaign?.workload.soakS;
  if (soak && soakS !== undefined) {
    const endMs = soak.ms + soakS * 1000;
    lines.push(`ETA        soak ${endMs > nowMs ? `ends in ${Math.round((endMs - nowMs) / 1000)} s` : 'over'} (${new Date(endMs).toISOString()}); then drain (up to ${ev.campaign!.deadlines.drainS} s) and recount`);
  } else if (soakS !== undefined) lines.push(`ETA        the soak (${soakS} s) has not started`);
  return lines;
}
