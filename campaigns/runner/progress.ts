/**
 * Progress for the operator: on a terminal, one live line rewritten in place (elapsed,
 * phase, the soak time left and an ETA, produced, committed, checkpoints, faults
 * landed/healed/heal-failed and the next one due, counters); otherwise, and for events,
 * plain timestamped log lines.
 *
 * The ETA is the time until the verdict if every phase still ahead takes its full
 * deadline: what is left of the current phase's (gate: gate.deadlineS; soak: its exact
 * length; drain: deadlines.drainS; settle: the idle-checkpoint wait, max(30 s, 4
 * checkpoint intervals); recount: deadlines.recountS), plus the later phases' whole ones.
 * Deploy, log collection and the input audit are not counted. So it is an upper bound in
 * the usual case (a drain that converges early ends sooner), shown as `ETA ≤5m40s`.
 *
 * The next fault is the first of the plan whose time (from the soak's start) is still
 * ahead: `next f004 partition in 1m20s`; before the soak, the first fault and its offset
 * into the soak (`first f001 worker-kill at soak+10s`).
 */
import { raisedCounters, type Counters, type PlannedFault } from '../../lib/evidence.ts';

/** What the line needs to say how long is left (all times in ms since the epoch, spans in s). */
export interface ProgressTiming {
  /** When the current phase began. */
  phaseStartMs: number;
  /** When the soak began; absent before it. */
  soakStartMs?: number;
  soakS: number;
  gateDeadlineS: number;
  drainS: number;
  /** The settle phase's bound (the wait for two idle checkpoints). */
  settleS: number;
  recountS: number;
  plan: readonly Pick<PlannedFault, 'id' | 'kind' | 'atS' | 'point'>[];
}

export interface ProgressState {
  phase: string;
  produced: number;
  committed: number;
  checkpoints: number;
  landed: number;
  healed: number;
  /** Faults whose heal threw (heal-failed): shown loudly, the run cannot PASS. */
  healFailed?: number;
  faultsPlanned: number;
  counters: Counters;
  /** The schedule and deadlines, for the ETA, the soak left and the next fault. */
  timing?: ProgressTiming;
}

/** The settle phase's bound, as run.ts waits for idle checkpoints: max(30 s, 4 checkpoint intervals). */
export function settleBoundS(checkpointIntervalS: number): number {
  return Math.max(30, checkpointIntervalS * 4);
}

/** The timing of a campaign's run, from its deadlines and plan. */
export function progressTiming(
  c: { workload: { soakS: number; checkpointIntervalS: number }; gate: { deadlineS: number }; deadlines: { drainS: number; recountS: number } },
  plan: ProgressTiming['plan'],
  phaseStartMs: number,
  soakStartMs: number | undefined,
): ProgressTiming {
  return {
    phaseStartMs,
    ...(soakStartMs !== undefined ? { soakStartMs } : {}),
    soakS: c.workload.soakS,
    gateDeadlineS: c.gate.deadlineS,
    drainS: c.deadlines.drainS,
    settleS: settleBoundS(c.workload.checkpointIntervalS),
    recountS: c.deadlines.recountS,
    plan,
  };
}

/** 75 → "1m15s", 3725 → "1h02m05s", 9 → "9s" (whole seconds, rounded up: a countdown does not show 0 early). */
export function shortDuration(totalS: number): string {
  const s = Math.max(0, Math.ceil(totalS));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const r = s % 60;
  if (h) return `${h}h${String(m).padStart(2, '0')}m${String(r).padStart(2, '0')}s`;
  if (m) return `${m}m${String(r).padStart(2, '0')}s`;
  return `${r}s`;
}

/** Seconds of the soak left (undefined outside the soak). */
export function soakLeftS(phase: string, t: ProgressTiming, nowMs: number): number | undefined {
  if (phase !== 'soak' || t.soakStartMs === undefined) return undefined;
  return Math.max(0, t.soakS - (nowMs - t.soakStartMs) / 1000);
}

/** Seconds until the verdict at most (see the header); undefined once the report is being written. */
export function etaS(phase: string, t: ProgressTiming, nowMs: number): number | undefined {
  const since = (nowMs - t.phaseStartMs) / 1000;
  const left = (deadlineS: number) => Math.max(0, deadlineS - since);
  const afterSoak = t.drainS + t.settleS + t.recountS;
  switch (phase) {
    case 'deploy':
      return t.gateDeadlineS + t.soakS + afterSoak;
    case 'gate':
      return left(t.gateDeadlineS) + t.soakS + afterSoak;
    case 'soak':
      return (soakLeftS(phase, t, nowMs) ?? t.soakS) + afterSoak;
    case 'drain':
      return left(t.drainS) + t.settleS + t.recountS;
    case 'settle':
      return left(t.settleS) + t.recountS;
    case 'wrap-up':
      return t.recountS;
    case 'recount':
      return left(t.recountS);
    default:
      return undefined;
  }
}

/** The next fault due: during the soak, the first whose time is ahead; before it, the first one. */
export function nextFault(phase: string, t: ProgressTiming, nowMs: number): { id: string; kind: string; point?: string; inS?: number; atS: number } | undefined {
  if (phase === 'deploy' || phase === 'gate') {
    const f = t.plan[0];
    return f ? { id: f.id, kind: f.kind, ...(f.point ? { point: f.point } : {}), atS: f.atS } : undefined;
  }
  if (phase !== 'soak' || t.soakStartMs === undefined) return undefined;
  const soakS = (nowMs - t.soakStartMs) / 1000;
  const f = t.plan.find((x) => x.atS > soakS);
  return f ? { id: f.id, kind: f.kind, ...(f.point ? { point: f.point } : {}), inS: f.atS - soakS, atS: f.atS } : undefined;
}

/** The timing parts of the line: after the phase, and after the fault counts. */
export function timingParts(phase: string, t: ProgressTiming | undefined, nowMs: number): { phase: string; faults: string } {
  if (!t) return { phase: '', faults: '' };
  const soak = soakLeftS(phase, t, nowMs);
  const eta = etaS(phase, t, nowMs);
  const phasePart = [soak !== undefined ? `${shortDuration(soak)} left` : '', eta !== undefined ? `ETA ≤${shortDuration(eta)}` : ''].filter(Boolean).join(', ');
  const n = nextFault(phase, t, nowMs);
  let faults = '';
  if (n) {
    const what = `${n.id} ${n.kind}${n.point ? ` ${n.point}` : ''}`;
    faults = n.inS !== undefined ? `next ${what} in ${shortDuration(n.inS)}` : `first ${what} at soak+${shortDuration(n.atS)}`;
  } else if (phase === 'soak' && t.plan.length) faults = 'no fault left to land';
  return { phase: phasePart, faults };
}

/** The status line (without the terminal's control characters). */
export function formatProgressLine(s: ProgressState, elapsed: string, nowMs: number): string {
  const bad = raisedCounters(s.counters).join(' ');
  const tp = timingParts(s.phase, s.timing, nowMs);
  return (
    `[${elapsed}] ${s.phase}${tp.phase ? ` (${tp.phase})` : ''} | produced ${s.produced} committed ${s.committed} | checkpoints ${s.checkpoints} | ` +
    `faults ${s.landed}/${s.faultsPlanned} landed ${s.healed} healed${s.healFailed ? ` ${s.healFailed} HEAL FAILED` : ''}${tp.faults ? `, ${tp.faults}` : ''} | ${bad || 'counters 0'}`
  );
}

export class Progress {
  private readonly tty: boolean;
  private readonly t0 = Date.now();
  private lineShown = false;
  private lastPlain = 0;
  private readonly out: NodeJS.WriteStream;

  constructor(out: NodeJS.WriteStream = process.stderr) {
    this.out = out;
    this.tty = Boolean(out.isTTY) && !process.env.CI;
  }

  private elapsed(): string {
    const s = Math.floor((Date.now() - this.t0) / 1000);
    return `${String(Math.floor(s / 60)).padStart(2, '0')}:${String(s % 60).padStart(2, '0')}`;
  }

  /** A log line (event). */
  log(line: string): void {
    if (this.lineShown) this.out.write('\r\x1b[2K');
    this.lineShown = false;
    this.out.write(`[${this.elapsed()}] ${line}\n`);
  }

  /** The live status; on a non-terminal, printed at most every 30 s. */
  update(s: ProgressState): void {
    const line = formatProgressLine(s, this.elapsed(), Date.now());
    if (this.tty) {
      this.out.write(`\r\x1b[2K${line.slice(0, (this.out.columns || 160) - 1)}`);
      this.lineShown = true;
    } else if (Date.now() - this.lastPlain >= 30_000) {
      this.lastPlain = Date.now();
      this.out.write(line + '\n');
    }
  }

  end(): void {
    if (this.lineShown) this.out.write('\n');
    this.lineShown = false;
  }
}
