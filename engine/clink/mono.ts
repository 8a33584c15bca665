/**
 * The monotonic clock Clink measures durations with (intervals, timeouts, fencing). The
 * wall clock can step (NTP, a VM restore, the clock-step fault); this one cannot.
 */
import { performance } from 'node:perf_hooks';

export function monotonicMs(): number {
  return performance.now();
}
