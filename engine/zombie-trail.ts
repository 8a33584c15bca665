/**
 * What every engine's zombie reader (Engine.zombieTrail) shares: the window of one zombie
 * (a process held stopped, then resumed; or its host cut off from the coordinator, then
 * reconnected, the process running on), the engine's collected log files, and the lines
 * of a host inside a time window, by each line's own ISO stamp (Clink's lines and Flink's
 * log4j pattern both start with one). Pure: text in, lines out.
 */
import type { TrailLine, ZombieTrail } from '../lib/evidence.ts';

/** One zombie, as the chaos log has it: the fault, the host (and the process's PID when the chaos log names it), when it was stopped or cut off and when resumed or reconnected (the trail's own fields). */
export type ZombieWindow = Pick<ZombieTrail, 'faultId' | 'kind' | 'host' | 'pid' | 'point' | 'stoppedAt' | 'resumedAt'>;

/** One collected engine log file: the host it came from (logs/<host>/…), its path and its text. */
export interface EngineLogFile {
  host: string;
  path: string;
  text: string;
}

const STAMP = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z)\s/;

/** A line's own time (ms), from the ISO stamp it starts with; null for a line without one (a stack frame). */
export function stampOf(line: string): number | null {
  const m = STAMP.exec(line);
  return m ? Date.parse(m[1]!) : null;
}

/** The harness's own lines in an engine's output (the Flink agent prints them to stdout, unstamped): "clink-qual fault point …". */
const HARNESS_LINE = /^clink-qual /;

/**
 * The stamped lines of `host`'s files (optionally only files whose path matches) in
 * [fromMs, toMs], oldest first, each trimmed to 400 characters. The harness's own unstamped
 * lines (HARNESS_LINE) take the stamp of the line before them in their file; other unstamped
 * lines (stack frames) are left out.
 */
export function linesBetween(files: readonly EngineLogFile[], host: string, fromMs: number, toMs: number, opts: { file?: RegExp; match?: RegExp } = {}): TrailLine[] {
  const out: { ms: number; l: TrailLine }[] = [];
  for (const f of files) {
    if (f.host !== host || (opts.file && !opts.file.test(f.path))) continue;
    let last: number | null = null;
    for (const raw of f.text.split('\n')) {
      const own = stampOf(raw);
      if (own !== null) last = own;
      const ms = own ?? (HARNESS_LINE.test(raw) ? last : null);
      if (ms === null || ms < fromMs || ms > toMs) continue;
      const line = raw.trim();
      if (opts.match && !opts.match.test(line)) continue;
      out.push({ ms, l: { at: new Date(ms).toISOString(), host, line: line.length > 400 ? `${line.slice(0, 397)}...` : line } });
    }
  }
  return out.sort((a, b) => a.ms - b.ms).map((x) => x.l);
}

/**
 * A trail from its window and what an engine's reader found in the logs; the outcome follows
 * from them. The PID is the window's; a window without one (a partition) takes the one the
 * engine's own log named for the process on that host, if the reader found it.
 */
export function zombieTrailOf(w: ZombieWindow, found: Pick<ZombieTrail, 'declaredLost' | 'replacedBy' | 'attempts' | 'fences' | 'token'> & { pid?: number }): ZombieTrail {
  const { pid, ...rest } = found;
  const named = w.pid ?? pid;
  return {
    faultId: w.faultId,
    kind: w.kind,
    host: w.host,
    ...(named !== undefined ? { pid: named } : {}),
    ...(w.point ? { point: w.point } : {}),
    stoppedAt: w.stoppedAt,
    resumedAt: w.resumedAt,
    ...rest,
    outcome: outcomeOf(rest),
  };
}

/** The trail's outcome from what was found (lib/evidence.ts ZombieTrail.outcome says what each means). */
export function outcomeOf(t: Pick<ZombieTrail, 'declaredLost' | 'attempts' | 'fences'>): ZombieTrail['outcome'] {
  if (!t.declaredLost) return 'not-lost';
  if (t.attempts.length === 0) return 'no-attempt';
  return t.fences.length > 0 ? 'fenced' : 'unfenced';
}

/** How long after the resume (or the reconnection) a zombie's lines still count as its own attempts (it is cancelled or restarted within seconds). */
export const AFTER_RESUME_MS = 30_000;
