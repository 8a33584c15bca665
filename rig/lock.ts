/**
 * The rig lock: one command at a time uses the rig. A second `rig up` or campaign beside a
 * running one would heal its faults, restart its services and wreck both runs.
 *
 * The lock is a file (<stateDir>/rig.lock) naming its holder: pid, the process's start time
 * (from /proc, so a reused pid is not taken for the holder), command, run id when there is
 * one, and when it was taken. It is created atomically (written to a private file, then
 * hard-linked into place, which fails when a lock is there), released when the holder exits
 * (and on a signal the holder does not handle itself, exiting 128 + the signal's number), and a lock whose holder is gone
 * (dead pid, or a live pid with another start time) is recovered by the next command.
 * A process whose ancestor holds the lock (smoke running a campaign, the test runner
 * running the rig tests) uses the rig under its ancestor's lock.
 */
import { existsSync, linkSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { QualError } from '../lib/errors.ts';
import { stateDir } from '../lib/paths.ts';

/** Who holds the rig. */
export interface RigLockHolder {
  pid: number;
  /** The process's start time in clock ticks since boot (/proc/<pid>/stat field 22), null where /proc has none. */
  procStart: number | null;
  command: string;
  runId?: string;
  /** When the lock was taken (ISO). */
  startedAt: string;
}

export function rigLockPath(): string {
  return path.join(stateDir(), 'rig.lock');
}

/** A process's parent pid and start time, from /proc/<pid>/stat; undefined when there is no such process. */
export function procStat(pid: number): { ppid: number; start: number } | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' '); // fields from the 3rd (state) on
    return { ppid: Number(f[1]), start: Number(f[19]) };
  } catch {
    return undefined;
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether the holder still runs: its pid is alive and, where /proc says, started when the lock says. */
export function holderAlive(h: RigLockHolder): boolean {
  if (!Number.isInteger(h.pid) || h.pid <= 0 || !pidAlive(h.pid)) return false;
  if (h.procStart === null) return true;
  const st = procStat(h.pid);
  return st === undefined || st.start === h.procStart;
}

/** Whether pid is this process or one of its ancestors. */
function isSelfOrAncestor(pid: number): boolean {
  for (let p = process.pid, hops = 0; p > 1 && hops < 64; hops++) {
    if (p === pid) return true;
    const st = procStat(p);
    if (!st) return false;
    p = st.ppid;
  }
  return false;
}

/** The lock's holder, or undefined when there is no lock (or it cannot be read). */
export function readRigLock(file = rigLockPath()): RigLockHolder | undefined {
  try {
    const h = JSON.parse(readFileSync(file, 'utf8')) as RigLockHolder;
    return typeof h.pid === 'number' ? h : undefined;
  } catch {
    return undefined;
  }
}

/** One line naming the holder, e.g. "pid 4242 (campaign run, run qual03-…, since 2026-…)". */
export function describeHolder(h: RigLockHolder): string {
  return `pid ${h.pid} (${h.command}${h.runId ? `, run ${h.runId}` : ''}, since ${h.startedAt})`;
}

/** The live holder of the rig, or undefined when the rig is free (no lock, or a stale one). */
export function rigHolder(file = rigLockPath()): RigLockHolder | undefined {
  const h = readRigLock(file);
  return h && holderAlive(h) ? h : undefined;
}

export interface RigLock {
  holder: RigLockHolder;
  /** False when an ancestor holds the lock and this process runs under it. */
  own: boolean;
  /** Names the run that holds the lock (a campaign learns its run id after it starts). */
  setRunId(runId: string): void;
  release(): void;
}

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * Takes the rig lock for `command`, or throws (PRECONDITION, exit 2) naming the live holder.
 * A stale lock is recovered (and logged); a lock held by an ancestor is shared.
 */
export function acquireRigLock(command: string, opts: { runId?: string; file?: string; log?: (l: string) => void } = {}): RigLock {
  const file = opts.file ?? rigLockPath();
  mkdirSync(path.dirname(file), { recursive: true });
  const st = procStat(process.pid);
  const me: RigLockHolder = { pid: process.pid, procStart: st?.start ?? null, command, ...(opts.runId ? { runId: opts.runId } : {}), startedAt: new Date().toISOString() };
  const tmp = `${file}.${process.pid}.tmp`;
  for (let attempt = 0; attempt < 3; attempt++) {
    writeFileSync(tmp, JSON.stringify(me) + '\n');
    try {
      linkSync(tmp, file);
      unlinkSync(tmp);
      return ownLock(file, me);
    } catch (err) {
      unlinkSync(tmp);
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const h = readRigLock(file);
    if (h && holderAlive(h)) {
      if (isSelfOrAncestor(h.pid)) return { holder: h, own: false, setRunId: () => {}, release: () => {} };
      throw new QualError('PRECONDITION', `the rig is in use by ${describeHolder(h)}; wait for it to finish (a second command on the rig would wreck both runs)`, { holder: h });
    }
    // Stale (dead holder, reused pid) or unreadable: move it aside, and put it back if it changed meanwhile.
    const aside = `${file}.stale.${process.pid}`;
    try {
      renameSync(file, aside);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw err;
    }
    const moved = readRigLock(aside);
    if (moved && h && (moved.pid !== h.pid || moved.startedAt !== h.startedAt) && holderAlive(moved)) {
      try {
        linkSync(aside, file);
      } catch {
        /* someone took it again meanwhile: their lock stands */
      }
      unlinkSync(aside);
      continue;
    }
    unlinkSync(aside);
    opts.log?.(`recovered a stale rig lock${h ? ` of ${describeHolder(h)}, which is no longer running` : ' (unreadable)'}`);
  }
  throw new QualError('PRECONDITION', `could not take the rig lock ${file} (it changed hands while this command tried)`);
}

function ownLock(file: string, me: RigLockHolder): RigLock {
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    process.removeListener('exit', release);
    for (const s of SIGNALS) process.removeListener(s, onSignal);
    const h = readRigLock(file);
    if (h && h.pid === me.pid && h.startedAt === me.startedAt && existsSync(file)) unlinkSync(file);
  };
  // A signal this process has no other handler for would end it without 'exit': release, then
  // exit as the shell reports a death by that signal (128 + its number).
  function onSignal(sig: NodeJS.Signals) {
    if (process.listenerCount(sig) > 1) return; // the command handles it and exits; 'exit' releases
    release();
    process.exit(128 + (os.constants.signals[sig] ?? 0));
  }
  process.on('exit', release);
  for (const s of SIGNALS) process.on(s, onSignal);
  return {
    holder: me,
    own: true,
    setRunId(runId: string) {
      me.runId = runId;
      writeFileSync(`${file}.${process.pid}.tmp`, JSON.stringify(me) + '\n');
      renameSync(`${file}.${process.pid}.tmp`, file);
    },
    release,
  };
}
