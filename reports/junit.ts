/**
 * junit.xml: the run as test cases, for CI dashboards. One testcase per gate condition,
 * per fault (it passes when it landed and recovered), per oracle counter (it passes at
 * zero, judged on the recount), and one for the recount's agreement with the oracle.
 * Missing evidence makes the cases that need it fail with a message saying so.
 *
 * Class names are `<campaign>.<suite>` (never the run id), so dashboards track a case across
 * runs. Each case's `time` is the seconds of what it judges: a gate condition, the gate
 * phase; a fault, from landing to its recovery (or to its end when it did not recover); a
 * counter and the agreement, the recount. An ABORTED run reports what it could not show as
 * `<error>` (with the abort reason), never as `<failure>`: nothing was shown wrong. After
 * GATE_FAILED, only the gate's cases fail; the rest are `<skipped>` (nothing soaked).
 */
import { COUNTER_NAMES } from '../lib/evidence.ts';
import { phaseSpans, type RunEvidence } from './evidence.ts';
import { faultOutcomes } from './faults.ts';
import { findingSentences, type WithFindings } from './findings.ts';
import { esc, fmtEvidence } from './format.ts';

interface Case {
  name: string;
  classname: string;
  failure?: string;
  error?: string;
  skipped?: string;
  output?: string;
  /** Seconds of what the case judges. */
  time?: number;
}

const secs = (ms: number) => Math.round(ms) / 1000;

/** `time` of the suite: given when its cases judge one shared span (the gate phase, the recount), else their sum. */
function suite(name: string, cases: Case[], shared?: number): string {
  const failures = cases.filter((c) => c.failure !== undefined).length;
  const errors = cases.filter((c) => c.error !== undefined).length;
  const skipped = cases.filter((c) => c.skipped !== undefined).length;
  const time = shared ?? cases.reduce((n, c) => n + (c.time ?? 0), 0);
  const lines = [`  <testsuite name="${esc(name)}" tests="${cases.length}" failures="${failures}" errors="${errors}" skipped="${skipped}" time="${secs(time * 1000)}">`];
  for (const c of cases) {
    const open = `    <testcase name="${esc(c.name)}" classname="${esc(c.classname)}" time="${secs((c.time ?? 0) * 1000)}"`;
    const inner: string[] = [];
    if (c.failure !== undefined) inner.push(`      <failure message="${esc(c.failure)}"/>`);
    if (c.error !== undefined) inner.push(`      <error message="${esc(c.error)}"/>`);
    if (c.skipped !== undefined) inner.push(`      <skipped message="${esc(c.skipped)}"/>`);
    if (c.output) inner.push(`      <system-out>${esc(c.output)}</system-out>`);
    lines.push(inner.length ? `${open}>\n${inner.join('\n')}\n    </testcase>` : `${open}/>`);
  }
  lines.push('  </testsuite>');
  return lines.join('\n');
}

/** ABORTED: what failed becomes an error with the abort's reason. GATE_FAILED: every case after the gate is skipped. */
function settle(cases: Case[], ev: RunEvidence, afterGate: boolean): Case[] {
  const v = ev.verdict?.verdict;
  // No verdict.json: the run was interrupted before its verdict, as the report reads it too.
  if (v === 'ABORTED' || !ev.verdict) {
    const why = ev.verdict?.reasons[0] ?? 'the run left no verdict.json (interrupted)';
    return cases.map(({ failure, ...c }) => (failure === undefined ? c : failure.startsWith('not attempted') ? { ...c, skipped: `not attempted: ${why}` } : { ...c, error: `not shown, ${why}: ${failure}` }));
  }
  if (v === 'GATE_FAILED' && afterGate) return cases.map(({ failure: _f, ...c }) => ({ ...c, skipped: 'the gate failed: nothing was soaked' }));
  return cases;
}

export function renderJunit(ev: RunEvidence): string {
  const run = ev.provenance?.runId ?? ev.verdict?.runId ?? ev.dirName;
  const campaign = ev.campaign?.name ?? ev.provenance?.campaign ?? 'run';
  const suites: string[] = [];
  const spans = phaseSpans(ev);
  const gateSpan = spans.find((s) => s.phase === 'gate');
  const gateS = gateSpan?.endMs !== undefined ? (gateSpan.endMs - gateSpan.startMs) / 1000 : undefined;
  const recountS = ev.recount?.durationS;

  const gate: Case[] = ev.gate
    ? ev.gate.conditions.map((c) => ({
        name: c.name,
        classname: `${campaign}.gate`,
        ...(gateS !== undefined ? { time: gateS } : {}),
        ...(c.passed ? {} : { failure: `gate condition not met: ${c.evidence}` }),
        output: c.evidence,
      }))
    : [{ name: 'gate', classname: `${campaign}.gate`, failure: 'gate.json is missing: the gate did not run or did not finish' }];
  suites.push(suite('gate', settle(gate, ev, false), gateS));

  const faults: Case[] = faultOutcomes(ev).map((o) => {
    const what = [o.kind, o.point ?? o.target, o.composition ? `in ${o.composition}` : ''].filter(Boolean).join(' ');
    const out = [o.landedEvidence ? `landed: ${fmtEvidence(o.landedEvidence)}` : '', o.recoveryS !== undefined ? `recovered in ${o.recoveryS} s` : ''].filter(Boolean).join('; ');
    return {
      name: `${o.id} ${what}: landed and recovered`,
      classname: `${campaign}.faults.${o.kind}`,
      ...(o.landedAt && (o.endedAt ?? o.healedAt) ? { time: Math.max(0, (Date.parse((o.endedAt ?? o.healedAt)!) - Date.parse(o.landedAt)) / 1000) } : {}),
      ...(o.status === 'survived' ? {} : { failure: `${o.status}${o.detail ? `: ${o.detail}` : ''}` }),
      ...(out ? { output: out } : {}),
    };
  });
  suites.push(suite('faults', settle(faults, ev, true)));

  const sentences = findingSentences(ev as WithFindings);
  const counters: Case[] = COUNTER_NAMES.map((name) => {
    const recount = ev.recount?.counters[name] ?? ev.verdict?.recount[name];
    const oracle = ev.verdict?.oracle[name] ?? ev.samples[ev.samples.length - 1]?.counters[name];
    const output = `recount ${recount ?? 'n/a'}, oracle ${oracle ?? 'n/a'}`;
    if (recount === undefined) return { name, classname: `${campaign}.counters`, failure: 'no recount in the evidence', output };
    return { name, classname: `${campaign}.counters`, ...(recountS !== undefined ? { time: recountS } : {}), ...(recount === 0 ? {} : { failure: sentences.get(name) ?? `${name} = ${recount}` }), output };
  });
  suites.push(suite('counters', settle(counters, ev, true), recountS));

  const agrees = ev.verdict?.recountAgrees;
  suites.push(
    suite(
      'recount',
      settle(
        [
          {
            name: 'the fresh recount agrees with the oracle',
            classname: `${campaign}.recount`,
            ...(recountS !== undefined ? { time: recountS } : {}),
            ...(agrees === true ? {} : { failure: agrees === false ? 'the recount and the oracle disagree' : 'no verdict.json: agreement unknown' }),
          },
        ],
        ev,
        true,
      ),
    ),
  );

  const all = suites.join('\n');
  const tests = (all.match(/<testcase /g) ?? []).length;
  const failures = (all.match(/<failure /g) ?? []).length;
  const errors = (all.match(/<error /g) ?? []).length;
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="${esc(`clink-qual ${run}`)}" tests="${tests}" failures="${failures}" errors="${errors}">\n${all}\n</testsuites>\n`;
}
