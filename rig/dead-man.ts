/**
 * Dead-man heals: a fault applied to a host carries a timer on that host itself, set when
 * the fault lands, which undoes the fault when the fault's duration plus a margin have
 * passed. The controller disarms it when it heals the fault as planned. So a controller that
 * dies (SIGKILL, a crash, the operations host powered off) or loses the network leaves no
 * host partitioned, paused, stepped or full for longer than that (issue 30 item 4).
 *
 * The timer is a shell started with setsid, its descriptors closed, so it outlives the SSH
 * session that started it: `bash -c ': clink-qual-deadman:<faultId>; sleep N; <undo>'`. The
 * marker in its command line finds it again (`pgrep -f`), on the host or by the preflight's
 * heal of everything (rig/faults.ts healAll), which disarms every timer before it undoes
 * every fault itself. Each undo script is idempotent: a fault the controller already healed
 * is left as it is.
 */
import { shQuote } from './process.ts';
import type { Remote } from './remote.ts';
import { removeTaggedRulesCommand } from './services.ts';

/** How long after a fault's planned duration its host undoes it by itself. */
export const DEAD_MAN_MARGIN_S = 30;

/** The marker in a timer's command line: `clink-qual-deadman:<faultId>` (every timer's when faultId is omitted). */
export function deadManMarker(faultId?: string): string {
  if (faultId !== undefined && !/^[A-Za-z0-9._-]{1,40}$/.test(faultId)) throw new Error(`bad fault id ${faultId}`);
  return faultId === undefined ? 'clink-qual-deadman:' : `clink-qual-deadman:${faultId};`;
}

/** What a host runs to undo a fault by itself: a shell script, idempotent. */
export interface DeadManHeal {
  /** The host whose own timer undoes the fault. */
  host: string;
  /** The undo, as a shell script run on that host. */
  script: string;
  /** In words, for the evidence: what the script undoes. */
  what: string;
}

/** The undo of a fault's tagged iptables rules (partition, packet loss). */
export function undoRules(host: string, faultId: string): DeadManHeal {
  return { host, script: removeTaggedRulesCommand(faultId), what: `remove the iptables rules tagged clink-qual:${faultId}` };
}

/** The undo of a SIGSTOP: SIGCONT to that PID (nothing when it is gone). */
export function undoPause(host: string, pid: number): DeadManHeal {
  if (!Number.isInteger(pid) || pid <= 1) throw new Error(`bad pid ${pid}`);
  return { host, script: `kill -CONT ${pid} 2>/dev/null; true`, what: `SIGCONT pid ${pid}` };
}

/** The undo of a clock step: the host's controlled clock file back to '+0'. */
export function undoClockStep(host: string, clockFile: string): DeadManHeal {
  return { host, script: `[ -f ${shQuote(clockFile)} ] && echo +0 > ${shQuote(clockFile)}; true`, what: `${clockFile} back to +0` };
}

/** The undo of a full disk: the fault's ballast files removed. */
export function undoBallast(host: string, dir: string, ballastPrefix: string, faultId: string): DeadManHeal {
  return { host, script: `rm -f -- ${shQuote(dir)}/${shQuote(`${ballastPrefix}-${faultId}`)}*; true`, what: `remove ${dir}/${ballastPrefix}-${faultId}*` };
}

/** The command that starts a timer: after afterS seconds the script runs, detached from the SSH session. */
export function armCommand(faultId: string, afterS: number, script: string): string {
  if (!(afterS > 0 && afterS < 7 * 86_400)) throw new Error(`dead-man delay out of range: ${afterS}`);
  const body = `: ${deadManMarker(faultId)} sleep ${Math.ceil(afterS)}; ${script}`;
  return `setsid bash -c ${shQuote(body)} </dev/null >/dev/null 2>&1 & echo $!`;
}

/** The command that stops a fault's timer (every timer when faultId is omitted), its sleep included; prints how many. */
export function disarmCommand(faultId?: string): string {
  // "[c]link..." matches the marker but not this command's own text, which holds the pattern.
  const m = `[c]${deadManMarker(faultId).slice(1).replace(/[.]/g, '\\.')}`;
  // The timer's shell dies first (SIGKILL: it must not run its undo when its sleep ends),
  // then its sleep, found before the shell went (an orphan has another parent).
  return `n=0; for p in $(pgrep -f -- ${shQuote(m)}); do c=$(pgrep -P "$p" | tr '\\n' ' '); kill -KILL "$p" 2>/dev/null && n=$((n+1)); [ -n "$c" ] && kill $c 2>/dev/null; done; echo $n`;
}

/** Sets the timer on its host; returns its PID and when it fires (for the fault's evidence). */
export async function armDeadMan(remote: Remote, faultId: string, afterS: number, heal: DeadManHeal): Promise<{ host: string; pid: number; afterS: number; undo: string }> {
  const r = await remote.exec(armCommand(faultId, afterS, heal.script));
  return { host: heal.host, pid: Number(r.stdout.trim()), afterS: Math.ceil(afterS), undo: heal.what };
}

/** Stops a fault's timer (all of them without a fault id); returns how many were stopped. */
export async function disarmDeadMan(remote: Remote, faultId?: string): Promise<number> {
  const r = await remote.exec(disarmCommand(faultId), { check: false });
  return Number(r.stdout.trim()) || 0;
}
