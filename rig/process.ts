/**
 * Services on a host: started detached over a Remote, one folder each under
 * <dataDir>/services/<name>/ holding run.sh, pid and out.log. The pid file holds the PID
 * of the real program (run.sh ends in `exec`), so signals land on it, not on a wrapper.
 *
 * A process counts as alive when /proc/<pid> exists and it is not a zombie.
 */
import { QualError } from '../lib/errors.ts';
import { poll, waitUntil } from '../lib/retry.ts';
import type { Remote } from './remote.ts';

export interface ServiceSpec {
  name: string;
  /** The program and its arguments, already shell-quoted where needed; run with `exec`. */
  command: string;
  env?: Record<string, string>;
  cwd?: string;
}

export function serviceDir(remote: Remote, name: string): string {
  return `${remote.host.dataDir}/services/${name}`;
}

export function shQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * Bash: `svc_pid DIR` sets p to the PID in the service folder DIR's pid file while that process
 * lives, else to nothing. A PID is reused once its process is gone (pid_max is often 32768),
 * so the process must also have the start time recorded beside it (pid.start, /proc/PID/stat's
 * 22nd field, written at the start); a folder without pid.start is taken at its PID alone.
 * Without this, a worker killed by a fault, whose PID another process took meanwhile, would be
 * taken as running: not started again, and that other process signalled in its place.
 */
export const SERVICE_PID_SH = `svc_pid() { p=$(cat "$1/pid" 2>/dev/null); [ -n "$p" ] && [ -r /proc/$p/stat ] || { p=; return 0; }; w=$(cat "$1/pid.start" 2>/dev/null); [ -z "$w" ] || [ "$(sed 's/.*) //' /proc/$p/stat 2>/dev/null | cut -d' ' -f20)" = "$w" ] || p=; return 0; }`;

/** Starts the service detached (setsid, stdio to out.log, appended). Returns its PID. */
export async function startService(remote: Remote, spec: ServiceSpec): Promise<number> {
  const dir = serviceDir(remote, spec.name);
  const env = Object.entries(spec.env ?? {}).map(([k, v]) => `export ${k}=${shQuote(v)}`).join('\n');
  const script = ['#!/bin/bash', env, `cd ${shQuote(spec.cwd ?? dir)}`, `exec ${spec.command}`, ''].join('\n');
  await remote.exec(`mkdir -p ${shQuote(dir)}`);
  await remote.writeFile(`${dir}/run.sh`, script, { mode: 0o700 });
  const r = await remote.exec(
    // The braces keep the background job to setsid alone (its stdio redirected), so the SSH
    // channel closes at once and $! is the program's PID (setsid, nohup and run.sh all exec).
    // pid.start: the process's start time, so that a later reader knows a reused PID (SERVICE_PID_SH).
    `cd ${shQuote(dir)} && echo "=== start $(date -u +%FT%TZ)" >> out.log && { setsid nohup bash run.sh >> out.log 2>&1 < /dev/null & echo $! > pid; sed 's/.*) //' /proc/$!/stat 2>/dev/null | cut -d' ' -f20 > pid.start; } && cat pid`,
  );
  const pid = Number(r.stdout.trim());
  if (!Number.isInteger(pid) || pid <= 0) throw new QualError('REMOTE_COMMAND_FAILED', `${remote.host.name}: could not start ${spec.name}: ${r.stderr}`);
  return pid;
}

/** The service's recorded PID if that process is alive, else null. */
export async function servicePid(remote: Remote, name: string): Promise<number | null> {
  const dir = serviceDir(remote, name);
  const r = await remote.exec(
    `${SERVICE_PID_SH}; svc_pid ${shQuote(dir)}; [ -n "$p" ] || exit 0; s=$(sed 's/.*) //' /proc/$p/stat 2>/dev/null | cut -d' ' -f1); [ -n "$s" ] && [ "$s" != Z ] || exit 0; echo $p`,
    { check: false },
  );
  const pid = Number(r.stdout.trim());
  return Number.isInteger(pid) && pid > 0 ? pid : null;
}

/** True when the PID names a live (non-zombie) process on the host. */
export async function pidAlive(remote: Remote, pid: number): Promise<boolean> {
  const r = await remote.exec(`[ -r /proc/${pid}/stat ] && [ "$(awk '{print $3}' /proc/${pid}/stat)" != Z ] && echo alive`, { check: false });
  return r.stdout.trim() === 'alive';
}

/** Sends a signal to the service's process. Returns the PID signalled, or null if it was not running. */
export async function signalService(remote: Remote, name: string, signal: 'KILL' | 'TERM' | 'STOP' | 'CONT'): Promise<number | null> {
  const pid = await servicePid(remote, name);
  if (pid === null) return null;
  await remote.exec(`kill -${signal} ${pid}`, { check: false });
  return pid;
}

/** Waits until the PID is gone (or a zombie). Throws after timeoutMs. */
export async function waitPidGone(remote: Remote, pid: number, timeoutMs = 15_000): Promise<void> {
  if (await poll(async () => !(await pidAlive(remote, pid)), { deadlineMs: timeoutMs, intervalMs: 100 })) return;
  throw new QualError('READINESS_TIMEOUT', `${remote.host.name}: process ${pid} still alive after ${timeoutMs} ms`);
}

/** Stops the service: TERM, then KILL after graceMs. Idempotent. */
export async function stopService(remote: Remote, name: string, graceMs = 10_000): Promise<void> {
  const pid = await signalService(remote, name, 'TERM');
  if (pid === null) return;
  await remote.exec(`kill -CONT ${pid}`, { check: false }); // a paused process cannot act on TERM
  try {
    await waitPidGone(remote, pid, graceMs);
  } catch {
    await remote.exec(`kill -KILL ${pid}`, { check: false });
    await waitPidGone(remote, pid, 10_000);
  }
}

/** The last `lines` lines of the service's log. */
export async function serviceLogTail(remote: Remote, name: string, lines = 50): Promise<string> {
  const r = await remote.exec(`tail -n ${lines} ${shQuote(serviceDir(remote, name))}/out.log 2>/dev/null`, { check: false });
  return r.stdout;
}

/** Polls `probe` until it returns true, or throws READINESS_TIMEOUT naming what was awaited. */
export async function waitFor(what: string, probe: () => Promise<boolean>, timeoutMs: number, intervalMs = 250): Promise<void> {
  await waitUntil(probe, { what, deadlineMs: timeoutMs, intervalMs });
}
