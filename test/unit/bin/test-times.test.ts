/**
 * Where the test run's time went (bin/test-times.ts), against a captured tap run of four
 * small files (test/fixtures/tap/four-files.tap.txt: two unit test files, the skipping
 * fixture and the crashing one) and the .tap/processinfo records that run left
 * (test/fixtures/tap/processinfo/, trimmed to the fields tap's processinfo records carry
 * that matter here).
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { formatTimeSummary, parseFileTimes, parseRunTime, readProcessTimes, withProcessTimes, type FileTime } from '../../../bin/test-times.ts';
import { repoRoot } from '../../../lib/paths.ts';

const fixtures = path.join(repoRoot, 'test', 'fixtures', 'tap');
const captured = readFileSync(path.join(fixtures, 'four-files.tap.txt'), 'utf8');

t.test("the output's per-file times: each top-level point's time; a skipped file's from its subtest; failed and skipped marked", async (t) => {
  t.same(parseFileTimes(captured), [
    { file: 'test/fixtures/tap/crash.ts', ms: 7693.953, status: 'failed' },
    { file: 'test/fixtures/tap/skipped.ts', ms: 64.043, status: 'skipped' },
    { file: 'test/unit/campaigns/probe-text.test.ts', ms: 3520.568, status: 'passed' },
    { file: 'test/unit/findings/loopback-store.test.ts', ms: 557.223, status: 'passed' },
  ]);
  t.equal(parseRunTime(captured), 35721.087, "the run's own last unindented time, not a file's");
  t.same(parseFileTimes('TAP version 14\n1..1\n    ok 1 - inner # time=5ms\nok 1 - a.test.ts # time=2.5s\n'), [{ file: 'a.test.ts', ms: 2500, status: 'passed' }], 'seconds too; indented points are not files');
  t.equal(parseRunTime('TAP version 14\n    # time=3ms\n'), undefined, 'no top-level time: none');
});

t.test("the processes' wall times: root processes named by file, from .tap/processinfo", async (t) => {
  const times = readProcessTimes(path.join(fixtures, 'processinfo'));
  t.same(Object.fromEntries(times), {
    'test/fixtures/tap/skipped.ts': 4501.427085,
    'test/unit/campaigns/probe-text.test.ts': 15871.818614,
    'test/fixtures/tap/crash.ts': 6730.372264,
    'test/unit/findings/loopback-store.test.ts': 5283.781472,
  });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cq-processinfo-'));
  writeFileSync(path.join(dir, 'a.json'), JSON.stringify({ uuid: 'a', root: 'a', externalID: 'x.test.ts', runtime: 10 }));
  writeFileSync(path.join(dir, 'b.json'), JSON.stringify({ uuid: 'b', root: 'a', parent: 'a', externalID: null, runtime: 99 }));
  writeFileSync(path.join(dir, 'c.json'), '{"uuid": "c", "ro');
  mkdirSync(path.join(dir, 'd.json'));
  t.same(Object.fromEntries(readProcessTimes(dir)), { 'x.test.ts': 10 }, "a test's own child process, a torn record and an unreadable one are left out");
  t.same(readProcessTimes(path.join(dir, 'none')).size, 0, 'no folder: no times');
  const files = withProcessTimes(parseFileTimes(captured), times);
  t.same(files.map((f) => [f.ms, f.source]), [[6730.372264, 'process'], [4501.427085, 'process'], [15871.818614, 'process'], [5283.781472, 'process']], "the process's wall time replaces the output's");
  t.same(withProcessTimes([{ file: 'y.test.ts', ms: 7, status: 'passed' }], times), [{ file: 'y.test.ts', ms: 7, status: 'passed', source: 'output' }], "a file without a record keeps the output's time");
});

t.test('the summary: the slowest first, at most `top` of them, the rest and the total counted', async (t) => {
  const files = withProcessTimes(parseFileTimes(captured), readProcessTimes(path.join(fixtures, 'processinfo')));
  t.same(formatTimeSummary(files, parseRunTime(captured)), [
    "# time: 4 test files took 32 s in all (each file's process, as tap recorded it; tap's runs took 36 s of wall time); the slowest first:",
    '#    16 s  test/unit/campaigns/probe-text.test.ts',
    '#   6.7 s  test/fixtures/tap/crash.ts (failed)',
    '#   5.3 s  test/unit/findings/loopback-store.test.ts',
    '#   4.5 s  test/fixtures/tap/skipped.ts (skipped)',
  ]);
  const many: FileTime[] = Array.from({ length: 20 }, (_, i) => ({ file: `f${String(i).padStart(2, '0')}.test.ts`, ms: (i + 1) * 1000, status: 'passed' }));
  const lines = formatTimeSummary(many, undefined);
  t.equal(lines.length, 1 + 15 + 1, 'a header, the top 15, and a line for the rest');
  t.equal(lines[0], "# time: 20 test files took 3 min 30 s in all (each file's process, as tap recorded it); the slowest 15:");
  t.equal(lines[1], '#   20 s  f19.test.ts');
  t.equal(lines[15], '#    6 s  f05.test.ts');
  t.equal(lines[16], '#   and 5 more files, 15 s in all', 'the 5 fastest: 1 + 2 + 3 + 4 + 5 s');
  t.same(formatTimeSummary([], 10), [], 'no files: nothing printed');
  // A file without a process record (a nested tap run cleared .tap/processinfo): said, and marked.
  const mixed = withProcessTimes(parseFileTimes(captured), new Map([['test/unit/campaigns/probe-text.test.ts', 15871.818614]]));
  const m = formatTimeSummary(mixed, undefined, 2);
  t.equal(m[0], '# time: 4 test files took 24 s in all (each file\'s process, as tap recorded it; 3 without a record (marked "tests only"), timed without the start of node and the imports); the slowest 2:');
  t.same(m.slice(1), ['#    16 s  test/unit/campaigns/probe-text.test.ts', '#   7.7 s  test/fixtures/tap/crash.ts (failed, tests only)', '#   and 2 more files, 0.6 s in all']);
  const bare = formatTimeSummary(parseFileTimes(captured).map((f) => ({ ...f, source: 'output' as const })), undefined);
  t.match(bare[0], "(each file's tests, as tap timed them, without the start of node and the imports)");
  t.notMatch(bare.join('\n'), 'tests only', 'all alike: nothing to mark');
});
