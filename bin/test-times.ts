/**
 * Where the time of a `clink-qual test` run went (issue 31 item 3): each test file's wall
 * time as tap itself reports it, the slowest first, and the total, printed at the end of the
 * run so the next cut is visible.
 *
 * Two of tap's (21) own records, both per file:
 *  - its output (reporter `tap` in .taprc): each file is a top-level subtest ended by
 *    `ok N - <file> # time=<ms>ms` (`not ok` when it failed); a skipped file's line carries
 *    `# SKIP` and no time, which its subtest's own last `# time=` comment gives. That time is
 *    the file's tests only, measured inside its process: the start of node, the TypeScript
 *    loader and the imports are not in it. The run's own wall time is the last unindented
 *    `# time=` comment;
 *  - .tap/processinfo/<uuid>.json, which @tapjs/processinfo writes for every node process of
 *    the run (tap clears the folder when a run starts): a test file's process is a root
 *    (`root` is its own `uuid`) named by `externalID`, and `runtime` is its wall time in ms
 *    from its start to its exit, loading included.
 * The summary takes the process's runtime where there is one, and the output's time otherwise
 * (and says so): a tap run started inside a test (test/unit/bin/run-tests.test.ts runs the
 * tap fixtures) clears the folder, and the records of the files before it with it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fmtDuration } from '../reports/format.ts';

/** One test file's time, as tap reported it. */
export interface FileTime {
  file: string;
  ms: number;
  /** tap's verdict on the file: passed, failed (`not ok`), or skipped (`# SKIP`). */
  status: 'passed' | 'failed' | 'skipped';
  /** Where `ms` comes from: its process's record (start to exit), or the output's time (the file's tests only). */
  source?: 'process' | 'output';
}

/** `time=1871.13ms` or `time=2.5s` (tap-parser accepts both) → milliseconds; undefined otherwise. */
function timeOf(text: string): number | undefined {
  const m = /(?:^|\s)time=((?:[1-9]\d*|0)(?:\.\d+)?)(ms|s)\b/i.exec(text);
  if (!m) return undefined;
  return Number(m[1]) * (m[2]!.toLowerCase() === 's' ? 1000 : 1);
}

/**
 * Each test file's wall time from a tap run's output: its top-level test point, whose time
 * directive tap writes (or, for a skipped file, the last `# time=` its subtest printed). A
 * file whose point carries no time anywhere is left out.
 */
export function parseFileTimes(output: string): FileTime[] {
  const out: FileTime[] = [];
  let innerMs: number | undefined;
  for (const line of output.split(/\r?\n/)) {
    const inner = /^ {4}# (time=\S+)$/.exec(line);
    if (inner) {
      innerMs = timeOf(inner[1]!);
      continue;
    }
    if (/^# Subtest: /.test(line)) innerMs = undefined;
    const point = /^(not ok|ok) \d+ - (.*?)(?: # (.*))?$/.exec(line);
    if (!point) continue;
    const [, ok, file, directive = ''] = point;
    const ms = timeOf(directive) ?? innerMs;
    innerMs = undefined;
    if (ms === undefined) continue;
    out.push({ file: file!, ms, status: ok === 'not ok' ? 'failed' : /^SKIP\b/i.test(directive) ? 'skipped' : 'passed' });
  }
  return out;
}

/**
 * Each test file's process wall time (ms, by file) from a tap run's .tap/processinfo folder:
 * the root processes that name a file (`externalID`); the processes the tests start are not
 * roots and are left out, and so is any record that cannot be read. Empty when there is no
 * folder.
 */
export function readProcessTimes(dir: string): Map<string, number> {
  const out = new Map<string, number>();
  let names: string[] = [];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.json'));
  } catch {
    return out;
  }
  for (const name of names) {
    try {
      const info = JSON.parse(readFileSync(path.join(dir, name), 'utf8')) as { uuid?: string; root?: string; externalID?: string; runtime?: number };
      if (info.externalID && info.root === info.uuid && typeof info.runtime === 'number') out.set(info.externalID, info.runtime);
    } catch {
      /* a record being written or cut short: that file keeps the output's time */
    }
  }
  return out;
}

/** The files' times with each process's wall time (readProcessTimes) in place of the output's time where there is one. */
export function withProcessTimes(files: readonly FileTime[], processMs: ReadonlyMap<string, number>): FileTime[] {
  return files.map((f) => {
    const ms = processMs.get(f.file);
    return ms === undefined ? { ...f, source: 'output' } : { ...f, ms, source: 'process' };
  });
}

/** The whole tap run's wall time: its last unindented `# time=` comment (ms), or undefined when it printed none. */
export function parseRunTime(output: string): number | undefined {
  let ms: number | undefined;
  for (const m of output.matchAll(/^# (time=\S+)$/gm)) ms = timeOf(m[1]!) ?? ms;
  return ms;
}

/**
 * The closing summary of where the time went, as `# ` lines: the files' total and tap's own
 * wall time for its runs, then the `top` slowest files with their times (failed and skipped
 * ones marked), then how many files and how much time the list leaves out.
 */
export function formatTimeSummary(files: readonly FileTime[], tapWallMs: number | undefined, top = 15): string[] {
  if (!files.length) return [];
  const s = (ms: number) => fmtDuration(ms / 1000);
  const sorted = [...files].sort((a, b) => b.ms - a.ms || a.file.localeCompare(b.file));
  const total = files.reduce((n, f) => n + f.ms, 0);
  const shown = sorted.slice(0, top);
  const rest = sorted.slice(top);
  const width = Math.max(...shown.map((f) => s(f.ms).length));
  const bare = files.filter((f) => f.source === 'output').length;
  const basis = bare === 0 ? "each file's process, as tap recorded it" : bare === files.length ? "each file's tests, as tap timed them, without the start of node and the imports" : `each file's process, as tap recorded it; ${bare} without a record (marked "tests only"), timed without the start of node and the imports`;
  return [
    `# time: ${files.length} test file${files.length === 1 ? '' : 's'} took ${s(total)} in all (${basis}${tapWallMs !== undefined ? `; tap's runs took ${s(tapWallMs)} of wall time` : ''}); the slowest ${shown.length === files.length ? 'first' : `${shown.length}`}:`,
    ...shown.map((f) => {
      const marks = [f.status === 'passed' ? '' : f.status, f.source === 'output' && bare < files.length ? 'tests only' : ''].filter(Boolean);
      return `#   ${s(f.ms).padStart(width)}  ${f.file}${marks.length ? ` (${marks.join(', ')})` : ''}`;
    }),
    ...(rest.length ? [`#   and ${rest.length} more file${rest.length === 1 ? '' : 's'}, ${s(rest.reduce((n, f) => n + f.ms, 0))} in all`] : []),
  ];
}
