/**
 * Named fault points, armed at run time.
 *
 * The harness writes <dataDir>/clink/faults/armed.json on a host: {"<point>": remainingCount}.
 * When a process reaches an armed point it decrements the count (atomic rewrite), appends
 * a durable fired record to fired.jsonl (fsync), and SIGKILLs itself, so the kill lands at
 * that exact protocol instant. Checking is cheap: the file is re-read only when its mtime
 * or size changes.
 *
 * A point armed as `pause@<point>` (engine/armed-points.ts) stops the process there instead
 * (SIGSTOP to itself, recorded first with action 'pause'); when the harness resumes it
 * (SIGCONT), it logs how long it was stopped and goes on from that instant: the zombie that
 * wakes up mid-protocol believing nothing happened.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { MANDATORY_FAULT_POINTS as MANDATORY } from '../engine.ts';
import { armedKey } from '../armed-key.ts';
import { appendLineDurable, writeFileAtomic } from './durable-log.ts';

export const SINK_FAULT_POINTS = [
  'sink.before-prepare',
  'sink.after-prepare',
  'sink.before-commit',
  'sink.after-commit',
  'sink.recover.before-commit',
  'sink.recover.after-commit',
] as const;
export const COORDINATOR_FAULT_POINTS = ['coordinator.before-complete-record', 'coordinator.after-complete-record'] as const;
export const FAULT_POINTS: readonly string[] = [...SINK_FAULT_POINTS, ...COORDINATOR_FAULT_POINTS];
/** Reached only while a subtask recovers: they fire only when something (a worker kill) causes a recovery. */
export const RECOVERY_FAULT_POINTS: readonly string[] = ['sink.recover.before-commit', 'sink.recover.after-commit'];
/** The plug contract's mandatory points (engine/engine.ts); Clink reaches all of them. */
export const MANDATORY_FAULT_POINTS: readonly string[] = MANDATORY;

export function faultsDir(clinkDir: string): string {
  return path.join(clinkDir, 'faults');
}

export interface FiredRecord {
  point: string;
  host: string;
  role: 'worker' | 'coordinator';
  at: string;
  pid: number;
  checkpointId?: number;
  epoch?: number;
  /** 'pause' when the process stopped itself instead of dying. */
  action?: 'pause';
}

export class FaultPoints {
  readonly armedFile: string;
  readonly firedFile: string;
  readonly host: string;
  readonly role: 'worker' | 'coordinator';
  #cacheKey = '';
  #armed: Record<string, number> = {};
  /** Replaced in tests; in production it SIGKILLs this process. */
  kill: () => void = () => process.kill(process.pid, 'SIGKILL');
  /** Replaced in tests; in production it SIGSTOPs this process (returning once it is continued). */
  stop: () => void = () => process.kill(process.pid, 'SIGSTOP');
  /** Where a paused point says it was resumed (the process's log). */
  log: (line: string) => void = (line) => process.stderr.write(`${new Date().toISOString()} ${line}\n`);
  /**
   * What a kill waits for, when set (the worker: engine/clink/sink/completions.ts): `busy()`
   * counts what must not be in flight when the process dies, `settled()` resolves when none
   * is. A point armed to kill waits until busy() is 0, then fires in the same synchronous step
   * (so nothing new starts in between), or fires anyway after maxWaitMs. A pause never waits.
   */
  beforeKill?: { what: string; busy: () => number; settled: () => Promise<void>; maxWaitMs: number };

  constructor(clinkDir: string, host: string, role: 'worker' | 'coordinator') {
    this.armedFile = path.join(faultsDir(clinkDir), 'armed.json');
    this.firedFile = path.join(faultsDir(clinkDir), 'fired.jsonl');
    this.host = host;
    this.role = role;
  }

  #load(): Record<string, number> {
    let key: string;
    try {
      const st = statSync(this.armedFile);
      key = `${st.mtimeMs}:${st.size}:${st.ino}`;
    } catch {
      this.#cacheKey = '';
      this.#armed = {};
      return this.#armed;
    }
    if (key !== this.#cacheKey) {
      try {
        this.#armed = existsSync(this.armedFile) ? (JSON.parse(readFileSync(this.armedFile, 'utf8')) as Record<string, number>) : {};
      } catch {
        this.#armed = {};
      }
      this.#cacheKey = key;
    }
    return this.#armed;
  }

  /** True when the point is armed to kill (a positive count without `pause@`). */
  isArmedToKill(point: string): boolean {
    return (this.#load()[point] ?? 0) > 0;
  }

  /** True when the point is armed with a positive count (to kill or to pause). */
  isArmed(point: string): boolean {
    const armed = this.#load();
    return (armed[point] ?? 0) > 0 || (armed[armedKey(point, 'pause')] ?? 0) > 0;
  }

  /**
   * Reaches a point. Armed to kill: record, then kill (the returned promise never settles);
   * returns true when it fired (only observable when `kill` is replaced, in tests). Armed to
   * pause: record, stop this process, and once continued log how long it was stopped and
   * return false: the caller goes on from the point.
   */
  reach(point: string, info: { checkpointId?: number; epoch?: number } = {}): boolean {
    const armed = this.#load();
    const key = (armed[point] ?? 0) > 0 ? point : (armed[armedKey(point, 'pause')] ?? 0) > 0 ? armedKey(point, 'pause') : null;
    if (key === null) return false;
    const pause = key !== point;
    const next = { ...armed, [key]: armed[key]! - 1 };
    if (next[key]! <= 0) delete next[key];
    writeFileAtomic(this.armedFile, JSON.stringify(next));
    const rec: FiredRecord = { point, host: this.host, role: this.role, at: new Date().toISOString(), pid: process.pid, ...info, ...(pause ? { action: 'pause' as const } : {}) };
    appendLineDurable(this.firedFile, JSON.stringify(rec));
    if (!pause) {
      this.kill();
      return true;
    }
    const place = `${info.epoch !== undefined ? `epoch ${info.epoch}` : ''}${info.checkpointId !== undefined ? `${info.epoch !== undefined ? ', ' : ''}checkpoint ${info.checkpointId}` : ''}`;
    this.log(`clink fault point ${point}: pid ${process.pid} stopping itself (SIGSTOP)${place ? ` at ${place}` : ''}`);
    const stoppedAt = Date.now();
    this.stop();
    this.log(`clink fault point ${point}: pid ${process.pid} resumed after ${Date.now() - stoppedAt} ms stopped${place ? ` at ${place}` : ''}; going on from the point`);
    return false;
  }

  /**
   * The SinkContext.faultPoint shape: never settles when it fires a kill; goes on after a pause.
   * Armed to kill with `beforeKill` set: waits first until nothing it counts is in flight.
   */
  async reachAsync(point: string, info?: { checkpointId?: number; epoch?: number }): Promise<void> {
    const q = this.beforeKill;
    if (q && q.busy() > 0 && this.isArmedToKill(point)) {
      const t0 = Date.now();
      const first = q.busy();
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, q.maxWaitMs)));
      while (q.busy() > 0 && Date.now() - t0 < q.maxWaitMs) await Promise.race([q.settled(), late]);
      clearTimeout(timer);
      const left = q.busy();
      this.log(
        `clink fault point ${point}: pid ${process.pid} waited ${Date.now() - t0} ms for ${first} ${q.what} in flight in this process before its kill` +
          (left > 0 ? `; killing with ${left} still in flight (the wait is at most ${q.maxWaitMs} ms)` : ''),
      );
    }
    // No await between the wait's last check and the kill: nothing new starts in between.
    if (this.reach(point, info)) await new Promise<never>(() => undefined);
  }
}

/** Where each point is reached in Clink's own code, for the report (the process SIGKILLs itself there). */
export const CLINK_FAULT_POINT_INJECTION: Readonly<Record<string, string>> = {
  'sink.before-prepare': "a call in Clink's sink at the start of prepare(): the barrier reached, nothing staged",
  'sink.after-prepare': "a call in Clink's sink at the end of prepare(): the parts staged, the handles not yet in a checkpoint",
  'coordinator.before-complete-record': "a call in Clink's coordinator before the completed checkpoint is appended to its durable log",
  'coordinator.after-complete-record': "a call in Clink's coordinator after the completed checkpoint is appended (fsync), before any worker is notified",
  'sink.before-commit': "a call in Clink's sink at the start of commit(): notified, CompleteMultipartUpload not sent",
  'sink.after-commit': "a call in Clink's sink at the end of commit(): every upload completed, the commit not acknowledged",
  'sink.recover.before-commit': "a call in Clink's sink in recover(), before each restored handle is completed again",
  'sink.recover.after-commit': "a call in Clink's sink in recover(), after each restored handle is completed again",
};
