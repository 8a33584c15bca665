/**
 * The runs page in a real headless browser: Debian's chromium (installed by
 * rig/install-browser.ts when missing, as root), driven by playwright-core over file://,
 * the way a user opens runs/index.html, with no server.
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { ensureChromium } from '../../../rig/install-browser.ts';
import { renderReportHtml } from '../../../reports/runs-html.ts';
import { FIXTURE_RUNS, makeRunsRoot } from '../../helpers/runs-root.ts';

const repo = path.join(import.meta.dirname, '..', '..', '..');
const cli = path.join(repo, 'bin', 'clink-qual.ts');
const pinned = path.join(repo, 'node_modules', '.bin', 'node');
const node = existsSync(pinned) ? pinned : process.execPath;
const { pass, fail, aborted } = FIXTURE_RUNS;
/** A fourth run, killed before its report: listed, not linked. */
const bare = 'quick-20260821-130000';
const SCREENSHOT = process.env.CLINK_QUAL_RUNS_SCREENSHOT ?? path.join(os.tmpdir(), 'clink-qual-runs-index.png');

t.test('report.html: Markdown to HTML, raw HTML in the report shown as text', async (t) => {
  const html = renderReportHtml('# r — FAIL\n\n| a | b |\n|---|---|\n| `x` | <script>alert(1)</script> |\n\n![t](timeline.svg)\n', 'r');
  t.match(html, /<title>r — FAIL<\/title>/);
  t.match(html, /<table>[\s\S]*<td><code>x<\/code><\/td>/);
  t.match(html, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
  t.notMatch(html, /<script>/, 'no markup from the report text');
  t.match(html, /<img src="timeline.svg" alt="t">/);
  t.match(html, /<a href="\.\.\/index\.html">/);
});

t.test('runs html, opened from the file system in headless Chromium', async (t) => {
  const root = makeRunsRoot('cq-runs-html-');
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  cpSync(aborted.dir, path.join(root, bare), { recursive: true });
  for (const f of ['report.md', 'timeline.svg', 'junit.xml']) rmSync(path.join(root, bare, f));

  const r = spawnSync(node, [cli, 'runs', 'html', '--runs-dir', root], { cwd: repo, encoding: 'utf8' });
  t.equal(r.status, 0, r.stderr);
  t.match(r.stdout, `wrote ${path.join(root, 'index.html')} (4 runs)`);
  t.match(r.stdout, 'wrote 3 report.html files');
  t.match(r.stdout, `without report.md (listed, not linked): ${bare}`);
  for (const x of [pass, fail, aborted]) t.ok(existsSync(path.join(root, x.id, 'report.html')), `${x.id}/report.html`);
  const index = readFileSync(path.join(root, 'index.html'), 'utf8');
  t.notMatch(index, /<script|fetch\(|https?:\/\//, 'no script, nothing fetched, no absolute URL');

  const t0 = Date.now();
  const executablePath = ensureChromium((l) => t.comment(l));
  t.comment(`chromium: ${executablePath} (${((Date.now() - t0) / 1000).toFixed(1)} s to make sure it is installed)`);
  let browser: Browser | undefined;
  t.teardown(async () => browser?.close());
  browser = await chromium.launch({ executablePath, args: ['--no-sandbox', '--disable-dev-shm-usage'], timeout: 60_000 });
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const failed: string[] = [];
  page.on('pageerror', (e) => failed.push(`page error: ${e.message}`));
  page.on('requestfailed', (q) => failed.push(`${q.url()}: ${q.failure()?.errorText}`));
  page.on('console', (m) => {
    if (m.type() === 'error') failed.push(`console: ${m.text()}`);
  });
  const indexUrl = pathToFileURL(path.join(root, 'index.html')).href;
  await page.goto(indexUrl, { waitUntil: 'load' });

  t.equal(await page.title(), 'clink-qual runs');
  const rows = page.locator('#runs tbody tr');
  t.equal(await rows.count(), 4, 'one row per run');
  t.same(await page.locator('#runs tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-run'))), [bare, aborted.id, fail.id, pass.id], 'newest first');
  t.same(await page.locator('#runs tbody .verdict').allInnerTexts(), ['NO VERDICT', 'NO VERDICT', 'FAIL', 'PASS'], 'the verdicts as shown');
  const failRow = page.locator(`tr[data-run="${fail.id}"]`);
  t.match(await failRow.innerText(), /duplicates 3/, "the FAIL row's counters");
  t.match(await failRow.innerText(), /reason 1 of 4:\s*the recount found 3 duplicates/, 'and its first reason (the fixture has no findings.jsonl)');
  t.match(await page.locator(`tr[data-run="${pass.id}"]`).innerText(), /none raised/);
  t.match(await page.locator(`tr[data-run="${bare}"]`).innerText(), /no timeline[\s\S]*\(no report\.md\)/);
  t.equal(await page.locator(`tr[data-run="${bare}"] a`).count(), 0, 'a run without report.md is not linked');
  const verdictColours = await page.locator('#runs tbody .verdict').evaluateAll((els) => els.map((e) => getComputedStyle(e).backgroundColor));
  t.not(verdictColours[2], verdictColours[3], 'FAIL and PASS are told apart by colour too');

  // Every link resolves to a file that exists beside the page.
  const hrefs = await page.locator('#runs a').evaluateAll((as) => as.map((a) => (a as HTMLAnchorElement).href));
  t.equal(hrefs.length, 6, 'thumbnail and run id, for each of the three runs with a report');
  for (const h of hrefs) {
    t.match(h, /^file:\/\//);
    t.ok(existsSync(fileURLToPath(h)), `link target exists: ${path.relative(root, fileURLToPath(h))}`);
  }
  // The thumbnails loaded (a broken image has naturalWidth 0).
  const imgs = await page.locator('#runs td.thumb img').evaluateAll((is) => is.map((i) => ({ src: (i as HTMLImageElement).src, complete: (i as HTMLImageElement).complete, w: (i as HTMLImageElement).naturalWidth, shown: (i as HTMLImageElement).width })));
  t.equal(imgs.length, 3);
  for (const i of imgs) {
    t.ok(i.complete && i.w > 0, `thumbnail loaded: ${path.relative(root, fileURLToPath(i.src))} naturalWidth ${i.w}`);
    t.equal(i.shown, 280, 'shown as a 280 px thumbnail');
  }

  mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
  await page.screenshot({ path: SCREENSHOT, fullPage: true });
  const png = readFileSync(SCREENSHOT);
  t.same([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'a PNG');
  t.equal(png.readUInt32BE(16), 1400, 'as wide as the viewport');
  t.ok(statSync(SCREENSHOT).size > 20_000, `screenshot ${SCREENSHOT}: ${statSync(SCREENSHOT).size} bytes`);

  // Follow the FAIL run's link: its report, rendered, with its timeline and a way back.
  await failRow.locator('td.run a').click();
  await page.waitForLoadState('load');
  t.equal(page.url(), pathToFileURL(path.join(root, fail.id, 'report.html')).href);
  t.match(await page.locator('h1').innerText(), /— FAIL$/);
  t.ok((await page.locator('main table').count()) > 3, "the report's tables render as tables");
  t.match(await page.locator('main').innerText(), /the recount found 3 duplicates/);
  const timeline = await page.locator('main img[src="timeline.svg"]').evaluate((i) => (i as HTMLImageElement).naturalWidth);
  t.equal(timeline, 1200, "the report's timeline.svg loaded at its own width");
  await page.locator('nav a', { hasText: 'all runs' }).click();
  await page.waitForLoadState('load');
  t.equal(page.url(), indexUrl, 'back to the index');
  t.same(failed, [], 'no request failed, no console error');
});

