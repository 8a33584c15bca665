/**
 * Named fault points, armed at run time.
 *
 * The harness writes <dataDir>/clink/faults/armed.json on a host: {"<point>": remainingCount}.
 * When a process reaches an armed point it decrements the count (atomic rewrite), appends
 * a durable fired record to fired.jsonl (fsync), and SIGKILLs itself, so the kill lands at
 * that exact protocol instant. Checking is cheap: the file is re-read only when its mtime
 * or size changes.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { MANDATORY_FAULT_POINTS as MANDATORY } from '../engine.ts';
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

  /** True when the point is armed with a positive count. */
  isArmed(point: string): boolean {
    return (this.#load()[point] ?? 0) > 0;
  }

  /**
   * Reaches a point. If armed: record, then kill (the returned promise never settles).
   * Returns true when it fired (only observable when `kill` is replaced, in tests).
   */
  reach(point: string, info: { checkpointId?: number; epoch?: number } = {}): boolean {
    const armed = this.#load();
    const n = armed[point] ?? 0;
    if (n <= 0) return false;
    const next = { ...armed, [point]: n - 1 };
    if (next[point]! <= 0) delete next[point];
    writeFileAtomic(this.armedFile, JSON.stringify(next));
    const rec: FiredRecord = { point, host: this.host, role: this.role, at: new Date().toISOString(), pid: process.pid, ...info };
    appendLineDurable(this.firedFile, JSON.stringify(rec));
    this.kill();
    return true;
  }

  /** The SinkContext.faultPoint shape: never settles when it fires. */
  async reachAsync(point: string, info?: { checkpointId?: number; epoch?: number }): Promise<void> {
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
