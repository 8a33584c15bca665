/**
 * The run's time outside the soak, for the Resources section ("### Time outside the soak"):
 * the run's wall time from its first record (run.log's first timestamped line, or the
 * run's startedAt) to its last (verdict.json's endedAt, or run.log's last line), the soak's
 * length from its phase marks, their difference, and where that difference went, span by
 * span, from phases.jsonl's marks. A span whose marks are not in the evidence is "not
 * recorded", never estimated; what the spans do not cover is given as a remainder.
 */
import { phaseSpans, type PhaseSpan, type RunEvidence } from './evidence.ts';
import { fmtDuration, table } from './format.ts';

/** A moment the run's evidence records, and which record says so. */
export interface RunMoment {
  ms: number;
  /** The record, in words: "run.log's first line", "verdict.json's endedAt", "the gate's start", ... */
  from: string;
  /** The line itself, for a run.log line (what the run was doing then). */
  line?: string;
}

/** One span outside the soak: its bounds, when both are recorded, and its length. */
export interface RunTimeSpan {
  span: string;
  start?: RunMoment;
  end?: RunMoment;
  /** end − start in seconds; absent when either bound is not recorded. */
  seconds?: number;
}

/** The run's wall time, the soak's length, the time outside the soak and its spans. */
export interface RunTime {
  first?: RunMoment;
  last?: RunMoment;
  wallS?: number;
  soakS?: number;
  /** wallS − soakS: absent unless both are known. */
  outsideS?: number;
  spans: RunTimeSpan[];
  /** outsideS less the spans that are recorded: time outside the soak that no span covers. */
  uncoveredS?: number;
}

const secondsOf = (a: RunMoment | undefined, b: RunMoment | undefined) => (a && b ? (b.ms - a.ms) / 1000 : undefined);

function moment(t: string | undefined, from: string, line?: string): RunMoment | undefined {
  const ms = Date.parse(t ?? '');
  return Number.isFinite(ms) ? { ms, from, ...(line !== undefined ? { line } : {}) } : undefined;
}

/** The earliest (or latest) of the moments that are recorded. */
function extreme(ms: (RunMoment | undefined)[], pick: 'first' | 'last'): RunMoment | undefined {
  const known = ms.filter((m): m is RunMoment => m !== undefined);
  return known.reduce<RunMoment | undefined>((a, m) => (!a || (pick === 'first' ? m.ms < a.ms : m.ms > a.ms) ? m : a), undefined);
}

/**
 * The run's time, from run.log, verdict.json (provenance.json's startedAt when there is no
 * verdict) and phases.jsonl. Each phase is its first recorded span; a phase that started and
 * never ended has no end.
 */
export function runTime(ev: RunEvidence): RunTime {
  const first = extreme(
    [
      ev.runLog && moment(ev.runLog.first.t, "run.log's first line", ev.runLog.first.line),
      moment(ev.verdict?.startedAt ?? ev.provenance?.startedAt, ev.verdict?.startedAt ? "verdict.json's startedAt" : "provenance.json's startedAt"),
    ],
    'first',
  );
  const last = extreme([moment(ev.verdict?.endedAt, "verdict.json's endedAt"), ev.runLog && moment(ev.runLog.last.t, "run.log's last line", ev.runLog.last.line)], 'last');
  const spans = phaseSpans(ev);
  const phase = (name: PhaseSpan['phase']) => spans.find((s) => s.phase === name);
  const startOf = (name: PhaseSpan['phase']): RunMoment | undefined => {
    const s = phase(name);
    return s ? { ms: s.startMs, from: `the ${name}'s start` } : undefined;
  };
  const endOf = (name: PhaseSpan['phase']): RunMoment | undefined => {
    const s = phase(name);
    return s?.endMs !== undefined ? { ms: s.endMs, from: `the ${name}'s end` } : undefined;
  };
  const span = (name: string, start: RunMoment | undefined, end: RunMoment | undefined): RunTimeSpan => {
    const seconds = secondsOf(start, end);
    return { span: name, ...(start ? { start } : {}), ...(end ? { end } : {}), ...(seconds !== undefined ? { seconds } : {}) };
  };
  // The wrap-up (heals, logs collected, pending uploads counted, the input audited) runs after
  // the settle, or after the drain when there was no settle (a drain that did not converge).
  const beforeRecount = endOf('settle') ?? endOf('drain');
  const out: RunTimeSpan[] = [
    span('Before the gate (preflight, deploy, engine start)', first, startOf('gate')),
    span('The gate', startOf('gate'), endOf('gate')),
    span('The drain', startOf('drain'), endOf('drain')),
    span('The settle', startOf('settle'), endOf('settle')),
    span('Wrap-up (logs collected, pending uploads counted, input audited)', beforeRecount, startOf('recount')),
    span('The recount', startOf('recount'), endOf('recount')),
    span('After the recount (the verdict)', endOf('recount'), last),
  ];
  const wallS = secondsOf(first, last);
  const soakS = secondsOf(startOf('soak'), endOf('soak'));
  const outsideS = wallS !== undefined && soakS !== undefined ? wallS - soakS : undefined;
  const uncoveredS = outsideS !== undefined ? outsideS - out.reduce((a, s) => a + (s.seconds ?? 0), 0) : undefined;
  return {
    ...(first ? { first } : {}),
    ...(last ? { last } : {}),
    ...(wallS !== undefined ? { wallS } : {}),
    ...(soakS !== undefined ? { soakS } : {}),
    ...(outsideS !== undefined ? { outsideS } : {}),
    spans: out,
    ...(uncoveredS !== undefined ? { uncoveredS } : {}),
  };
}

/** A moment in the wall-time sentence: its record, its time, and a run.log line's text as code (cut at 80 characters). */
function fmtMoment(m: RunMoment): string {
  const text = m.line?.replace(/`/g, "'");
  const line = text === undefined ? '' : `: \`${text.length > 80 ? `${text.slice(0, 79)}…` : text}\``;
  return `${m.from}, ${new Date(m.ms).toISOString()}${line}`;
}

/** A duration in seconds, negative ones with a minus sign (a span whose end mark precedes its start). */
const fmtSpan = (s: number | undefined) => (s === undefined ? 'not recorded' : s < 0 ? `−${fmtDuration(-s)}` : fmtDuration(s));

/** "### Time outside the soak": the wall time, the soak's length, their difference and its spans. */
export function runTimeSection(ev: RunEvidence): string[] {
  const out = ['### Time outside the soak', ''];
  const rt = runTime(ev);
  const wall =
    rt.wallS !== undefined
      ? `The run took ${fmtSpan(rt.wallS)}, from its first record (${fmtMoment(rt.first!)}) to its last (${fmtMoment(rt.last!)}).`
      : `The run's wall time is not recorded: ${rt.first ? 'no verdict.json endedAt and no run.log line gives its end' : 'no run.log line and no startedAt gives its start'}.`;
  if (!ev.phases.length) return [...out, wall, '', 'Where it went is not available: `phases.jsonl` records no phase (the run predates phase marks, or it stopped before the gate).', ''];
  const soakStarted = phaseSpans(ev).some((s) => s.phase === 'soak');
  const soak =
    rt.soakS !== undefined
      ? `The soak lasted ${fmtSpan(rt.soakS)} (phases.jsonl).`
      : `The soak's length is not recorded (phases.jsonl has ${soakStarted ? "the soak's start and no end" : 'no soak'}).`;
  const outside = rt.outsideS !== undefined ? `The time outside the soak: ${fmtSpan(rt.outsideS)}.` : 'The time outside the soak is therefore not stated.';
  out.push(`${wall} ${soak} ${outside}`, '');
  const rows = rt.spans.map((s) => [s.span, s.start?.from ?? 'not recorded', s.end?.from ?? 'not recorded', fmtSpan(s.seconds)]);
  if (rt.uncoveredS !== undefined && Math.abs(rt.uncoveredS) >= 0.05) rows.push(['Not in the spans above', '', '', fmtSpan(rt.uncoveredS)]);
  out.push(table(['Span', 'From', 'To', 'Duration'], rows), '');
  return out;
}
