/**
 * When the coordinator triggers a checkpoint: on a fixed grid of the checkpoint interval,
 * counted from the instant the job first ran.
 *
 * - The coordinator looks every 250 ms. Scheduling each barrier one interval after the
 *   previous trigger let that look's lateness add up (8 s became about 8.125 s on average);
 *   on the grid it does not accumulate.
 * - A slot that passes while a checkpoint is still pending, or while the job is not running,
 *   is skipped, never made up in a burst: the next barrier is due at the first look after
 *   the pending one is settled, and then on the grid again.
 * - After a recovery the job runs again at some instant; its next barrier is the first slot
 *   at least `minPauseMs` later, not a whole interval later, so a recovery costs the
 *   checkpoints its downtime covers and no more.
 *
 * Times are monotonic milliseconds (a step of the wall clock moves nothing here).
 */
export class CheckpointCadence {
  #origin: number | null = null;
  #next = Number.POSITIVE_INFINITY;

  readonly intervalMs: number;
  readonly minPauseMs: number;

  constructor(intervalMs: number, minPauseMs = 1000) {
    if (!(intervalMs > 0)) throw new RangeError(`checkpoint interval must be positive, got ${intervalMs}`);
    this.intervalMs = intervalMs;
    this.minPauseMs = minPauseMs;
  }

  /** The job (re)started running at `now`. */
  running(now: number): void {
    if (this.#origin === null) {
      this.#origin = now;
      this.#next = now + this.intervalMs;
      return;
    }
    this.#next = this.#slotAtOrAfter(now + this.minPauseMs);
  }

  /** Whether a barrier is due at `now`; when it is, the next slot strictly after `now` becomes due. */
  due(now: number): boolean {
    if (now < this.#next) return false;
    this.#next = this.#slotAtOrAfter(now + 1);
    return true;
  }

  /** The instant the next barrier is due (for logs and tests); Infinity before the job first ran. */
  get nextAt(): number {
    return this.#next;
  }

  #slotAtOrAfter(t: number): number {
    const origin = this.#origin ?? t;
    return origin + Math.max(1, Math.ceil((t - origin) / this.intervalMs)) * this.intervalMs;
  }
}
