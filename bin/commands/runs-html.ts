import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Command } from '../../lib/cli.ts';
import { QualError } from '../../lib/errors.ts';
import { runsDir } from '../../lib/paths.ts';
import { listRuns } from '../../reports/runs-list.ts';
import { staleLatest } from './runs.ts';
import { writeRunsHtml } from '../../reports/runs-html.ts';

const command: Command = {
  name: 'runs html',
  summary: 'Write runs/index.html (one row per run, with its timeline) and each run\'s report.html',
  description: `Writes, under the runs folder:
  index.html          one row per run, newest first: the timeline as a thumbnail, run id,
                      campaign, engine, seed, revision, verdict, start and duration, events
                      produced and committed, the counters raised, the first finding (or,
                      for a run that is not a PASS and has no findings, its first reason)
  <id>/report.html    the run's report.md rendered as HTML (with marked; raw HTML in the
                      Markdown is shown as text), linking back to index.html
A row links to its report.html; a run without report.md (killed before its report, or still
going) is listed without a link ('clink-qual report RUN_DIR' writes one from the evidence).
Every link is relative and nothing is loaded by script, so the page opens from the file
system with no server, and a copied runs folder keeps working. It leaves runs/latest as it
is (a run start sets it), saying when it is stale: 'clink-qual runs --repair-latest' repairs
it. Run it again after new runs: it rewrites every page.`,
  exitCodes: '0 written, 254 bad arguments (no such runs folder), 255 internal error.',
  options: {
    'runs-dir': { type: 'string', valueName: 'DIR', description: 'The runs folder (default: CLINK_QUAL_RUNS, else runs/ in the checkout)' },
  },
  examples: ['clink-qual runs html && xdg-open runs/index.html'],
  async run({ values }) {
    const root = (values['runs-dir'] as string | undefined) ?? runsDir();
    if (!existsSync(root)) throw new QualError('BAD_ARGUMENTS', `${root} does not exist: no runs yet ('clink-qual campaign run FILE' stores them there)`);
    const stale = staleLatest(root, listRuns(root)[0]?.id);
    if (stale) console.error(`runs html: ${stale}; 'clink-qual runs --repair-latest' points it at the newest`);
    const r = writeRunsHtml(root);
    console.log(`wrote ${r.index} (${r.runs} run${r.runs === 1 ? '' : 's'})`);
    console.log(`wrote ${r.reports.length} report.html${r.reports.length === 1 ? '' : ' files'}`);
    if (r.withoutReport.length) console.log(`without report.md (listed, not linked): ${r.withoutReport.join(', ')}`);
    console.log(`open file://${path.resolve(r.index)}`);
  },
};
export default command;
