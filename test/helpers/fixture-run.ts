/**
 * A copy of a committed fixture run (test/fixtures/run-pass, run-fail, run-aborted:
 * test/fixtures/make-run-fixtures.ts) in a fresh temporary directory under the same
 * directory name, removed when the test ends: for tests that add evidence to a run and
 * render its report.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const FIXTURES = path.join(import.meta.dirname, '..', 'fixtures');

/** The copy's directory. */
export function copyFixtureRun(t: { teardown(fn: () => void): void }, name: string): string {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'clink-qual-fixture-run-'));
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
  const dir = path.join(tmp, name);
  cpSync(path.join(FIXTURES, name), dir, { recursive: true });
  return dir;
}
