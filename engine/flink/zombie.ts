/**
 * Flink's reading of a zombie's trail (Engine.zombieTrail) from its collected logs
 * (logs/<host>/flink-taskmanager.out.log, logs/coordinator/flink-jobmanager.out.log).
 * A TaskManager stopped past heartbeat.timeout is declared lost by the JobManager, which
 * fails its tasks and restarts the job's region on fresh execution attempts. Flink's fences,
 * as its logs say them:
 *  - the execution attempt: every restart creates new attempts; the JobManager discards
 *    what an old attempt sends (a late checkpoint acknowledgement, a state update for an
 *    attempt it no longer knows);
 *  - the JobManager's heartbeat on the TaskManager's side: a woken TaskManager that sees the
 *    JobManager's heartbeat timed out (or the job's leader gone) disconnects and fails its
 *    tasks of that job before anything of theirs is committed;
 *  - the fencing tokens of the JobMaster and the ResourceManager (leader session ids): an
 *    RPC carrying an old one is discarded.
 * The TaskManager's ResourceID (logged at its start) ties the JobManager's lines to the host.
 */
import type { TrailLine, ZombieTrail } from '../../lib/evidence.ts';
import { AFTER_RESUME_MS, linesBetween, zombieTrailOf, type EngineLogFile, type ZombieWindow } from '../zombie-trail.ts';

const JM_HOST = 'coordinator';
const JM_FILE = /jobmanager/;
const TM_FILE = /taskmanager/;

/** What a woken TaskManager (or its tasks) tried, as either side logs it: going on from a paused point, a late checkpoint message. */
const ATTEMPT = /resumed after \d+ ms stopped|late message for now expired checkpoint|[Rr]eceived (acknowledge|decline) message for|[Rr]eceived late message/;
/** What stopped it: the JobManager's heartbeat seen timed out on waking, its tasks failed there, their results discarded, a fencing token. */
const FENCE =
  /heartbeat of JobManager with id .* timed out|Close JobManager connection|Attempting to fail task externally|Ignoring checkpoint \w+ notification for non-running task|JobManager for job .* lost leadership|late message for now expired checkpoint|Discarding the results produced by task execution|[Ff]encing token/;
/** The JobManager names an execution by its id, whose last field is the attempt: "(1/4) (…_0_2) switched". */
const EXECUTION_ATTEMPT = /_\d+_(\d+)\) switched from/;
/** A subtask's execution attempt in the TaskManager's task names: "(3/4)#1". */
const ATTEMPT_NO = /\((\d+)\/\d+\)#(\d+)/;

function resourceIdOf(logs: readonly EngineLogFile[], host: string, beforeMs: number): string | null {
  const lines = linesBetween(logs, host, 0, beforeMs, { file: TM_FILE, match: /ResourceID:? /i });
  for (let i = lines.length - 1; i >= 0; i--) {
    const m = /ResourceID:?\s+([\w.:-]+)/i.exec(lines[i]!.line);
    if (m) return m[1]!;
  }
  return null;
}

export function flinkZombieTrail(w: ZombieWindow, logs: readonly EngineLogFile[]): ZombieTrail {
  const stopped = Date.parse(w.stoppedAt);
  const resumed = Date.parse(w.resumedAt);
  const until = resumed + AFTER_RESUME_MS;
  const rid = resourceIdOf(logs, w.host, stopped);
  const names = rid ? rid : w.host;
  const lost =
    linesBetween(logs, JM_HOST, stopped, resumed, { file: JM_FILE, match: new RegExp(`(heartbeat of TaskManager with id ${escape(names)} timed out|${escape(names)}.*(disconnected|lost|unreachable)|Closing TaskExecutor connection ${escape(names)})`) })[0] ?? null;
  // The job carries on without it: a restart (it may come before the heartbeat is declared lost, a checkpoint failing first).
  const replacedBy = lost ? (linesBetween(logs, JM_HOST, stopped, until, { file: JM_FILE, match: /switched from state RUNNING to RESTARTING|tasks? to restart to recover/ })[0] ?? null) : null;
  const own = linesBetween(logs, w.host, resumed - 1000, until, { file: TM_FILE });
  const restart = own.findIndex((l) => /Starting TaskManager/.test(l.line));
  const mine = restart >= 0 ? own.slice(0, restart) : own;
  const jm = linesBetween(logs, JM_HOST, stopped, until, { file: JM_FILE }).filter((l) => (rid && l.line.includes(rid)) || /late message for now expired checkpoint|[Ff]encing token/.test(l.line));
  const merged = [...mine, ...jm].sort((a, b) => a.at.localeCompare(b.at));
  const attempts: TrailLine[] = merged.filter((l) => ATTEMPT.test(l.line) && Date.parse(l.at) >= resumed - 1000);
  const fences: TrailLine[] = merged.filter((l) => FENCE.test(l.line) && Date.parse(l.at) >= resumed - 1000);
  // The attempts: the zombie's own tasks' number (its lines), and the highest the JobManager ran after it was replaced.
  const before = mine.map((l) => ATTEMPT_NO.exec(l.line)).find((m) => m)?.[2];
  const later = linesBetween(logs, JM_HOST, replacedBy ? Date.parse(replacedBy.at) : resumed, until, { file: JM_FILE, match: /switched from (CREATED|SCHEDULED) to (SCHEDULED|DEPLOYING)/ })
    .map((l) => Number(EXECUTION_ATTEMPT.exec(l.line)?.[1] ?? NaN))
    .filter((n) => Number.isFinite(n) && (before === undefined || n > Number(before)));
  const after = later.length ? Math.max(...later) : undefined;
  return zombieTrailOf(w, { declaredLost: lost, replacedBy, attempts, fences, token: { before: before !== undefined ? `attempt #${before}` : null, after: after !== undefined ? `attempt #${after}` : null } });
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
