/**
 * `publish RUN_DIR DEST_DIR`: large evidence gzipped, logs trimmed and gzipped, a manifest
 * of what the run held; the published folder checks (`report --check`) against the report
 * it was published with, and renders the same evidence as the run. DEST must be new or empty.
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import t from 'tap';
import { publishRun, trimLog } from '../../../../bin/commands/publish.ts';
import { storeLossSignature } from '../../../../reports/store-loss.ts';
import { repoRoot } from '../../../../lib/paths.ts';
import { readRunEvidence, type PublishedManifest } from '../../../../reports/evidence.ts';
import { writeReports } from '../../../../reports/report.ts';

const cli = (args: string[]) => spawnSync(process.execPath, [path.join(repoRoot, 'bin', 'clink-qual.ts'), ...args], { cwd: repoRoot, encoding: 'utf8', timeout: 60_000 });

/** A temporary directory holding a copy of the run-pass fixture (same name). */
function copyRunPass(t: { teardown(fn: () => void): void }): { tmp: string; run: string } {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'cq-publish-'));
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
  const run = path.join(tmp, 'run-pass');
  cpSync(path.join(repoRoot, 'test', 'fixtures', 'run-pass'), run, { recursive: true });
  return { tmp, run };
}

t.test("trimLog keeps every line the report reads (F-1's signature) between the head and the tail", async (t) => {
  const lines = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`);
  lines[14] = "2026-12-03T23:36:01Z ERROR S3Committer - Recovering commit failed for object k. Object does not exist and MultiPart Upload u is not valid.";
  const r = trimLog(lines.join('\n') + '\n', 3);
  const out = r.text.trimEnd().split('\n');
  t.ok(out.includes(lines[14]!), 'the signature line is kept');
  t.same(out.filter((l) => l.startsWith('[clink-qual publish:')), ['[clink-qual publish: 11 lines cut here, of 30]', '[clink-qual publish: 12 lines cut here, of 30]'], 'one marker on each side of it');
  t.equal(r.cut, 23, 'the cut count excludes the kept line');
  t.same(storeLossSignature([{ path: 'logs/w/x.log', text: r.text }]), storeLossSignature([{ path: 'logs/w/x.log', text: lines.join('\n') }]), 'the trimmed log shows the same signature as the whole one');
});

t.test('trimLog keeps the head and the tail and says how many lines it cut', async (t) => {
  const lines = Array.from({ length: 10 }, (_, i) => `line ${i + 1}`);
  t.same(trimLog(lines.join('\n') + '\n', 5), { text: lines.join('\n') + '\n', cut: 0 }, 'short enough: unchanged');
  const r = trimLog(lines.join('\n') + '\n', 2);
  t.equal(r.cut, 6);
  t.equal(r.text, 'line 1\nline 2\n[clink-qual publish: 6 lines cut here, of 10]\nline 9\nline 10\n');
  t.equal(trimLog(lines.join('\n'), 3).text.endsWith('line 10'), true, 'no trailing newline added');
});

t.test('publish then report --check: identical, with large files gzipped and logs trimmed', async (t) => {
  const { tmp, run } = copyRunPass(t);
  // a long log, so trimming has something to cut
  const log = path.join(run, 'logs', 'worker-1', 'worker.log');
  appendFileSync(log, Array.from({ length: 50 }, (_, i) => `extra ${i}`).join('\n') + '\n');
  writeReports(run); // the report's file table counts the longer log
  const dest = path.join(tmp, 'published', 'qual-x');
  const p = cli(['publish', run, dest, '--gzip-over', '10000', '--log-lines', '3']);
  t.equal(p.status, 0, p.stderr);
  for (const f of ['chaos.jsonl', 'ledger.jsonl', 'samples.jsonl', 'resources.jsonl']) {
    t.ok(existsSync(path.join(dest, f + '.gz')), `${f} gzipped`);
    t.notOk(existsSync(path.join(dest, f)), `${f} not also plain`);
    t.equal(gunzipSync(readFileSync(path.join(dest, f + '.gz'))).toString('utf8'), readFileSync(path.join(run, f), 'utf8'), `${f}.gz holds ${f}`);
  }
  for (const f of ['verdict.json', 'recount.json', 'checkpoints.jsonl', 'report.md', 'timeline.svg', 'junit.xml']) t.equal(readFileSync(path.join(dest, f), 'utf8'), readFileSync(path.join(run, f), 'utf8'), `${f} copied`);
  const trimmed = gunzipSync(readFileSync(path.join(dest, 'logs', 'worker-1', 'worker.log.gz'))).toString('utf8').split('\n');
  t.same(trimmed.slice(2), ['extra 0', '[clink-qual publish: 46 lines cut here, of 52]', 'extra 47', 'extra 48', 'extra 49', ''], 'head, cut line, tail');
  const m = JSON.parse(readFileSync(path.join(dest, 'published.json'), 'utf8')) as PublishedManifest;
  t.equal(m.dirName, 'run-pass', 'the run directory name is kept');
  t.match(m.files.find((f) => f.path === 'logs/worker-1/worker.log'), { stored: 'trimmed', as: 'logs/worker-1/worker.log.gz' });
  t.ok((m.files.find((f) => f.path === 'logs/worker-1/worker.log')?.linesCut ?? 0) > 0);
  t.match(m.files.find((f) => f.path === 'chaos.jsonl'), { stored: 'gzipped', size: readFileSync(path.join(run, 'chaos.jsonl')).length });

  const orig = readRunEvidence(run);
  const pub = readRunEvidence(dest);
  t.same(pub, orig, 'the published folder reads as the run did: evidence, directory name and file table');

  const c = cli(['report', '--check', dest]);
  t.equal(c.status, 0, c.stdout + c.stderr);
  t.match(c.stdout, /report\.md: identical\ntimeline\.svg: identical\njunit\.xml: identical\nREPRODUCED/);
});

t.test('report --check: 1 with a diff when the committed report differs, 254 naming missing evidence', async (t) => {
  const { tmp, run } = copyRunPass(t);
  const dest = path.join(tmp, 'pub');
  publishRun(run, dest, { gzipOver: 10_000 });
  const md = readFileSync(path.join(dest, 'report.md'), 'utf8');
  writeFileSync(path.join(dest, 'report.md'), md.replace('## Workload', '## Workload (edited by hand)'));
  const c = cli(['report', '--check', dest]);
  t.equal(c.status, 1);
  t.match(c.stdout, /report\.md: differs\n--- committed\/report\.md\n\+\+\+ rendered\/report\.md\n@@ -\d+,\d+ \+\d+,\d+ @@/);
  t.match(c.stdout, /^-## Workload \(edited by hand\)$/m);
  t.match(c.stdout, /^\+## Workload$/m);
  t.match(c.stdout, /timeline\.svg: identical/);
  t.match(c.stdout, /NOT REPRODUCED: 1 file differ/);
  rmSync(path.join(dest, 'chaos.jsonl.gz'));
  rmSync(path.join(dest, 'recount.json'));
  const m = cli(['report', '--check', dest]);
  t.equal(m.status, 254);
  t.match(m.stderr, /evidence is missing \(chaos\.jsonl, recount\.json\)/);
});

t.test('publish refuses a DEST that is not empty, a directory that is no run, and a published folder', async (t) => {
  const { tmp, run } = copyRunPass(t);
  const full = path.join(tmp, 'full');
  mkdirSync(full);
  writeFileSync(path.join(full, 'keep.txt'), 'mine\n');
  const r = cli(['publish', run, full]);
  t.equal(r.status, 254);
  t.match(r.stderr, /exists and is not an empty directory/);
  t.equal(readFileSync(path.join(full, 'keep.txt'), 'utf8'), 'mine\n', 'nothing written into it');
  const empty = path.join(tmp, 'empty');
  mkdirSync(empty);
  t.equal(cli(['publish', run, empty]).status, 0, 'an empty DEST is fine');
  const notRun = path.join(tmp, 'not-a-run');
  mkdirSync(notRun);
  writeFileSync(path.join(notRun, 'report.md'), '# x\n');
  const n = cli(['publish', notRun, path.join(tmp, 'dest2')]);
  t.equal(n.status, 254);
  t.match(n.stderr, /not a run directory/);
  t.notOk(existsSync(path.join(tmp, 'dest2')));
  const again = cli(['publish', empty, path.join(tmp, 'dest3')]);
  t.equal(again.status, 254);
  t.match(again.stderr, /itself a published folder/);
});
