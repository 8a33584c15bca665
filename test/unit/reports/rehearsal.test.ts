/**
 * The rehearsal a qualification run follows: `report --rehearsal` records it from the
 * rehearsal's own evidence, the provenance names it and says whether its revision is the
 * run's, and a directory that is no finished run is refused.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { repoRoot } from '../../../lib/paths.ts';
import { describeRehearsal, readRehearsal, recordRehearsal, storedRehearsal } from '../../../reports/rehearsal.ts';
import { readRunEvidence } from '../../../reports/evidence.ts';
import { renderReportFrom } from '../../../reports/report.ts';

const fixtures = path.join(repoRoot, 'test', 'fixtures');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'cq-rehearsal-'));
t.teardown(() => rmSync(tmp, { recursive: true, force: true }));

function copy(name: string, as: string): string {
  const d = path.join(tmp, as);
  cpSync(path.join(fixtures, name), d, { recursive: true });
  return d;
}

t.test('recorded from the rehearsal evidence and named in the provenance, same revision', async (t) => {
  const run = copy('run-fail', 'q-same');
  const reh = copy('run-pass', 'r-same');
  const r = recordRehearsal(run, reh);
  t.equal(r.runId, 'quick-20260821-101500');
  t.equal(r.verdict, 'PASS');
  t.equal(r.campaign, 'quick');
  t.same(storedRehearsal(run), r, 'rehearsal.json holds what was read');
  const md = renderReportFrom(readRunEvidence(run));
  const row = md.split('\n').find((l) => l.startsWith('| Rehearsal |'));
  t.ok(row, 'the provenance has a Rehearsal row');
  t.match(row!, /quick-20260821-101500 — campaign `quick`, verdict PASS/);
  t.match(row!, /the same revision as this run/);
  t.match(md, /`rehearsal\.json`/, 'the evidence list names the file');
});

t.test('a rehearsal at another revision is said to be one', async (t) => {
  const run = copy('run-fail', 'q-other');
  const reh = copy('run-pass', 'r-other');
  const prov = JSON.parse(readFileSync(path.join(reh, 'provenance.json'), 'utf8'));
  prov.engine.revision = 'abcdef012345';
  writeFileSync(path.join(reh, 'provenance.json'), JSON.stringify(prov));
  recordRehearsal(run, reh);
  const md = renderReportFrom(readRunEvidence(run));
  t.match(md, /at revision `abcdef012345`: NOT this run's revision \(`625cc82d69af`\), so it did not rehearse this code/);
  t.notMatch(describeRehearsal(readRehearsal(reh), '625cc82d69af'), /the same revision/);
});

t.test('no rehearsal.json: no row', async (t) => {
  const md = renderReportFrom(readRunEvidence(path.join(fixtures, 'run-pass')));
  t.notMatch(md, /\| Rehearsal \|/);
});

t.test('refused: an unfinished run, a non-run directory, the run itself', async (t) => {
  const run = copy('run-pass', 'q-refuse');
  t.throws(() => recordRehearsal(run, path.join(fixtures, 'run-aborted')), /has no verdict\.json, so it did not finish/);
  t.throws(() => recordRehearsal(run, tmp), /not a run directory/);
  t.throws(() => recordRehearsal(run, run), /cannot be its own rehearsal/);
  t.equal(storedRehearsal(run), undefined, 'nothing recorded after a refusal');
});
