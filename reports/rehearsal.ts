/**
 * The rehearsal a qualification run follows (QUAL-03's order: the shorter rehearsal runs
 * first at the same revision, and the qualification's provenance names it). `report RUN_DIR
 * --rehearsal DIR` records the rehearsal's identity in RUN_DIR/rehearsal.json, read from
 * the rehearsal's own evidence (verdict.json, provenance.json); later reports of RUN_DIR
 * read it from there, so the link survives re-reporting.
 */
import path from 'node:path';
import { QualError } from '../lib/errors.ts';
import type { Rehearsal } from '../lib/evidence.ts';
import { isRunDir, readRunListing } from './runs-list.ts';
import { RunStore } from '../lib/run-store.ts';

/** The rehearsal's identity from its run directory; refuses a directory with no verdict (a rehearsal that did not finish rehearses nothing). */
export function readRehearsal(dir: string): Rehearsal {
  if (!isRunDir(dir)) throw new QualError('BAD_ARGUMENTS', `--rehearsal ${dir}: not a run directory (no provenance.json, verdict.json or plan.json in it)`);
  const r = readRunListing(dir);
  if (!r.verdict) throw new QualError('BAD_ARGUMENTS', `--rehearsal ${dir}: the run has no verdict.json, so it did not finish and rehearses nothing`);
  if (!r.campaign) throw new QualError('BAD_ARGUMENTS', `--rehearsal ${dir}: the run's campaign is not recorded (provenance.json or verdict.json)`);
  return {
    runId: r.recordedId ?? r.id,
    campaign: r.campaign,
    seed: r.seed,
    verdict: r.verdict,
    revision: r.revision,
    dirty: r.dirty,
    startedAt: r.startedAt,
    endedAt: r.endedAt,
    durationS: r.durationS,
    produced: r.produced,
  };
}

/** Records the rehearsal in RUN_DIR/rehearsal.json; refuses to name a run as its own rehearsal. */
export function recordRehearsal(runDir: string, rehearsalDir: string): Rehearsal {
  if (path.resolve(runDir) === path.resolve(rehearsalDir)) throw new QualError('BAD_ARGUMENTS', `--rehearsal ${rehearsalDir}: a run cannot be its own rehearsal`);
  const r = readRehearsal(rehearsalDir);
  new RunStore(runDir).write('rehearsal', r);
  return r;
}

/** RUN_DIR/rehearsal.json, or undefined when the run names none. */
export function storedRehearsal(runDir: string): Rehearsal | undefined {
  return new RunStore(runDir).get('rehearsal');
}

/**
 * The provenance row's text: the rehearsal's run, campaign, verdict and revision, and whether
 * that revision is this run's (the order QUAL-03 follows) or not (said plainly).
 */
export function describeRehearsal(r: Rehearsal, runRevision: string | undefined): string {
  const rev = r.revision ? `at revision \`${r.revision.slice(0, 12)}\`${r.dirty ? ' (with uncommitted changes)' : ''}` : 'at a revision it did not record';
  const same =
    r.revision && runRevision
      ? r.revision.slice(0, 12) === runRevision.slice(0, 12)
        ? 'the same revision as this run'
        : `NOT this run's revision (\`${runRevision.slice(0, 12)}\`), so it did not rehearse this code`
      : 'whether it is this run\'s revision is unknown';
  const events = r.produced !== null && r.produced !== undefined ? `, ${r.produced.toLocaleString('en-US')} events` : '';
  const when = r.startedAt ? `, started ${r.startedAt}` : '';
  return `${r.runId} — campaign \`${r.campaign}\`, verdict ${r.verdict}${events}${when}, ${rev}: ${same}`;
}
