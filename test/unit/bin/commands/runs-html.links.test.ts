import t from 'tap';
import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// Issue 29 item 3, through the CLI: `runs html` renders report.md with marked; a link or an
// image whose scheme could run script (javascript:, data:, vbscript:, however spelled) must
// not reach report.html, while relative and http(s) links stay.
const repo = path.join(import.meta.dirname, '../../../..');
const cli = path.join(repo, 'bin', 'clink-qual.ts');

t.test('runs html: javascript:, data: and vbscript: links and images in report.md are neutralised', async (t) => {
  const root = path.join(mkdtempSync(path.join(os.tmpdir(), 'cq-runs-html-links-')), 'runs');
  mkdirSync(root);
  const run = path.join(root, 'quick-20260821-113000');
  cpSync(path.join(repo, 'test/fixtures/run-pass'), run, { recursive: true });
  const evil = ['[a](javascript:alert(1))', '[b](JaVaScRiPt:alert(1))', '[c](java&#x09;script:alert(1))', '[d](data:text/html;base64,PHNjcmlwdD4=)', '![e](vbscript:msgbox)', '[f](&#106;avascript:alert(1))', '[r][x]\n\n[x]: javascript:alert(2)', '<javascript:alert(3)>'];
  appendFileSync(path.join(run, 'report.md'), `\n\n${evil.join('\n\n')}\n\n[kept](timeline.svg) [kept too](https://example.org/x)\n`);
  const r = spawnSync(process.execPath, [cli, 'runs', 'html', '--runs-dir', root], { cwd: repo, encoding: 'utf8', timeout: 60_000 });
  t.equal(r.status, 0, r.stderr);
  const html = readFileSync(path.join(run, 'report.html'), 'utf8');
  const hrefs = [...html.matchAll(/\b(?:href|src)="([^"]*)"/g)].map((m) => m[1]!);
  t.same(hrefs.filter((h) => /^\s*(javascript|data|vbscript|java&#)/i.test(h) || /script:/i.test(h)), [], 'no href or src can run script');
  t.equal(hrefs.filter((h) => h === '#unsafe-link-removed').length, evil.length, 'each unsafe link or image points nowhere');
  t.ok(hrefs.includes('timeline.svg') && hrefs.includes('https://example.org/x'), 'relative and https links are kept');
});
