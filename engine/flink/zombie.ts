/**
 * Flink's reading of a zombie's trail (Engine.zombieTrail) from its collected logs
 * (logs/<host>/flink-taskmanager.out.log, logs/coordinator/flink-jobmanager.out.log).
 * A TaskManager stopped, or cut off from the coordinator, past heartbeat.timeout is declared
 * lost by the JobManager, which fails its tasks and restarts the job's region on fresh
 * execution attempts. A cut-off TaskManager runs on meanwhile (it still reaches Kafka and the
 * store), so its lines inside the window count too; a stopped one logs nothing until resumed.
 * Flink's fences, as its logs say them:
 *  - the execution attempt: every restart creates new attempts; the JobManager discards
 *    what an old attempt sends (a late checkpoint acknowledgement, a state update for an
 *    attempt it no longer knows);
 *  - the JobManager's heartbeat on the TaskManager's side: a woken TaskManager that sees the
 *    JobManager's heartbeat timed out (or the job's leader gone) disconnects and fails its
 *    tasks of that job before anything of theirs is committed;
 *  - the fencing tokens of the JobMaster and the ResourceManager (leader session ids): an
 *    RPC carrying an old one is discarded;
 *  - leader retrieval through ZooKeeper (the rig's Flink runs HA on the coordinator host): a
 *    TaskManager cut off from it sees its session time out, the JobManager's leadership lost,
 *    and fails its tasks of that job itself (flink-qual03's f001, worker-3 cut 20 s:
 *    "Connection to ZooKeeper suspended", "JobManager for job … lost leadership.", "Close
 *    JobManager connection for job …", "Attempting to fail task externally … (1/4)#1 …").
 * The TaskManager's ResourceID (logged at its start) ties the JobManager's lines to the host,
 * and the zombie's execution ids (its task names, "(1/4)#1 (…_0_1)") tie the lines that
 * name only an execution ("Discarding the results produced by task execution …_0_1").
 */
import type { TrailLine, ZombieTrail } from '../../lib/evidence.ts';
import { AFTER_RESUME_MS, linesBetween, zombieTrailOf, type EngineLogFile, type ZombieWindow } from '../zombie-trail.ts';

const JM_HOST = 'coordinator';
const JM_FILE = /jobmanager/;
const TM_FILE = /taskmanager/;

/** What a woken TaskManager (or its tasks) tried, as either side logs it: going on from a paused point, a late checkpoint message. */
const ATTEMPT = /resumed after \d+ ms stopped|late message for now expired checkpoint|[Rr]eceived (acknowledge|decline) message for|[Rr]eceived late message|Trying to commit after recovery|Committing \S+ with MPU ID/;
/** What stopped it: the JobManager's heartbeat seen timed out (or its leadership lost), its tasks failed there, their results discarded, a fencing token. */
const FENCE =
  /heartbeat of JobManager with id .* timed out|Failed to commit after recovery .* Checking if file was committed before|Close JobManager connection|Attempting to fail task externally|Ignoring checkpoint \w+ notification for non-running task|JobManager for job .* lost leadership|late message for now expired checkpoint|Discarding the results produced by task execution|[Ff]encing token/;
/** The JobManager names an execution by its id, whose last field is the attempt: "(1/4) (…_0_2) switched". */
const EXECUTION_ATTEMPT = /_\d+_(\d+)\) switched from/;
/** A subtask's execution attempt in the TaskManager's task names: "(3/4)#1". */
const ATTEMPT_NO = /\((\d+)\/\d+\)#(\d+)/;
/** A task in the TaskManager's lines: subtask, attempt and execution id, "(1/4)#1 (f736…_6125…_0_1)". */
const TASK = /\((\d+)\/\d+\)#(\d+) \(([0-9a-f]+_[0-9a-f]+_\d+_\d+)\)/;
/** A task line that says the execution is over on this TaskManager. */
const TASK_OVER = /Freeing task resources for|switched from \w+ to (CANCELED|FAILED|FINISHED)/;

function resourceIdOf(logs: readonly EngineLogFile[], host: string, beforeMs: number): string | null {
  const lines = linesBetween(logs, host, 0, beforeMs, { file: TM_FILE, match: /ResourceID:? /i });
  for (let i = lines.length - 1; i >= 0; i--) {
    const m = /ResourceID:?\s+([\w.:-]+)/i.exec(lines[i]!.line);
    if (m) return m[1]!;
  }
  return null;
}

/** The executions a TaskManager ran at `atMs` (its task lines before, less those it freed or ended), by subtask: attempt and execution id. */
function executionsAt(logs: readonly EngineLogFile[], host: string, atMs: number): Map<string, { attempt: number; id: string }> {
  const running = new Map<string, { attempt: number; id: string }>();
  // Its last start: executions of an earlier process on the host are not its own.
  const lines = linesBetween(logs, host, 0, atMs, { file: TM_FILE });
  const start = lines.map((l) => /Starting TaskManager/.test(l.line)).lastIndexOf(true);
  for (const l of lines.slice(Math.max(0, start))) {
    const m = TASK.exec(l.line);
    if (!m) continue;
    if (TASK_OVER.test(l.line)) {
      if (running.get(m[1]!)?.id === m[3]) running.delete(m[1]!);
    } else running.set(m[1]!, { attempt: Number(m[2]), id: m[3]! });
  }
  return running;
}

/** One zombie's trail from Flink's collected logs: the JobManager's lines about its TaskManager and executions, and the TaskManager's own (from the resume; a cut-off one's from the cut). */
export function flinkZombieTrail(w: ZombieWindow, logs: readonly EngineLogFile[]): ZombieTrail {
  const cutOff = w.kind === 'partition';
  const stopped = Date.parse(w.stoppedAt);
  const resumed = Date.parse(w.resumedAt);
  const until = resumed + AFTER_RESUME_MS;
  // A stopped process logs nothing until it is resumed; a cut-off one runs on, and what it does from the cut counts.
  const from = cutOff ? stopped : resumed - 1000;
  const rid = resourceIdOf(logs, w.host, stopped);
  const names = rid ? rid : w.host;
  // The JobManager's (or its ResourceManager's) own judgement, as its lines say it: "The heartbeat of TaskManager with id R timed out."
  // (ResourceManager), "Heartbeat of TaskManager with id R timed out." (JobMaster), "TaskManager with id R is no longer reachable."
  // Not a disconnection the TaskManager asked for ("Disconnect TaskExecutor R because: Job leader … lost leadership.", its own
  // fence, told once it is back in reach).
  const lost =
    linesBetween(logs, JM_HOST, stopped, resumed, {
      file: JM_FILE,
      match: new RegExp(`([Hh]eartbeat of TaskManager with id ${escape(names)} timed out|TaskManager with id ${escape(names)} is no longer reachable)`),
    })[0] ?? null;
  // The job carries on without it: a restart (it may come before the heartbeat is declared lost, a checkpoint failing first).
  const replacedBy = lost ? (linesBetween(logs, JM_HOST, stopped, until, { file: JM_FILE, match: /switched from state RUNNING to RESTARTING|tasks? to restart to recover/ })[0] ?? null) : null;
  const own = linesBetween(logs, w.host, from, until, { file: TM_FILE });
  const restart = own.findIndex((l) => /Starting TaskManager/.test(l.line));
  const alive = restart >= 0 ? own.slice(0, restart) : own;
  // The zombie's attempt: what it ran when cut off (its task lines before the cut); a woken one's, from its first task line after the resume.
  const atCut = cutOff ? [...executionsAt(logs, w.host, stopped).values()] : [];
  const before = atCut.length ? String(Math.max(...atCut.map((e) => e.attempt))) : alive.map((l) => ATTEMPT_NO.exec(l.line)).find((m) => m)?.[2];
  // Tasks of a later attempt deployed onto the same TaskManager once it is back are the job's, not the zombie's.
  // A line naming no task (S3Committer's) is the zombie's only until the TaskManager receives a later attempt's task.
  const laterTask = alive.findIndex((l) => {
    const m = ATTEMPT_NO.exec(l.line);
    return m !== null && before !== undefined && Number(m[2]) > Number(before);
  });
  const mine = alive.filter((l, i) => {
    const m = ATTEMPT_NO.exec(l.line);
    return m ? before === undefined || Number(m[2]) <= Number(before) : laterTask < 0 || i < laterTask;
  });
  const executions = new Set([...atCut.map((e) => e.id), ...mine.map((l) => TASK.exec(l.line)).filter((m) => m && m[2] === before).map((m) => m![3]!)]);
  const jm = linesBetween(logs, JM_HOST, stopped, until, { file: JM_FILE }).filter(
    (l) => (rid && l.line.includes(rid)) || [...executions].some((id) => l.line.includes(id)) || /late message for now expired checkpoint|[Ff]encing token/.test(l.line),
  );
  const merged = [...mine, ...jm].sort((a, b) => a.at.localeCompare(b.at));
  const attempts: TrailLine[] = merged.filter((l) => ATTEMPT.test(l.line) && Date.parse(l.at) >= from);
  const fences: TrailLine[] = merged.filter((l) => FENCE.test(l.line) && Date.parse(l.at) >= from);
  // The attempts: the zombie's own tasks' number, and the highest the JobManager ran after it was replaced.
  const later = linesBetween(logs, JM_HOST, replacedBy ? Date.parse(replacedBy.at) : resumed, until, { file: JM_FILE, match: /switched from (CREATED|SCHEDULED) to (SCHEDULED|DEPLOYING)/ })
    .map((l) => Number(EXECUTION_ATTEMPT.exec(l.line)?.[1] ?? NaN))
    .filter((n) => Number.isFinite(n) && (before === undefined || n > Number(before)));
  const after = later.length ? Math.max(...later) : undefined;
  const trail = zombieTrailOf(w, { declaredLost: lost, replacedBy, attempts, fences, token: { before: before !== undefined ? `attempt #${before}` : null, after: after !== undefined ? `attempt #${after}` : null } });
  // A commit is judged by its own answer: the task failing after the request was sent does not stop it.
  return trail.outcome === 'fenced' && unrefusedCommits(attempts, mine).length > 0 ? { ...trail, outcome: 'unfenced' } : trail;
}

const COMMIT_TRY = /(?:Trying to commit after recovery|Committing) (\S+) with MPU ID/;
const COMMIT_REFUSED = /Failed to commit after recovery (\S+) with MPU ID/;

/**
 * The zombie's commit attempts that no refusal of its own answered: for each "Trying to commit
 * after recovery P" (or "Committing P") among `attempts`, a later "Failed to commit after
 * recovery P" among the zombie's own lines (`own`: before the TaskManager took a later
 * attempt's task). An unanswered one went through, or its answer is not in the logs.
 */
export function unrefusedCommits(attempts: readonly TrailLine[], own: readonly TrailLine[]): TrailLine[] {
  return attempts.filter((a) => {
    const part = COMMIT_TRY.exec(a.line)?.[1];
    return part !== undefined && !own.some((l) => l.at >= a.at && COMMIT_REFUSED.exec(l.line)?.[1] === part);
  });
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
