/**
 * The CompleteMultipartUpload requests in flight in this process, over all its sinks (a
 * worker hosts several subtasks, each with its own sink).
 *
 * Why the process counts them: a named fault point SIGKILLs the whole process at one
 * subtask's protocol instant, and a sibling subtask's completion in flight at that moment
 * dies with it. The pinned MinIO can then lose that upload for good (finding F-1,
 * docs/findings/minio-complete-cancel.md): no object, no parts, every re-commit InvalidPart.
 * The worker's fault points wait for these to settle before a kill (engine/clink/worker.ts),
 * so a named point lands at its own instant and not also inside another subtask's completion.
 */
let inFlight = 0;
let waiters: (() => void)[] = [];

/** A completion request is being sent; call the returned function once it settles. */
export function completionStarted(): () => void {
  inFlight++;
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    inFlight--;
    if (inFlight === 0) {
      const w = waiters;
      waiters = [];
      for (const f of w) f();
    }
  };
}

/** Completion requests in flight in this process now. */
export function completionsInFlight(): number {
  return inFlight;
}

/** Resolves when none is in flight (at once when none is). */
export function completionsSettled(): Promise<void> {
  return inFlight === 0 ? Promise.resolve() : new Promise((resolve) => waiters.push(resolve));
}
