/**
 * Node (V8) flags for a process that recounts a bucket: `clink-qual verify`, which the
 * campaign runs in its own process for the verdict's recount (campaigns/runner/phases.ts) and
 * ./clink-qual runs for a user, and bench/oracle.ts, which measures that recount.
 *
 * --initial-old-space-size=256 (MiB): a recount allocates every object's body as a buffer
 * outside the JavaScript heap, and from a small heap V8 starts a full collection every few
 * tens of MB of them, more often the more objects (and requests) the same bytes come in. With
 * the larger starting limit, a recount of 2,000,000 events in 1,600 objects made 46 full
 * collections in 5 recounts instead of 131, and used about 15 % less CPU (1,321 ms against
 * 1,560, medians); in 100 objects, 1,062 ms against 1,113 (docs/qualification/oracle-flat.md,
 * "Session 20", oracle-flat/s20-gc-split.txt). It is a limit,
 * not a reservation: the process grows to it only with garbage it has not collected yet.
 *
 * ./clink-qual carries the same flags for `verify` (a unit test keeps the two the same).
 */
export const RECOUNT_NODE_FLAGS: readonly string[] = ['--initial-old-space-size=256'];
