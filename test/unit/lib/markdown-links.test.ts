import t from 'tap';
import { mkdtempSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { brokenLinks, headingAnchors, headingSlug, markdownLinks } from '../../../lib/markdown-links.ts';
import { repoRoot } from '../../../lib/paths.ts';

// Issue 29 item 6: the README's sections moved (some into docs/maintainers.md); every link
// from README.md and docs/*.md to a file of the repository, and every anchor, must resolve.

t.test('README.md and every docs/*.md: each relative link names a file that exists, each anchor a heading', async (t) => {
  const files = [path.join(repoRoot, 'README.md'), ...readdirSync(path.join(repoRoot, 'docs')).filter((f) => f.endsWith('.md')).map((f) => path.join(repoRoot, 'docs', f))];
  t.ok(files.some((f) => f.endsWith(path.join('docs', 'maintainers.md'))), 'docs/maintainers.md is among them');
  let links = 0;
  for (const f of files) {
    const { readFileSync } = await import('node:fs');
    links += markdownLinks(readFileSync(f, 'utf8')).length;
    const broken = brokenLinks(f);
    t.same(broken.map((b) => `${path.relative(repoRoot, b.file)}:${b.line}: ${b.target}: ${b.problem}`), [], path.relative(repoRoot, f));
  }
  t.ok(links > 50, `${links} links checked`);
});

t.test('the README links to docs/maintainers.md, and the maintainer material is there, not in the README', async (t) => {
  const { readFileSync } = await import('node:fs');
  const readme = readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
  const maint = readFileSync(path.join(repoRoot, 'docs', 'maintainers.md'), 'utf8');
  t.ok(markdownLinks(readme).some((l) => l.target.startsWith('docs/maintainers.md')));
  for (const moved of ['FAKE_CRASH', 'CLINK_QUAL_SHRINK_CLI', 'CLINK_QUAL_RUNS_SCREENSHOT', '**The scale curve**', '**Finding F-1.**', 'pseudo-version']) {
    t.notOk(readme.includes(moved), `${moved} is not in the README`);
    t.ok(maint.includes(moved), `${moved} is in docs/maintainers.md`);
  }
  const twoCommands = readme.slice(readme.indexOf('## Two commands'), readme.indexOf('\n## ', readme.indexOf('## Two commands') + 3));
  const sh = /```sh\n([\s\S]*?)```/.exec(twoCommands)?.[1] ?? '';
  t.same(sh.split('\n').filter(Boolean).map((l) => l.split('#')[0]!.trim()), ['./clink-qual smoke', './clink-qual test'], 'two commands, and only two');
});

t.test('a missing file, a missing anchor and a link in code are told apart', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cq-links-'));
  mkdirSync(path.join(dir, 'docs'));
  writeFileSync(path.join(dir, 'docs', 'b.md'), '# B\n\n## Its part, and more\n');
  writeFileSync(
    path.join(dir, 'a.md'),
    '# A\n\n[ok](docs/b.md#its-part-and-more) [self](#a) [web](https://example.org/x)\n[gone](docs/c.md) [bad anchor](docs/b.md#nope)\n`[code](nowhere.md)`\n```\n[fenced](nowhere.md)\n```\n![img](docs/)\n',
  );
  t.same(
    brokenLinks(path.join(dir, 'a.md')).map((b) => `${b.line} ${b.target} ${b.problem}`),
    ['4 docs/c.md no such file: docs/c.md', "4 docs/b.md#nope no heading '#nope' in b.md"],
  );
  t.equal(headingSlug("Benchmarks' figures"), 'benchmarks-figures');
  t.equal(headingSlug('What is pinned, and why'), 'what-is-pinned-and-why');
  t.same([...headingAnchors('# X\n## X\n```\n# not a heading\n```\n')], ['x', 'x-1']);
});
