/**
 * A runs folder for the `runs` tests, made of the committed fixture runs
 * (test/fixtures/run-pass, run-fail, run-aborted; test/fixtures/make-run-fixtures.ts) copied
 * under their run ids into a fresh temporary directory, beside things that are not runs.
 */
import { cpSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const FIXTURES = path.join(import.meta.dirname, '..', 'fixtures');

/** The fixture runs by their ids (the ids their provenance.json and verdict.json carry). */
export const FIXTURE_RUNS = {
  pass: { id: 'quick-20260821-101500', dir: path.join(FIXTURES, 'run-pass') },
  fail: { id: 'quick-20260821-113000', dir: path.join(FIXTURES, 'run-fail') },
  aborted: { id: 'quick-20260821-120000', dir: path.join(FIXTURES, 'run-aborted') },
} as const;

/** A temporary runs folder holding the three fixture runs, a kill table (a file) and a folder that is no run. */
export function makeRunsRoot(prefix = 'cq-runs-'): string {
  const root = mkdtempSync(path.join(os.tmpdir(), prefix));
  for (const r of Object.values(FIXTURE_RUNS)) cpSync(r.dir, path.join(root, r.id), { recursive: true });
  writeFileSync(path.join(root, 'mutants-2026-08-21T12-00-00-000Z.md'), '# kill table\n');
  mkdirSync(path.join(root, 'scratch'));
  writeFileSync(path.join(root, 'scratch', 'notes.txt'), 'not a run\n');
  return root;
}
