/**
 * junit.xml: the run as test cases, for CI dashboards. One testcase per gate condition,
 * per fault (it passes when it landed and recovered), per oracle counter (it passes at
 * zero, judged on the recount), and one for the recount's agreement with the oracle.
 * Missing evidence makes the cases that need it fail with a message saying so.
 */
import { COUNTER_NAMES } from '../lib/evidence.ts';
import type { RunEvidence } from './evidence.ts';
import { faultOutcomes } from './faults.ts';
import { findingSentences, type WithFindings } from './findings.ts';
import { esc, fmtEvidence } from './format.ts';

interface Case {
  name: string;
  classname: string;
  failure?: string;
  skipped?: string;
  output?: string;
}

function suite(name: string, cases: Case[]): string {
  const failures = cases.filter((c) => c.failure !== undefined).length;
  const skipped = cases.filter((c) => c.skipped !== undefined).length;
  const lines = [`  <testsuite name="${esc(name)}" tests="${cases.length}" failures="${failures}" errors="0" skipped="${skipped}">`];
  for (const c of cases) {
    const open = `    <testcase name="${esc(c.name)}" classname="${esc(c.classname)}"`;
    const inner: string[] = [];
    if (c.failure !== undefined) inner.push(`      <failure message="${esc(c.failure)}"/>`);
    if (c.skipped !== undefined) inner.push(`      <skipped message="${esc(c.skipped)}"/>`);
    if (c.output) inner.push(`      <system-out>${esc(c.output)}</system-out>`);
    lines.push(inner.length ? `${open}>\n${inner.join('\n')}\n    </testcase>` : `${open}/>`);
  }
  lines.push('  </testsuite>');
  return lines.join('\n');
}

export function renderJunit(ev: RunEvidence): string {
  const run = ev.provenance?.runId ?? ev.verdict?.runId ?? ev.dirName;
  const suites: string[] = [];

  const gate: Case[] = ev.gate
    ? ev.gate.conditions.map((c) => ({
        name: c.name,
        classname: `${run}.gate`,
        ...(c.passed ? {} : { failure: `gate condition not met: ${c.evidence}` }),
        output: c.evidence,
      }))
    : [{ name: 'gate', classname: `${run}.gate`, failure: 'gate.json is missing: the gate did not run or did not finish' }];
  suites.push(suite('gate', gate));

  const faults: Case[] = faultOutcomes(ev).map((o) => {
    const what = [o.kind, o.point ?? o.target, o.composition ? `in ${o.composition}` : ''].filter(Boolean).join(' ');
    const out = [o.landedEvidence ? `landed: ${fmtEvidence(o.landedEvidence)}` : '', o.recoveryS !== undefined ? `recovered in ${o.recoveryS} s` : ''].filter(Boolean).join('; ');
    return {
      name: `${o.id} ${what}: landed and recovered`,
      classname: `${run}.faults.${o.kind}`,
      ...(o.status === 'survived' ? {} : { failure: `${o.status}${o.detail ? `: ${o.detail}` : ''}` }),
      ...(out ? { output: out } : {}),
    };
  });
  suites.push(suite('faults', faults));

  const sentences = findingSentences(ev as WithFindings);
  const counters: Case[] = COUNTER_NAMES.map((name) => {
    const recount = ev.recount?.counters[name] ?? ev.verdict?.recount[name];
    const oracle = ev.verdict?.oracle[name] ?? ev.samples[ev.samples.length - 1]?.counters[name];
    const output = `recount ${recount ?? 'n/a'}, oracle ${oracle ?? 'n/a'}`;
    if (recount === undefined) return { name, classname: `${run}.counters`, failure: 'no recount in the evidence', output };
    return { name, classname: `${run}.counters`, ...(recount === 0 ? {} : { failure: sentences.get(name) ?? `${name} = ${recount}` }), output };
  });
  suites.push(suite('counters', counters));

  const agrees = ev.verdict?.recountAgrees;
  suites.push(
    suite('recount', [
      {
        name: 'the fresh recount agrees with the oracle',
        classname: `${run}.recount`,
        ...(agrees === true ? {} : { failure: agrees === false ? 'the recount and the oracle disagree' : 'no verdict.json: agreement unknown' }),
      },
    ]),
  );

  const all = suites.join('\n');
  const tests = (all.match(/<testcase /g) ?? []).length;
  const failures = (all.match(/<failure /g) ?? []).length;
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="${esc(`clink-qual ${run}`)}" tests="${tests}" failures="${failures}" errors="0">\n${all}\n</testsuites>\n`;
}
