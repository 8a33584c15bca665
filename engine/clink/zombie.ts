/**
 * Clink's reading of a zombie's trail (Engine.zombieTrail) from its collected logs
 * (logs/<host>/out.log). A worker stopped (a pause) logs nothing until resumed; a worker cut
 * off from the coordinator (a partition) runs on, so its lines count from the cut. Clink's
 * fences, in the order a zombie worker meets them:
 *  - its lease: a worker that hears nothing from the coordinator for fencingTimeoutMs stops
 *    its tasks ("fencing (stopping N tasks of epoch E)"); a stopped process cannot, so on
 *    waking it may still hold tasks of an old epoch; a cut-off one does it while cut off
 *    (quick-seaweedfs of 2026-12-05, f002: "no word from the coordinator for 4086 ms:
 *    fencing (stopping 1 tasks of epoch 3)", then "coordinator connection closed");
 *  - the connection: the coordinator drops a lost worker's connection ("worker W lost"), so
 *    what the woken process sends on it goes nowhere ("late snapshot, nothing heard …" sent
 *    into it, then "coordinator connection closed"; or "not sent, no connection");
 *  - the epoch: every redeploy raises it; the worker cancels its older tasks ("cancelled N of
 *    epoch E"), a cancelled task's snapshot is dropped ("dropped, its subtask was
 *    cancelled"), the coordinator ignores a snapshot of another epoch ("ignored a snapshot …
 *    the current epoch is E2"), and a worker ignores a completion of another epoch.
 * A late commit of a completed checkpoint needs no fence: the restore re-commits the same
 * uploads, so whichever completion comes second meets NoSuchUpload and verifies the object
 * ("already completed (NoSuchUpload), the object verified as ours"); that line is an attempt.
 * The lines are the engine's own (engine/clink/worker.ts, coordinator.ts, fault-points.ts).
 */
import type { TrailLine, ZombieTrail } from '../../lib/evidence.ts';
import { AFTER_RESUME_MS, linesBetween, zombieTrailOf, type EngineLogFile, type ZombieWindow } from '../zombie-trail.ts';

/** The coordinator's host name on Clink's rig (the lines that say a worker was lost live there). */
const COORDINATOR = 'coordinator';

/** What a resumed process tried: a point resumed, a message it could not send or that was dropped, a snapshot the coordinator ignored. */
const ATTEMPT = /resumed after \d+ ms stopped|late snapshot, nothing heard|clink sink commit: .* already completed|not sent, no connection|dropped, its subtask was cancelled|ignored a snapshot/;
/** What stopped it: its lease, a dropped connection, a cancellation of an older epoch, a message of another epoch ignored. */
const FENCE = /fencing \(stopping|coordinator connection closed|cancelled [1-9]\d* of epoch|dropped, its subtask was cancelled|ignoring complete\(|ignored a snapshot .* the current epoch is|not sent, no connection/;

/** The PID of the worker process on `host` when `beforeMs` came, from its own start line ("clink worker W pid N starting"); undefined if none. */
function startedPid(logs: readonly EngineLogFile[], host: string, beforeMs: number): number | undefined {
  const lines = linesBetween(logs, host, 0, beforeMs, { match: new RegExp(`clink worker ${escape(host)} pid \\d+ starting`) });
  const m = lines.length ? / pid (\d+) starting/.exec(lines[lines.length - 1]!.line) : null;
  return m ? Number(m[1]) : undefined;
}

/** The epoch a worker's line names last before `beforeMs` ("epoch N: deploy"), the zombie's own epoch. */
function lastEpoch(logs: readonly EngineLogFile[], host: string, beforeMs: number): number | null {
  const lines = linesBetween(logs, host, 0, beforeMs, { match: /: epoch \d+: deploy subtasks/ });
  const m = lines.length ? /: epoch (\d+): deploy/.exec(lines[lines.length - 1]!.line) : null;
  return m ? Number(m[1]) : null;
}

/** One zombie's trail from Clink's collected logs: the coordinator's lines about the worker, and the worker's own (from the resume; a cut-off one's from the cut). */
export function clinkZombieTrail(w: ZombieWindow, logs: readonly EngineLogFile[]): ZombieTrail {
  const cutOff = w.kind === 'partition';
  const stopped = Date.parse(w.stoppedAt);
  const resumed = Date.parse(w.resumedAt);
  const until = resumed + AFTER_RESUME_MS;
  // A stopped process logs nothing until it is resumed; a cut-off one runs on, and what it does from the cut counts.
  const from = cutOff ? stopped : resumed - 1000;
  // A partition's window names no PID; the worker's own start line does.
  const pid = w.pid ?? startedPid(logs, w.host, stopped);
  const lost = linesBetween(logs, COORDINATOR, stopped, resumed, { match: new RegExp(`worker ${escape(w.host)} lost \\(`) })[0] ?? null;
  const replacedBy = lost ? (linesBetween(logs, COORDINATOR, Date.parse(lost.at), until, { match: /: epoch \d+: deploying from checkpoint/ })[0] ?? null) : null;
  // The zombie's own lines after the resume (a partition: from the cut), up to its next start (a restart is not the zombie).
  const own = linesBetween(logs, w.host, from, until);
  const restart = own.findIndex((l) => / pid \d+ starting/.test(l.line) && (pid === undefined || !l.line.includes(` pid ${pid} `)));
  const mine = restart >= 0 ? own.slice(0, restart) : own;
  const aboutMe = linesBetween(logs, COORDINATOR, from, until, { match: new RegExp(`from worker ${escape(w.host)}:`) });
  const merged = [...mine, ...aboutMe].sort((a, b) => a.at.localeCompare(b.at));
  const attempts: TrailLine[] = merged.filter((l) => ATTEMPT.test(l.line));
  const fences: TrailLine[] = merged.filter((l) => FENCE.test(l.line));
  const before = lastEpoch(logs, w.host, stopped);
  const after = replacedBy ? /: epoch (\d+): deploying/.exec(replacedBy.line)?.[1] : undefined;
  return zombieTrailOf(w, { ...(pid !== undefined ? { pid } : {}), declaredLost: lost, replacedBy, attempts, fences, token: { before: before !== null ? `epoch ${before}` : null, after: after ? `epoch ${after}` : null } });
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
