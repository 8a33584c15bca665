import t, { type Test } from 'tap';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// Issue 29 item 3, through the CLI: wrong-shaped or non-regular run evidence, a runs/latest
// that is a directory and a --runs-dir that is a file end with a clear message (or exit
// 254), never an internal error (255); bounded in CPU time and memory like the campaign probes.
const repo = path.join(import.meta.dirname, '../../..');
const cli = path.join(repo, 'bin', 'clink-qual.ts');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'cq-evidence-bounds-'));

function run(args: string[]) {
  const timeFile = path.join(tmp, `time-${process.hrtime.bigint()}`);
  const r = spawnSync('/usr/bin/time', ['-f', '%M %U %S', '-o', timeFile, process.execPath, cli, ...args], { cwd: repo, encoding: 'utf8', timeout: 60_000 });
  const [rss, user, sys] = readFileSync(timeFile, 'utf8').trim().split('\n').pop()!.split(' ').map(Number);
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, cpuMs: Math.round((user! + sys!) * 1000), rssKB: rss! };
}

function bounded(t: Test, r: ReturnType<typeof run>) {
  t.not(r.status, 255, `no internal error: ${r.stderr}`);
  t.notMatch(r.stderr, /internal error/);
  t.ok(r.cpuMs < 5000, `within 5 s of CPU (${r.cpuMs} ms)`);
  t.ok(r.rssKB < 300 * 1024, `under 300 MB (${Math.round(r.rssKB / 1024)} MB)`);
}

function runDir(name: string): string {
  const dir = path.join(tmp, name);
  cpSync(path.join(repo, 'test/fixtures/run-pass'), dir, { recursive: true });
  return dir;
}

t.test('report: a wrong-shaped verdict.json or provenance.json is reported as unreadable evidence, not a crash', async (t) => {
  for (const [file, text, why] of [
    ['verdict.json', '[1, 2]', 'verdict.json: wrong shape: not a JSON object (found a list)'],
    ['verdict.json', '{"verdict": "PASS", "recount": "x"}', 'verdict.json: wrong shape: recount is not an object of counters'],
    ['provenance.json', '"x"', 'provenance.json: wrong shape: not a JSON object (found string)'],
    ['provenance.json', '{"engine": {}, "rig": {"kind": "local", "hosts": 3}, "components": []}', 'provenance.json: wrong shape: "rig" is not { kind, hosts: [...] }'],
  ] as const) {
    const dir = runDir(`shape-${file}-${text.length}`);
    writeFileSync(path.join(dir, file), text);
    const r = run(['report', dir]);
    bounded(t, r);
    t.ok(readFileSync(path.join(dir, 'report.md'), 'utf8').includes(why), `the report says: ${why}`);
  }
});

t.test('report: a samples.jsonl that is a FIFO is refused (254); a verdict.json that is /dev/zero is unreadable evidence', async (t) => {
  const dir = runDir('fifo');
  rmSync(path.join(dir, 'samples.jsonl'));
  t.equal(spawnSync('mkfifo', [path.join(dir, 'samples.jsonl')]).status, 0);
  const r = run(['report', dir]);
  bounded(t, r);
  t.equal(r.status, 254, r.stderr);
  t.match(r.stderr, /samples\.jsonl is a FIFO \(named pipe\): only a regular file is read/);
  const zero = runDir('zero');
  rmSync(path.join(zero, 'verdict.json'));
  symlinkSync('/dev/zero', path.join(zero, 'verdict.json'));
  const z = run(['report', zero]);
  bounded(t, z);
  t.ok(readFileSync(path.join(zero, 'report.md'), 'utf8').includes('verdict.json: run evidence'), 'verdict.json is unreadable evidence');
});

t.test('runs: a runs/latest that is a directory is left alone and said; a --runs-dir that is a file is exit 254', async (t) => {
  const root = path.join(tmp, 'runs');
  mkdirSync(root);
  cpSync(path.join(repo, 'test/fixtures/run-pass'), path.join(root, 'a'), { recursive: true });
  mkdirSync(path.join(root, 'latest'));
  const r = run(['runs', '--runs-dir', root]);
  bounded(t, r);
  t.equal(r.status, 0, r.stderr);
  t.match(r.stderr, /runs: .*latest exists and is not a symlink; left alone/);
  t.match(r.stdout, /quick/);
  const h = run(['runs', 'html', '--runs-dir', root]);
  bounded(t, h);
  t.equal(h.status, 0, h.stderr);
  t.match(h.stderr, /runs html: .*latest exists and is not a symlink; left alone/, 'runs html says so too');
  t.ok(lstatSync(path.join(root, 'latest')).isDirectory(), 'and leaves the directory as it was');
  t.ok(existsSync(path.join(root, 'a', 'report.html')), 'the run is still rendered');
  const f = path.join(tmp, 'a-file');
  writeFileSync(f, '');
  const bad = run(['runs', '--runs-dir', f]);
  bounded(t, bad);
  t.equal(bad.status, 254);
  t.match(bad.stderr, /--runs-dir: .*a-file is not a directory/);
});
