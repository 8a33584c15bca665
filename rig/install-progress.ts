/**
 * The progress of `rig install`, part by part (apt packages, kafka, minio, node, flink …),
 * with several parts running side by side:
 *
 *   kafka: start
 *   kafka: fetching Apache Kafka 4.1.1 and its dependencies from Maven Central
 *   … still running: kafka 10 s, minio 10 s
 *   kafka: installed (14.2 s)
 *   minio: failed (31.0 s)
 *   failed after 31.2 s: apt packages 0.1 s, kafka 14.2 s, minio 31.0 s (failed)
 *
 * Each part says when it starts, passes on its own notes, and ends with its time. While
 * parts run and nothing has been said for `quietMs` (10 s), one line names every running
 * part with its elapsed seconds: at most one such line each `quietMs`, whatever the number
 * of parts. The clock is injected, so tests drive it by hand.
 */

/** Time and a periodic tick; the system's by default. */
export interface ProgressClock {
  now(): number;
  /** Calls `tick` every `ms` until the returned function is called. */
  every(ms: number, tick: () => void): () => void;
}

export const systemClock: ProgressClock = {
  now: () => Date.now(),
  every(ms, tick) {
    const timer = setInterval(tick, ms);
    timer.unref(); // the heartbeat never keeps the process alive
    return () => clearInterval(timer);
  },
};

interface PartRecord {
  name: string;
  startedAt: number;
  endedAt?: number;
  failed?: boolean;
}

/** Seconds with one decimal, from milliseconds. */
function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

export class InstallProgress {
  private readonly parts: PartRecord[] = [];
  private startedAt: number | undefined;
  private lastLineAt = 0;
  private stopTicking: (() => void) | undefined;
  private readonly print: (line: string) => void;
  private readonly clock: ProgressClock;
  private readonly quietMs: number;
  private readonly tickMs: number;

  /**
   * `print` receives each line; `quietMs` is the silence after which the running parts are
   * named again; `tickMs` is how often that is checked.
   */
  constructor(print: (line: string) => void, clock: ProgressClock = systemClock, quietMs = 10_000, tickMs = 1_000) {
    this.print = print;
    this.clock = clock;
    this.quietMs = quietMs;
    this.tickMs = tickMs;
  }

  private say(line: string): void {
    this.lastLineAt = this.clock.now();
    this.print(line);
  }

  private running(): PartRecord[] {
    return this.parts.filter((p) => p.endedAt === undefined);
  }

  /** The heartbeat: names the running parts when nothing was said for quietMs. */
  private tick(): void {
    const now = this.clock.now();
    const running = this.running();
    if (!running.length || now - this.lastLineAt < this.quietMs) return;
    this.say(`… still running: ${running.map((p) => `${p.name} ${Math.floor((now - p.startedAt) / 1000)} s`).join(', ')}`);
  }

  /**
   * Runs one part: prints its start, hands `run` a `note` that prints a line under the part's
   * name, and prints its end with its time: `done(result)` (default "done"), or "failed".
   * The part's error, if any, is rethrown.
   */
  async part<T>(name: string, run: (note: (line: string) => void) => Promise<T>, done: (result: T) => string = () => 'done'): Promise<T> {
    const rec: PartRecord = { name, startedAt: this.clock.now() };
    this.startedAt ??= rec.startedAt;
    this.parts.push(rec);
    this.stopTicking ??= this.clock.every(this.tickMs, () => this.tick());
    this.say(`${name}: start`);
    const end = (failed: boolean): number => {
      rec.endedAt = this.clock.now();
      if (failed) rec.failed = true;
      if (!this.running().length && this.stopTicking) {
        this.stopTicking();
        this.stopTicking = undefined;
      }
      return rec.endedAt - rec.startedAt;
    };
    try {
      const result = await run((line) => this.say(`${name}: ${line}`));
      const took = end(false);
      this.say(`${name}: ${done(result)} (${seconds(took)})`);
      return result;
    } catch (err) {
      const took = end(true);
      this.say(`${name}: failed (${seconds(took)})`);
      throw err;
    }
  }

  /**
   * The closing line: the wall time since the first part started and each part's own time,
   * in the order the parts started; "failed after" when a part failed.
   */
  summary(): string {
    const now = this.clock.now();
    const each = this.parts.map((p) => `${p.name} ${seconds((p.endedAt ?? now) - p.startedAt)}${p.failed ? ' (failed)' : p.endedAt === undefined ? ' (still running)' : ''}`);
    const total = seconds(now - (this.startedAt ?? now));
    return `${this.parts.some((p) => p.failed) ? 'failed after' : 'done in'} ${total}: ${each.join(', ')}`;
  }
}
