/**
 * A run's id: made fresh, or given and checked (the run's folder itself is a RunStore,
 * lib/run-store.ts).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { QualError } from '../../lib/errors.ts';

/** A run id is one path segment of safe characters (it also names the topic and the bucket prefix). */
export const RUN_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * Refuses (BAD_ARGUMENTS, exit 254) a run id that is not one safe path segment (`../x`
 * would escape runs/) or that an earlier run already used: reusing it would append to the
 * old evidence and reuse the old topic and prefix.
 */
export function checkRunId(id: string, runsRoot: string): void {
  if (!RUN_ID_PATTERN.test(id) || id.includes('..')) {
    throw new QualError('BAD_ARGUMENTS', `--run-id '${id}': a run id is 1 to 128 characters of A-Z a-z 0-9 . _ -, starting with a letter or digit, without '..'`);
  }
  const dir = path.join(runsRoot, id);
  if (existsSync(dir)) throw new QualError('BAD_ARGUMENTS', `--run-id '${id}': ${dir} already exists; a run id is used once (its evidence, topic and prefix belong to that run)`);
}

/** A run id: <campaign>-<UTC yyyymmddThhmmss>-<4 hex>. */
export function newRunId(campaign: string, now = new Date()): string {
  const ts = now.toISOString().replace(/[-:]/g, '').replace(/\..*$/, '');
  const rand = Math.floor(Math.random() * 0x10000).toString(16).padStart(4, '0');
  return `${campaign.replace(/[^A-Za-z0-9_-]/g, '-')}-${ts}-${rand}`;
}
