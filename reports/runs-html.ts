/**
 * The static runs page: runs/index.html, one row per stored run (verdict, counters, the
 * timeline as a thumbnail), each row linking to its report rendered as HTML
 * (runs/<id>/report.html, written beside report.md with `marked`).
 *
 * Everything is a relative link to a file beside it and nothing is fetched by script, so
 * the page opens from the file system (file://) with no server, and a runs/ folder copied
 * elsewhere keeps working. Raw HTML inside report.md is escaped, not passed through:
 * report text quotes logs and error messages, which must not become markup; a link or
 * image whose scheme is not http, https or mailto (javascript:, data:, vbscript:) is
 * pointed at #unsafe-link-removed.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Marked } from 'marked';
import { COUNTER_NAMES } from '../lib/evidence.ts';
import { countersText, engineText, formatDuration, listRuns, revisionText, verdictText, type RunListing } from './runs-list.ts';

export function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** A path segment for an href: run ids are [A-Za-z0-9._-], but older folders may hold anything. */
const seg = (s: string) => encodeURIComponent(s);

/** Schemes a link or image in report.html may use; any other (javascript:, data:, vbscript:, ...) is neutralised. */
const SAFE_SCHEMES = ['http', 'https', 'mailto'];

/**
 * Whether an href is safe to keep: a relative path or #anchor, or one of SAFE_SCHEMES.
 * Decided on the href as a browser reads it: character references decoded, and the
 * whitespace and control characters browsers ignore inside a scheme removed
 * (`java&#x09;script:`, ` JavaScript:` are both javascript:).
 */
export function safeHref(href: string): boolean {
  const decoded = href
    .replace(/&#x([0-9a-f]+);?/gi, (_, h: string) => String.fromCodePoint(parseInt(h, 16) % 0x110000))
    .replace(/&#(\d+);?/g, (_, d: string) => String.fromCodePoint(Number(d) % 0x110000))
    .replace(/&(tab|newline|colon);/gi, (_, n: string) => ({ tab: '\t', newline: '\n', colon: ':' })[n.toLowerCase()]!)
    // eslint-disable-next-line no-control-regex
    .replace(/[\x00-\x20\x7f]/g, '');
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(decoded);
  return !scheme || SAFE_SCHEMES.includes(scheme[1]!.toLowerCase());
}

const markdown = new Marked({ gfm: true });
markdown.use({
  renderer: { html: (token) => escapeHtml(token.text) },
  // A link or image whose scheme could run script (javascript:, data:, vbscript:) points nowhere.
  walkTokens: (token) => {
    if ((token.type === 'link' || token.type === 'image') && !safeHref(token.href)) token.href = '#unsafe-link-removed';
  },
});

const REPORT_CSS = `
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1f2328; margin: 0; background: #f6f8fa; }
nav { padding: 10px 24px; background: #24292f; } nav a { color: #fff; text-decoration: none; }
main { max-width: 1100px; margin: 0 auto; padding: 8px 32px 48px; background: #fff; }
h1 { font-size: 1.7em; border-bottom: 1px solid #d0d7de; padding-bottom: .3em; }
h2 { font-size: 1.35em; border-bottom: 1px solid #d0d7de; padding-bottom: .3em; margin-top: 1.6em; }
table { border-collapse: collapse; margin: 1em 0; display: block; overflow-x: auto; }
th, td { border: 1px solid #d0d7de; padding: 4px 10px; text-align: left; vertical-align: top; }
tr:nth-child(2n) td { background: #f6f8fa; }
code { font: 0.88em ui-monospace, SFMono-Regular, Menlo, monospace; background: #eff1f3; padding: .1em .3em; border-radius: 4px; }
pre { background: #f6f8fa; padding: 12px; overflow-x: auto; } pre code { background: none; padding: 0; }
img { max-width: 100%; border: 1px solid #d0d7de; }
`;

/** A standalone page's head, its stylesheet inline (the pages open from the file system). */
function htmlHead(title: string, css: string): string[] {
  return ['<!doctype html>', '<html lang="en">', '<head>', '<meta charset="utf-8">', '<meta name="viewport" content="width=device-width, initial-scale=1">', `<title>${escapeHtml(title)}</title>`, `<style>${css}</style>`, '</head>'];
}

/** A run's report.md as a standalone HTML page (links relative to the run directory, as in the Markdown). */
export function renderReportHtml(markdownText: string, runId: string): string {
  const body = markdown.parse(markdownText, { async: false });
  const title = /^# (.+)$/m.exec(markdownText)?.[1] ?? `${runId}: report`;
  return [
    ...htmlHead(title, REPORT_CSS),
    '<body>',
    `<nav><a href="../index.html">&larr; all runs</a> &nbsp;·&nbsp; <a href="report.md">report.md</a></nav>`,
    '<main>',
    body,
    '</main>',
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

/** Writes <run>/report.html from <run>/report.md; returns its path, or null when the run has no report.md. */
export function writeReportHtml(run: RunListing): string | null {
  if (!run.report) return null;
  const md = readFileSync(path.join(run.dir, run.report), 'utf8');
  const out = path.join(run.dir, 'report.html');
  writeAtomic(out, renderReportHtml(md, run.id));
  return out;
}

function writeAtomic(file: string, text: string): void {
  writeFileSync(`${file}.tmp`, text);
  renameSync(`${file}.tmp`, file);
}

const INDEX_CSS = `
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1f2328; margin: 0; background: #f6f8fa; }
header { padding: 14px 24px; background: #24292f; color: #fff; }
header h1 { margin: 0; font-size: 20px; } header p { margin: 4px 0 0; color: #c9d1d9; font-size: 13px; }
main { padding: 16px 24px 40px; }
table { border-collapse: collapse; background: #fff; width: 100%; box-shadow: 0 1px 2px rgba(0,0,0,.08); }
th { text-align: left; font-size: 12px; text-transform: uppercase; letter-spacing: .04em; color: #57606a; background: #f6f8fa; padding: 8px 10px; border-bottom: 1px solid #d0d7de; }
td { padding: 8px 10px; border-bottom: 1px solid #e6e9ec; vertical-align: top; }
td.thumb { width: 290px; } td.thumb img { width: 280px; height: auto; display: block; border: 1px solid #d0d7de; background: #fff; }
td.run { min-width: 15em; } td.run a { font-weight: 600; color: #0969da; text-decoration: none; overflow-wrap: anywhere; } td.run a:hover { text-decoration: underline; }
.meta { color: #57606a; font-size: 12px; margin-top: 4px; } .meta code { font-size: 12px; }
.verdict { display: inline-block; padding: 2px 8px; border-radius: 12px; font-weight: 700; font-size: 12px; white-space: nowrap; color: #fff; }
.v-pass { background: #1a7f37; } .v-fail, .v-gate-failed { background: #cf222e; } .v-aborted, .v-unknown { background: #9a6700; } .v-none { background: #6e7781; }
.nowrap, .counters { white-space: nowrap; } .counters .raised { color: #cf222e; font-weight: 600; }
.finding { min-width: 16em; max-width: 420px; font-size: 12px; color: #1f2328; overflow-wrap: anywhere; }
.none { color: #8c959f; }
`;

function verdictClass(r: RunListing): string {
  return `v-${(r.verdict ?? 'none').toLowerCase().replace(/[^a-z]+/g, '-')}`;
}

function clip(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, n - 1)}…`;
}

function row(r: RunListing, hasHtml: boolean): string {
  const id = escapeHtml(r.id);
  const href = hasHtml ? `${seg(r.id)}/report.html` : null;
  const thumb = r.timeline
    ? `${href ? `<a href="${href}">` : ''}<img src="${seg(r.id)}/${seg(r.timeline)}" alt="timeline of ${id}" loading="eager">${href ? '</a>' : ''}`
    : '<span class="none">no timeline</span>';
  const events = r.produced !== null ? `${r.produced.toLocaleString('en-US')} produced<br>${(r.committedDistinct ?? 0).toLocaleString('en-US')} committed` : '<span class="none">—</span>';
  const raised = r.counters ? COUNTER_NAMES.filter((n) => r.counters![n] > 0) : [];
  const counters = !r.counters ? '<span class="none">no verdict</span>' : raised.length ? `<span class="raised">${escapeHtml(countersText(r.counters))}</span>` : 'none raised';
  // Clipped on the page (findings quote object keys), whole in the tooltip and the report.
  const finding = r.firstFinding
    ? `<span title="${escapeHtml(r.firstFinding)}">${escapeHtml(clip(r.firstFinding, 160))}</span>`
    : r.verdict && r.verdict !== 'PASS' && r.reasons[0]
      ? `<span class="none">reason${r.reasons.length > 1 ? ` 1 of ${r.reasons.length}` : ''}:</span> <span title="${escapeHtml(r.reasons[0])}">${escapeHtml(clip(r.reasons[0], 160))}</span>`
      : '<span class="none">—</span>';
  const ended = r.endedFrom === 'last evidence' ? ' <span class="none" title="no verdict.json: to the last sample or phase mark">(so far)</span>' : '';
  return [
    `<tr data-run="${id}" data-verdict="${escapeHtml(verdictText(r))}">`,
    `<td class="thumb">${thumb}</td>`,
    `<td class="run">${href ? `<a href="${href}">${id}</a>` : `${id} <span class="none">(no report.md)</span>`}`,
    `<div class="meta">campaign <code>${escapeHtml(r.campaign ?? '—')}</code> · engine <code>${escapeHtml(engineText(r))}</code></div>`,
    `<div class="meta">seed <code>${escapeHtml(r.seed ?? '—')}</code> · revision <code>${escapeHtml(revisionText(r))}</code></div></td>`,
    `<td><span class="verdict ${verdictClass(r)}">${escapeHtml(verdictText(r))}</span></td>`,
    `<td class="nowrap">${r.startedAt ? escapeHtml(r.startedAt.replace(/\.\d+Z$|Z$/, '')).replace('T', '<br>') + ' UTC' : '—'}<div class="meta">${escapeHtml(formatDuration(r.durationS))}${ended}</div></td>`,
    `<td class="nowrap">${events}</td>`,
    `<td class="counters">${counters}</td>`,
    `<td class="finding">${finding}</td>`,
    '</tr>',
  ].join('\n');
}

/** The index page for these runs (newest first); `withHtml` is the set of run ids whose report.html exists. */
export function renderRunsIndex(runs: RunListing[], withHtml: ReadonlySet<string>, generatedAt = new Date()): string {
  const counts = new Map<string, number>();
  for (const r of runs) counts.set(verdictText(r), (counts.get(verdictText(r)) ?? 0) + 1);
  const summary = [...counts].map(([v, n]) => `${n} ${v}`).join(', ');
  return [
    ...htmlHead('clink-qual runs', INDEX_CSS),
    '<body>',
    '<header>',
    '<h1>clink-qual runs</h1>',
    `<p>${runs.length} run${runs.length === 1 ? '' : 's'}${summary ? ` (${escapeHtml(summary)})` : ''}, newest first · written ${escapeHtml(generatedAt.toISOString().replace(/\.\d+Z$/, 'Z'))} by <code>clink-qual runs html</code></p>`,
    '</header>',
    '<main>',
    runs.length
      ? [
          '<table id="runs">',
          '<thead><tr><th>Timeline</th><th>Run</th><th>Verdict</th><th>Started · duration</th><th>Events</th><th>Counters</th><th>First finding</th></tr></thead>',
          '<tbody>',
          ...runs.map((r) => row(r, withHtml.has(r.id))),
          '</tbody>',
          '</table>',
        ].join('\n')
      : '<p>No runs yet: <code>clink-qual campaign run campaigns/quick.yaml</code> stores one here.</p>',
    '</main>',
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

export interface RunsHtmlResult {
  index: string;
  runs: number;
  reports: string[];
  /** Runs listed without a report.html because they have no report.md. */
  withoutReport: string[];
}

/** Writes every run's report.html and root/index.html. */
export function writeRunsHtml(root: string, generatedAt = new Date()): RunsHtmlResult {
  const runs = listRuns(root);
  const reports: string[] = [];
  const withHtml = new Set<string>();
  const withoutReport: string[] = [];
  for (const r of runs) {
    const out = writeReportHtml(r);
    if (out) {
      reports.push(out);
      withHtml.add(r.id);
    } else if (existsSync(path.join(r.dir, 'report.html'))) withHtml.add(r.id);
    else withoutReport.push(r.id);
  }
  const index = path.join(root, 'index.html');
  writeAtomic(index, renderRunsIndex(runs, withHtml, generatedAt));
  return { index, runs: runs.length, reports, withoutReport };
}
